// Filtering, projecting, sorting and formatting result tables (`linsweep query`).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "storage/table.hpp"

namespace linsweep {

// One --where condition: `col=ITEMS` keeps the rows whose cell matches any item, `col!=ITEMS`
// those that match none. ITEMS is a comma-separated list; each item is a value (`gpt2-s`, `3`),
// a glob on a string column (`gpt2*`, `pythia-?m`, `[ab]*`: fnmatch(3)), or an inclusive range
// `lo..hi` (either bound may be empty). A backslash makes the next character literal (`\,`,
// `\*`). Numeric columns compare numerically, string columns as strings.
struct Condition {
  struct Item {
    enum class Kind { kValue, kGlob, kRange };
    Kind kind = Kind::kValue;
    std::string text;                      // as written (for messages)
    std::string value;                     // kValue: unescaped; kGlob: the fnmatch pattern
    std::optional<std::string> low, high;  // kRange
  };
  std::string text;  // the whole argument, for messages
  std::string column;
  bool negated = false;
  std::vector<Item> items;
};

// Parses a --where argument; throws StorageError(kBadInput) on malformed text.
Condition parse_condition(const std::string& text);

struct QueryOptions {
  std::vector<Condition> where;      // all must hold
  std::vector<std::string> columns;  // empty: all, in schema order
  std::vector<std::string> sort;     // column names; a leading '-' sorts descending
  std::optional<std::size_t> limit;  // at most this many rows, after sorting
};

struct QueryResult {
  Table table;                     // the selected rows and columns
  std::size_t matched = 0;         // rows that passed --where (before --limit)
  std::vector<std::string> notes;  // one line per value or glob that no row of the table has
};

// Applies the options. Rows are sorted by the --sort keys, then by model, corpus and layer,
// then by every other column in schema order (so the order never depends on unit ids alone).
// A value or glob that matches no row of the (unfiltered) table is reported: as a note when
// another item of its condition, or a range in it, does match; as StorageError(kBadInput)
// ("no row of T has COL 'v'", did you mean, the column's values) when none does. A table
// without rows reports nothing. Also throws StorageError(kBadInput) naming an unknown column
// (did you mean) or a value that does not parse for a numeric column.
QueryResult run_query(const Table& table, const QueryOptions& options);

enum class TableFormat { kTable, kCsv, kTsv, kJson, kMarkdown };
TableFormat parse_table_format(const std::string& name);  // table | csv | tsv | json | md

// Renders rows: aligned text; CSV (RFC 4180: numbers bare, a string quoted only when it holds
// a comma, a double quote, CR or LF); TSV (tab, newline, CR and backslash in strings written
// as \t, \n, \r, \\); a JSON list of row objects with keys in column order; or a Markdown
// table. Floats are exact (shortest round-trip form; NaN as nan, null in JSON) in csv, tsv and
// json, and 6 significant digits otherwise. `total` (rows before a limit) only changes the
// text format's last line ("(5 of 12 rows)").
std::string format_table(const Table& table, TableFormat format, std::optional<std::size_t> total = std::nullopt);

// CSV field quoting (libcsv's csv_write: always quoted): for the report writers.
std::string csv_field(const std::string& value);

}  // namespace linsweep
