// Result tables: named, typed columns and rows; the schema of every table the store knows.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace linsweep {

// Version of the store layout and table schemas written by this build. Readers refuse
// anything newer (exit 2) and read anything at or below it.
inline constexpr int kStoreSchemaVersion = 2;  // 2: arrays in their own file, provenance attributes

enum class ColumnType { kInt, kFloat, kString };

using Value = std::variant<std::int64_t, double, std::string>;
using Row = std::vector<Value>;

struct Column {
  std::string name;
  ColumnType type;
  // Columns of the table's first schema are required in every file; columns added later are
  // not, and a file written before them reads with missing_value() in their place.
  bool required = true;
  // Part of what identifies a row (model, corpus, layer, ...): tests and scripts that match the
  // rows of two stores read the keys from here (`linsweep catalogue`), never from a list of
  // their own.
  bool key = false;
  std::string doc{};  // one line, for `linsweep catalogue` and the docs
};

// The value of an absent optional column: NaN, −1 or "".
Value missing_value(ColumnType type);

// A table's rows with its columns. Invariant (checked by validate()): every row has one
// value per column, of the column's type.
struct Table {
  std::string name;
  std::vector<Column> columns;
  std::vector<Row> rows;
  std::string doc{};  // what one row is, for `linsweep catalogue` and the docs

  // Index of `column`, or -1.
  int column_index(const std::string& column) const;
  // Throws StorageError naming the table, row and column on a shape or type mismatch.
  void validate() const;
};

// The schemas of the tables this build writes, registered by the experiments that write them
// (TableRegistrar, from static initializers), sorted by name. Reading a store does not need
// them: unit files describe their own columns; a registered schema adds the columns a file
// written before them lacks.
const std::vector<Table>& table_schemas();
// The registered schema of `name`, or null.
const Table* find_table_schema(const std::string& name);
// An empty table with the schema of `name`; throws StorageError(kBadInput) listing the known
// names (and the closest one, when a name is one or two edits away).
Table empty_table(const std::string& name);

// Registers a schema before main(); a second schema under one name is a programming error
// (std::logic_error at start-up).
struct TableRegistrar {
  explicit TableRegistrar(Table schema);
};

// Renders a value for text output (floats with up to 6 significant digits unless `exact`).
std::string value_to_string(const Value& v, bool exact = false);

}  // namespace linsweep
