// Reading a store table's cells by column name, for sections that combine an experiment's
// own rows with another experiment's table (whose row struct is private to its file).
#pragma once

#include <cstddef>
#include <string>

#include "storage/table.hpp"

namespace linsweep {

// A view of `table` (which must outlive it). Not thread safe to construct concurrently with
// changes to the table; reads are const.
class TableView {
 public:
  explicit TableView(const Table& table) : table_(table) {}
  std::size_t size() const noexcept { return table_.rows.size(); }
  bool has(const std::string& column) const { return table_.column_index(column) >= 0; }
  // The cell as text (numbers as value_to_string exact); throws StorageError naming the table
  // and column when the column is absent.
  std::string text(std::size_t row, const std::string& column) const;
  // The cell as a number (integers converted); NaN for a string cell. Throws StorageError when
  // the column is absent.
  double number(std::size_t row, const std::string& column) const;

 private:
  const Table& table_;
};

}  // namespace linsweep
