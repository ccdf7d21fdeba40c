// Query evaluation and output formats.
#include "storage/query.hpp"

#include <csv.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"

namespace linsweep {
namespace {

[[noreturn]] void bad(const std::string& what) { throw StorageError(what, ExitCode::kBadInput); }

double parse_number(const std::string& column, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) bad("--where " + column + ": '" + text + "' is not a number");
  return v;
}

int compare_values(const Value& a, const Value& b) {
  if (a.index() == 2) {
    const auto& x = std::get<std::string>(a);
    const auto& y = std::get<std::string>(b);
    return x < y ? -1 : (y < x ? 1 : 0);
  }
  auto num = [](const Value& v) {
    return v.index() == 0 ? static_cast<double>(std::get<std::int64_t>(v)) : std::get<double>(v);
  };
  const double x = num(a), y = num(b);
  return x < y ? -1 : (y < x ? 1 : 0);
}

// Compares a cell to a text bound: <0, 0, >0.
int compare_to(const Value& v, const std::string& column, const std::string& text) {
  if (const auto* s = std::get_if<std::string>(&v)) return s->compare(text) < 0 ? -1 : (s->compare(text) > 0 ? 1 : 0);
  const double x = v.index() == 0 ? static_cast<double>(std::get<std::int64_t>(v)) : std::get<double>(v);
  const double y = parse_number(column, text);
  return x < y ? -1 : (y < x ? 1 : 0);
}

int require_column(const Table& t, const std::string& name) {
  const int i = t.column_index(name);
  if (i < 0) {
    std::string known;
    for (const auto& c : t.columns) known += (known.empty() ? "" : ", ") + c.name;
    bad("table '" + t.name + "' has no column '" + name + "' (columns: " + known + ")");
  }
  return i;
}

}  // namespace

Condition parse_condition(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) bad("--where '" + text + "': expected col=value or col=lo..hi");
  Condition c;
  c.column = text.substr(0, eq);
  const std::string rhs = text.substr(eq + 1);
  const auto dots = rhs.find("..");
  if (dots == std::string::npos) {
    c.equals = rhs;
  } else {
    if (rhs.size() == 2) bad("--where '" + text + "': a range needs at least one bound");
    if (dots > 0) c.low = rhs.substr(0, dots);
    if (dots + 2 < rhs.size()) c.high = rhs.substr(dots + 2);
  }
  return c;
}

Table run_query(const Table& table, const QueryOptions& options) {
  std::vector<std::pair<int, const Condition*>> conds;
  for (const auto& c : options.where) conds.emplace_back(require_column(table, c.column), &c);
  std::vector<const Row*> rows;
  for (const auto& row : table.rows) {
    bool keep = true;
    for (const auto& [i, c] : conds) {
      const Value& v = row[static_cast<std::size_t>(i)];
      if (c->equals) keep = keep && compare_to(v, c->column, *c->equals) == 0;
      if (c->low) keep = keep && compare_to(v, c->column, *c->low) >= 0;
      if (c->high) keep = keep && compare_to(v, c->column, *c->high) <= 0;
    }
    if (keep) rows.push_back(&row);
  }
  std::vector<std::pair<int, bool>> keys;  // column, descending
  for (const auto& s : options.sort) {
    const bool desc = !s.empty() && s[0] == '-';
    keys.emplace_back(require_column(table, desc ? s.substr(1) : s), desc);
  }
  std::stable_sort(rows.begin(), rows.end(), [&](const Row* a, const Row* b) {
    for (const auto& [i, desc] : keys) {
      const int c = compare_values((*a)[static_cast<std::size_t>(i)], (*b)[static_cast<std::size_t>(i)]);
      if (c != 0) return desc ? c > 0 : c < 0;
    }
    return false;
  });
  std::vector<int> cols;
  if (options.columns.empty()) {
    for (std::size_t i = 0; i < table.columns.size(); ++i) cols.push_back(static_cast<int>(i));
  } else {
    for (const auto& c : options.columns) cols.push_back(require_column(table, c));
  }
  Table out;
  out.name = table.name;
  for (int i : cols) out.columns.push_back(table.columns[static_cast<std::size_t>(i)]);
  for (const Row* r : rows) {
    Row row;
    for (int i : cols) row.push_back((*r)[static_cast<std::size_t>(i)]);
    out.rows.push_back(std::move(row));
  }
  return out;
}

