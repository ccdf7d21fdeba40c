// Query evaluation and output formats.
#include "presentation/query.hpp"

#include <csv.h>
#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "common/enum_names.hpp"
#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "common/suggest.hpp"

namespace linsweep {
namespace {

[[noreturn]] void bad(const std::string& what) { throw StorageError(what, ExitCode::kBadInput); }

double as_number(const Value& v) {
  return v.index() == 0 ? static_cast<double>(std::get<std::int64_t>(v)) : std::get<double>(v);
}

// A total order within one column: strings bytewise, numbers numerically with NaN last (so
// that sorting a column with missing values is well defined).
int compare_values(const Value& a, const Value& b) {
  if (a.index() == 2) {
    const int c = std::get<std::string>(a).compare(std::get<std::string>(b));
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  const double x = as_number(a), y = as_number(b);
  const bool nx = std::isnan(x), ny = std::isnan(y);
  if (nx || ny) return nx == ny ? 0 : (nx ? 1 : -1);
  return x < y ? -1 : (y < x ? 1 : 0);
}

int require_column(const Table& t, const std::string& name, const std::string& context) {
  const int i = t.column_index(name);
  if (i < 0) {
    std::string known;
    std::vector<std::string> names;
    for (const auto& c : t.columns) known += (known.empty() ? "" : ", ") + c.name, names.push_back(c.name);
    bad(context + ": table '" + t.name + "' has no column '" + printable(name) + "'" + did_you_mean(name, names) +
        " (columns: " + known + ")");
  }
  return i;
}

// `raw` with every backslash escape resolved.
std::string unescape(const std::string& raw) {
  std::string out;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\\' && i + 1 < raw.size()) ++i;
    out += raw[i];
  }
  return out;
}

// The position of the first unescaped occurrence of `what` in `raw`, or npos.
std::size_t find_unescaped(const std::string& raw, const std::string& what) {
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\\') {
      ++i;
      continue;
    }
    if (raw.compare(i, what.size(), what) == 0) return i;
  }
  return std::string::npos;
}

bool has_unescaped_glob(const std::string& raw) {
  for (const char* m : {"*", "?", "["})
    if (find_unescaped(raw, m) != std::string::npos) return true;
  return false;
}

std::vector<std::string> split_items(const std::string& rhs) {
  std::vector<std::string> items(1);
  for (std::size_t i = 0; i < rhs.size(); ++i) {
    if (rhs[i] == '\\' && i + 1 < rhs.size()) {
      items.back() += rhs.substr(i, 2);
      ++i;
    } else if (rhs[i] == ',') {
      items.emplace_back();
    } else {
      items.back() += rhs[i];
    }
  }
  return items;
}

// A condition bound to one column of one table: its items as values of the column's type.
struct BoundCondition {
  const Condition* condition;
  int column;
  ColumnType type;
  struct Bound {
    const Condition::Item* item;
    Value value;                     // kValue
    std::optional<Value> low, high;  // kRange
  };
  std::vector<Bound> items;

  bool item_matches(const Bound& b, const Value& cell) const {
    switch (b.item->kind) {
      case Condition::Item::Kind::kValue:
        return compare_values(cell, b.value) == 0;
      case Condition::Item::Kind::kGlob:
        return ::fnmatch(b.item->value.c_str(), std::get<std::string>(cell).c_str(), 0) == 0;
      case Condition::Item::Kind::kRange:
        if (type != ColumnType::kString && std::isnan(as_number(cell))) return false;
        return (!b.low || compare_values(cell, *b.low) >= 0) && (!b.high || compare_values(cell, *b.high) <= 0);
    }
    return false;
  }
  bool keeps(const Row& row) const {
    const Value& cell = row[static_cast<std::size_t>(column)];
    const bool any = std::any_of(items.begin(), items.end(), [&](const Bound& b) { return item_matches(b, cell); });
    return any != condition->negated;
  }
};

Value parse_bound(const Condition& c, ColumnType type, const std::string& text) {
  if (type == ColumnType::kString) return text;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size())
    bad("--where " + printable(c.text) + ": '" + printable(text) + "' is not a number (column '" + c.column +
        "' holds numbers)");
  return v;
}

BoundCondition bind(const Table& t, const Condition& c) {
  BoundCondition b{&c, require_column(t, c.column, "--where " + printable(c.text)), ColumnType::kString, {}};
  b.type = t.columns[static_cast<std::size_t>(b.column)].type;
  for (const auto& item : c.items) {
    BoundCondition::Bound bound{&item, Value{}, std::nullopt, std::nullopt};
    switch (item.kind) {
      case Condition::Item::Kind::kValue:
        bound.value = parse_bound(c, b.type, item.value);
        break;
      case Condition::Item::Kind::kGlob:
        if (b.type != ColumnType::kString)
          bad("--where " + printable(c.text) + ": column '" + c.column +
              "' holds numbers; a pattern (*, ?, [...]) matches strings only (escape with \\ to match the character)");
        break;
      case Condition::Item::Kind::kRange:
        if (item.low) bound.low = parse_bound(c, b.type, *item.low);
        if (item.high) bound.high = parse_bound(c, b.type, *item.high);
        break;
    }
    b.items.push_back(std::move(bound));
  }
  return b;
}

