// Result tables: named, typed columns and rows; the schema of every table the store knows.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace linsweep {

// Version of the store layout and table schemas written by this build. Readers refuse
// anything newer (exit 2) and read anything at or below it.
inline constexpr int kStoreSchemaVersion = 1;

enum class ColumnType { kInt, kFloat, kString };

using Value = std::variant<std::int64_t, double, std::string>;
using Row = std::vector<Value>;

struct Column {
  std::string name;
  ColumnType type;
  // Key columns (DESIGN §7) are required in every file; columns added later are not, and a
  // file written before them reads with missing_value() in their place.
  bool required = true;
};

// The value of an absent optional column: NaN, −1 or "".
Value missing_value(ColumnType type);


// A table's rows with its columns. Invariant (checked by validate()): every row has one
// value per column, of the column's type.
struct Table {
  std::string name;
  std::vector<Column> columns;
  std::vector<Row> rows;

  // Index of `column`, or -1.
  int column_index(const std::string& column) const;
  // Throws StorageError naming the table, row and column on a shape or type mismatch.
  void validate() const;
};

// The known tables (DESIGN §7) in a fixed order, each with its columns.
const std::vector<Table>& table_schemas();
// An empty table with the schema of `name`; throws StorageError listing the known names.
Table empty_table(const std::string& name);

// Renders a value for text output (floats with up to 6 significant digits unless `exact`).
std::string value_to_string(const Value& v, bool exact = false);

}  // namespace linsweep
