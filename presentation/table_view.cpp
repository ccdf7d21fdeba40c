// Cells by column name.
#include "presentation/table_view.hpp"

#include <cmath>

#include "storage/table_def.hpp"

namespace linsweep {

std::string TableView::text(std::size_t row, const std::string& column) const {
  const Value& v = table_.rows.at(row)[static_cast<std::size_t>(require_column(table_, column))];
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return value_to_string(v, true);
}

double TableView::number(std::size_t row, const std::string& column) const {
  const Value& v = table_.rows.at(row)[static_cast<std::size_t>(require_column(table_, column))];
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  return std::nan("");
}

}  // namespace linsweep