TableFormat parse_table_format(const std::string& name) {
  if (name == "table") return TableFormat::kTable;
  if (name == "csv") return TableFormat::kCsv;
  if (name == "json") return TableFormat::kJson;
  if (name == "md") return TableFormat::kMarkdown;
  bad("--format '" + name + "' is unknown (table, csv, json, md)");
}

std::string csv_field(const std::string& value) {
  std::string out(value.size() * 2 + 2, '\0');
  const std::size_t n = csv_write(out.data(), out.size(), value.data(), value.size());
  out.resize(n);
  return out;
}

std::string format_table(const Table& t, TableFormat format) {
  std::string out;
  switch (format) {
    case TableFormat::kJson: {
      nlohmann::json rows = nlohmann::json::array();
      for (const auto& r : t.rows) {
        nlohmann::json o = nlohmann::json::object();
        for (std::size_t c = 0; c < t.columns.size(); ++c)
          std::visit([&](const auto& v) { o[t.columns[c].name] = v; }, r[c]);
        rows.push_back(std::move(o));
      }
      return rows.dump() + "\n";
    }
    case TableFormat::kCsv: {
      for (std::size_t c = 0; c < t.columns.size(); ++c) out += (c ? "," : "") + csv_field(t.columns[c].name);
      out += "\n";
      for (const auto& r : t.rows) {
        for (std::size_t c = 0; c < r.size(); ++c) out += (c ? "," : "") + csv_field(value_to_string(r[c], true));
        out += "\n";
      }
      return out;
    }
    case TableFormat::kMarkdown: {
      out += "|";
      for (const auto& c : t.columns) out += " " + c.name + " |";
      out += "\n|";
      for (const auto& c : t.columns) out += c.type == ColumnType::kString ? "---|" : "---:|";
      out += "\n";
      for (const auto& r : t.rows) {
        out += "|";
        for (const auto& v : r) {
          std::string s = value_to_string(v);
          std::string esc;
          for (char ch : s) esc += ch == '|' ? std::string("\\|") : std::string(1, ch);
          out += " " + esc + " |";
        }
        out += "\n";
      }
      return out;
    }
    case TableFormat::kTable: {
      std::vector<std::size_t> w(t.columns.size());
      std::vector<std::vector<std::string>> cells;
      for (std::size_t c = 0; c < t.columns.size(); ++c) w[c] = t.columns[c].name.size();
      for (const auto& r : t.rows) {
        std::vector<std::string> line;
        for (std::size_t c = 0; c < r.size(); ++c) {
          line.push_back(value_to_string(r[c]));
          w[c] = std::max(w[c], line.back().size());
        }
        cells.push_back(std::move(line));
      }
      for (std::size_t c = 0; c < t.columns.size(); ++c)
        out += fmt::format("{}{:<{}}", c ? "  " : "", t.columns[c].name, w[c]);
      out += "\n";
      for (const auto& line : cells) {
        for (std::size_t c = 0; c < line.size(); ++c) {
          const bool right = t.columns[c].type != ColumnType::kString;
          out += c ? "  " : "";
          out += right ? fmt::format("{:>{}}", line[c], w[c]) : fmt::format("{:<{}}", line[c], w[c]);
        }
        out += "\n";
      }
      out += fmt::format("({} row{})\n", t.rows.size(), t.rows.size() == 1 ? "" : "s");
      return out;
    }
  }
  return out;
}

}  // namespace linsweep
