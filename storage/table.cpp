// Table schemas and validation.
#include "storage/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "common/errors.hpp"
#include "common/registry.hpp"
#include "common/suggest.hpp"
#include "storage/table_def.hpp"

namespace linsweep {

TableRegistrar::TableRegistrar(Table schema) {
  schema.rows.clear();
  register_once(
      registered<Table>(), std::move(schema), "table", [](const Table& t) { return t.name; },
      [](const Table& a, const Table& b) { return a.name < b.name; });
}

const std::vector<Table>& table_schemas() { return registered<Table>(); }

const Table* find_table_schema(const std::string& name) {
  for (const auto& t : registered<Table>())
    if (t.name == name) return &t;
  return nullptr;
}

Value missing_value(ColumnType type) {
  switch (type) {
    case ColumnType::kInt:
      return std::int64_t{-1};
    case ColumnType::kFloat:
      return std::nan("");
    case ColumnType::kString:
      return std::string();
  }
  return std::string();
}

Table empty_table(const std::string& name) {
  if (const Table* t = find_table_schema(name)) return *t;
  std::string known;
  std::vector<std::string> names;
  for (const auto& t : table_schemas()) known += (known.empty() ? "" : ", ") + t.name, names.push_back(t.name);
  throw StorageError("unknown table '" + name + "'" + did_you_mean(name, names) + " (known: " + known + ")",
                     ExitCode::kBadInput);
}

int require_column(const Table& t, const std::string& column) {
  const int i = t.column_index(column);
  if (i < 0) throw StorageError("table '" + t.name + "' has no column '" + column + "'", ExitCode::kBadInput);
  return i;
}

int Table::column_index(const std::string& column) const {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i].name == column) return static_cast<int>(i);
  return -1;
}

void Table::validate() const {
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].size() != columns.size())
      throw StorageError("table '" + name + "' row " + std::to_string(r) + " has " + std::to_string(rows[r].size()) +
                         " values for " + std::to_string(columns.size()) + " columns");
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const auto want = static_cast<std::size_t>(columns[c].type);
      if (rows[r][c].index() != want)
        throw StorageError("table '" + name + "' row " + std::to_string(r) + " column '" + columns[c].name +
                           "' has the wrong type");
    }
  }
}

std::string value_to_string(const Value& v, bool exact) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) return exact ? fmt::format("{}", *d) : fmt::format("{:.6g}", *d);
  return std::get<std::string>(v);
}

}  // namespace linsweep
