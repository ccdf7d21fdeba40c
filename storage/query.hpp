// Filtering, projecting, sorting and formatting result tables (`linsweep query`).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "storage/table.hpp"

namespace linsweep {

// One --where condition: `col=value` (equality) or `col=lo..hi` (inclusive range; either
// bound may be empty). Numeric columns compare numerically, string columns as strings.
struct Condition {
  std::string column;
  std::optional<std::string> equals;
  std::optional<std::string> low, high;
};

// Parses a --where argument; throws StorageError(kBadInput) on malformed text.
Condition parse_condition(const std::string& text);

struct QueryOptions {
  std::vector<Condition> where;     // all must hold
  std::vector<std::string> columns;  // empty: all, in schema order
  std::vector<std::string> sort;     // column names; a leading '-' sorts descending
};

// Applies the options; throws StorageError(kBadInput) naming an unknown column or a value
// that does not parse for a numeric column.
Table run_query(const Table& table, const QueryOptions& options);

enum class TableFormat { kTable, kCsv, kJson, kMarkdown };
TableFormat parse_table_format(const std::string& name);  // table | csv | json | md

// Renders rows: aligned text, CSV (RFC 4180 quoting by libcsv), a JSON list of row objects,
// or a Markdown table. Floats are exact in csv/json and 6 significant digits otherwise.
std::string format_table(const Table& table, TableFormat format);

// CSV field quoting (libcsv's csv_write): shared with the report writers.
std::string csv_field(const std::string& value);

}  // namespace linsweep