// "no row of 'fits' has model 'gpt3' (did you mean 'gpt2'?); model values: gpt2, neox".
std::string describe_missing(const Table& t, const BoundCondition& b, const Condition::Item& item) {
  std::vector<const Value*> distinct;
  for (const auto& row : t.rows) distinct.push_back(&row[static_cast<std::size_t>(b.column)]);
  std::sort(distinct.begin(), distinct.end(),
            [](const Value* x, const Value* y) { return compare_values(*x, *y) < 0; });
  distinct.erase(std::unique(distinct.begin(), distinct.end(),
                             [](const Value* x, const Value* y) { return compare_values(*x, *y) == 0; }),
                 distinct.end());
  std::vector<std::string> names;
  for (const Value* v : distinct) names.push_back(value_to_string(*v, true));
  const std::string& col = b.condition->column;
  std::string out = item.kind == Condition::Item::Kind::kGlob
                        ? "no row of '" + t.name + "' has a " + col + " matching '" + printable(item.text) + "'"
                        : "no row of '" + t.name + "' has " + col + " '" + printable(item.text) + "'" +
                              (b.type == ColumnType::kString ? did_you_mean(item.value, names) : "");
  constexpr std::size_t kShown = 10;
  out += "; " + col + " values: ";
  for (std::size_t i = 0; i < std::min(names.size(), kShown); ++i) out += (i ? ", " : "") + printable(names[i]);
  if (names.size() > kShown) out += ", … (" + std::to_string(names.size()) + " in all)";
  return out;
}

// Values and globs that no row has: notes, or an error when nothing in the condition matches.
void check_items(const Table& t, const BoundCondition& b, std::vector<std::string>* notes) {
  if (t.rows.empty()) return;
  bool has_range = false;
  std::size_t checked = 0;
  std::vector<const Condition::Item*> missing;
  for (const auto& bound : b.items) {
    if (bound.item->kind == Condition::Item::Kind::kRange) {
      has_range = true;  // a range may rightly select nothing (`delta_pct=..0`)
      continue;
    }
    ++checked;
    const bool hit = std::any_of(t.rows.begin(), t.rows.end(), [&](const Row& row) {
      return b.item_matches(bound, row[static_cast<std::size_t>(b.column)]);
    });
    if (!hit) missing.push_back(bound.item);
  }
  const std::string where = "--where " + printable(b.condition->text) + ": ";
  if (!has_range && checked > 0 && missing.size() == checked) bad(where + describe_missing(t, b, *missing.front()));
  for (const auto* item : missing) notes->push_back(where + describe_missing(t, b, *item));
}

// Sort keys: the --sort columns, then model, corpus, layer, then the remaining columns.
std::vector<std::pair<int, bool>> sort_keys(const Table& t, const std::vector<std::string>& sort) {
  std::vector<std::pair<int, bool>> keys;  // column, descending
  std::vector<bool> used(t.columns.size(), false);
  auto add = [&](int i, bool desc) {
    if (i < 0 || used[static_cast<std::size_t>(i)]) return;
    used[static_cast<std::size_t>(i)] = true;
    keys.emplace_back(i, desc);
  };
  for (const auto& s : sort) {
    const bool desc = !s.empty() && s[0] == '-';
    add(require_column(t, desc ? s.substr(1) : s, "--sort " + printable(s)), desc);
  }
  for (const char* name : {"model", "corpus", "layer"}) add(t.column_index(name), false);
  for (std::size_t i = 0; i < t.columns.size(); ++i) add(static_cast<int>(i), false);
  return keys;
}

}  // namespace

Condition parse_condition(const std::string& text) {
  const auto eq = text.find('=');
  const bool negated = eq != std::string::npos && eq > 0 && text[eq - 1] == '!';
  const std::size_t name_end = negated ? eq - 1 : eq;
  if (eq == std::string::npos || name_end == 0)
    bad("--where '" + printable(text) + "': expected col=value, col!=value, col=a,b, col=lo..hi or col=glob*");
  Condition c;
  c.text = text;
  c.column = text.substr(0, name_end);
  c.negated = negated;
  for (const auto& raw : split_items(text.substr(eq + 1))) {
    Condition::Item item;
    item.text = raw;
    const std::size_t dots = find_unescaped(raw, "..");
    if (dots != std::string::npos) {
      item.kind = Condition::Item::Kind::kRange;
      if (dots > 0) item.low = unescape(raw.substr(0, dots));
      if (dots + 2 < raw.size()) item.high = unescape(raw.substr(dots + 2));
      if (!item.low && !item.high) bad("--where '" + printable(text) + "': a range needs at least one bound");
    } else if (has_unescaped_glob(raw)) {
      item.kind = Condition::Item::Kind::kGlob;
      item.value = raw;  // fnmatch resolves the escapes itself
    } else {
      item.value = unescape(raw);
    }
    c.items.push_back(std::move(item));
  }
  return c;
}

QueryResult run_query(const Table& table, const QueryOptions& options) {
  QueryResult result;
  std::vector<BoundCondition> conds;
  for (const auto& c : options.where) conds.push_back(bind(table, c));
  for (const auto& b : conds) check_items(table, b, &result.notes);
  std::vector<const Row*> rows;
  for (const auto& row : table.rows)
    if (std::all_of(conds.begin(), conds.end(), [&](const BoundCondition& b) { return b.keeps(row); }))
      rows.push_back(&row);
  const auto keys = sort_keys(table, options.sort);
  std::stable_sort(rows.begin(), rows.end(), [&](const Row* a, const Row* b) {
    for (const auto& [i, desc] : keys) {
      const int c = compare_values((*a)[static_cast<std::size_t>(i)], (*b)[static_cast<std::size_t>(i)]);
      if (c != 0) return desc ? c > 0 : c < 0;
    }
    return false;
  });
  result.matched = rows.size();
  if (options.limit && rows.size() > *options.limit) rows.resize(*options.limit);
  std::vector<int> cols;
  if (options.columns.empty()) {
    for (std::size_t i = 0; i < table.columns.size(); ++i) cols.push_back(static_cast<int>(i));
  } else {
    for (const auto& c : options.columns) cols.push_back(require_column(table, c, "--columns"));
  }
  Table& out = result.table;
  out.name = table.name;
  for (int i : cols) out.columns.push_back(table.columns[static_cast<std::size_t>(i)]);
  for (const Row* r : rows) {
    Row row;
    for (int i : cols) row.push_back((*r)[static_cast<std::size_t>(i)]);
    out.rows.push_back(std::move(row));
  }
  return result;
}

TableFormat parse_table_format(const std::string& name) {
  static constexpr EnumName<TableFormat> kNames[] = {{TableFormat::kTable, "table"},
                                                     {TableFormat::kCsv, "csv"},
                                                     {TableFormat::kTsv, "tsv"},
                                                     {TableFormat::kJson, "json"},
                                                     {TableFormat::kMarkdown, "md"}};
  if (auto f = parse_enum(kNames, name)) return *f;
  bad("--format '" + printable(name) + "' is unknown (" + enum_names_list(kNames) + ")");
}

std::string csv_field(const std::string& value) {
  std::string out(value.size() * 2 + 2, '\0');
  const std::size_t n = csv_write(out.data(), out.size(), value.data(), value.size());
  out.resize(n);
  return out;
}

namespace {

// RFC 4180: quoted only when the field holds a separator, a quote or a line break.
std::string csv_cell(const Value& v) {
  if (v.index() != 2) return value_to_string(v, true);
  const auto& s = std::get<std::string>(v);
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string tsv_cell(const Value& v) {
  if (v.index() != 2) return value_to_string(v, true);
  std::string out;
  for (char ch : std::get<std::string>(v)) {
    switch (ch) {
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\\':
        out += "\\\\";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string delimited(const Table& t, char sep, std::string (*cell)(const Value&)) {
  std::string out;
  for (std::size_t c = 0; c < t.columns.size(); ++c) out += (c ? std::string(1, sep) : "") + cell(t.columns[c].name);
  out += "\n";
  for (const auto& r : t.rows) {
    for (std::size_t c = 0; c < r.size(); ++c) out += (c ? std::string(1, sep) : "") + cell(r[c]);
    out += "\n";
  }
  return out;
}

std::string json_rows(const Table& t) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& r : t.rows) {
    nlohmann::ordered_json o = nlohmann::ordered_json::object();
    for (std::size_t c = 0; c < t.columns.size(); ++c)
      std::visit([&](const auto& v) { o[t.columns[c].name] = v; }, r[c]);
    rows.push_back(std::move(o));
  }
  return rows.dump() + "\n";
}

std::string markdown(const Table& t) {
  std::string out = "|";
  for (const auto& c : t.columns) out += " " + c.name + " |";
  out += "\n|";
  for (const auto& c : t.columns) out += c.type == ColumnType::kString ? "---|" : "---:|";
  out += "\n";
  for (const auto& r : t.rows) {
    out += "|";
    for (const auto& v : r) {
      std::string esc;
      for (char ch : value_to_string(v)) esc += ch == '|' ? std::string("\\|") : std::string(1, ch);
      out += " " + esc + " |";
    }
    out += "\n";
  }
  return out;
}

std::string aligned(const Table& t, std::optional<std::size_t> total) {
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
  std::string out;
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
  const std::size_t n = t.rows.size();
  if (total && *total != n) return out + fmt::format("({} of {} rows)\n", n, *total);
  return out + fmt::format("({} row{})\n", n, n == 1 ? "" : "s");
}

}  // namespace

std::string format_table(const Table& t, TableFormat format, std::optional<std::size_t> total) {
  switch (format) {
    case TableFormat::kJson:
      return json_rows(t);
    case TableFormat::kCsv:
      return delimited(t, ',', csv_cell);
    case TableFormat::kTsv:
      return delimited(t, '\t', tsv_cell);
    case TableFormat::kMarkdown:
      return markdown(t);
    case TableFormat::kTable:
      return aligned(t, total);
  }
  return "";
}

}  // namespace linsweep
