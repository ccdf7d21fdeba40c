// A result table declared from a row struct: each column bound to a member, so that rows are
// built and read by named fields, and the schema is derived from the same declaration.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "storage/table.hpp"

namespace linsweep {

// Index of `column` in `t`; throws StorageError naming the table and column when absent.
int require_column(const Table& t, const std::string& column);

// Usage (in the experiment that writes the table):
//   struct FitRow { std::string model; std::int64_t layer; std::string corpus; double r2; };
//   const TableDef<FitRow>& fits_table() {
//     static const TableDef<FitRow> t = TableDef<FitRow>("fits", "one row per λ")
//         .key("model", &FitRow::model).key("layer", &FitRow::layer).key("corpus", &FitRow::corpus)
//         .column("r2", &FitRow::r2, "R² on the fit split");
//     return t;
//   }
//   table.rows.push_back(fits_table().row({.model = m, .layer = l, .corpus = c, .r2 = r2}));
// Member types: std::string, std::int64_t or double. Immutable after construction; thread safe
// to read.
template <typename R>
class TableDef {
 public:
  TableDef(std::string name, std::string doc) {
    schema_.name = std::move(name);
    schema_.doc = std::move(doc);
  }

  // A column present in every file of the table since its first schema.
  // A column that identifies the row (Column::key).
  template <typename M>
  TableDef key(const char* name, M R::*member, std::string doc = "") && {
    return std::move(*this).bind(name, member, true, std::move(doc), true);
  }
  template <typename M>
  TableDef column(const char* name, M R::*member, std::string doc = "") && {
    return std::move(*this).bind(name, member, true, std::move(doc));
  }
  // A column added after the table's first schema: files written before it read with
  // missing_value() in its place. added_key: such a column that identifies the row.
  template <typename M>
  TableDef added(const char* name, M R::*member, std::string doc = "") && {
    return std::move(*this).bind(name, member, false, std::move(doc));
  }
  template <typename M>
  TableDef added_key(const char* name, M R::*member, std::string doc = "") && {
    return std::move(*this).bind(name, member, false, std::move(doc), true);
  }

  const std::string& name() const noexcept { return schema_.name; }
  const std::string& doc() const noexcept { return schema_.doc; }
  // An empty table with this schema.
  const Table& schema() const noexcept { return schema_; }

  Row row(const R& r) const {
    Row out;
    out.reserve(getters_.size());
    for (const auto& g : getters_) out.push_back(g(r));
    return out;
  }
  Table table(const std::vector<R>& rows) const {
    Table t = schema_;
    for (const auto& r : rows) t.rows.push_back(row(r));
    return t;
  }
  // The rows of `t` (a table read from a store: the columns of this schema, by name, plus any
  // others, such as the store's `unit`). Throws StorageError when a column is missing.
  std::vector<R> rows(const Table& t) const {
    std::vector<int> index;
    for (const auto& c : schema_.columns) index.push_back(require_column(t, c.name));
    std::vector<R> out;
    out.reserve(t.rows.size());
    for (const auto& row : t.rows) {
      R r{};
      for (std::size_t i = 0; i < setters_.size(); ++i) setters_[i](row[static_cast<std::size_t>(index[i])], r);
      out.push_back(std::move(r));
    }
    return out;
  }
  // rows(t) ordered by key(row) (a std::tie of members), equal keys in stored order.
  template <typename Key>
  std::vector<R> sorted_rows(const Table& t, Key key) const {
    std::vector<R> out = rows(t);
    std::stable_sort(out.begin(), out.end(), [&](const R& a, const R& b) { return key(a) < key(b); });
    return out;
  }
  // The same for this table in a set read from a store (by table name), found by its own name:
  // std::out_of_range when the set lacks it.
  std::vector<R> rows(const std::map<std::string, Table>& tables) const { return rows(tables.at(schema_.name)); }
  template <typename Key>
  std::vector<R> sorted_rows(const std::map<std::string, Table>& tables, Key key) const {
    return sorted_rows(tables.at(schema_.name), key);
  }

 private:
  template <typename M>
  static constexpr ColumnType type_of() {
    if constexpr (std::is_same_v<M, std::int64_t>)
      return ColumnType::kInt;
    else if constexpr (std::is_same_v<M, double>)
      return ColumnType::kFloat;
    else if constexpr (std::is_same_v<M, std::string>)
      return ColumnType::kString;
    else
      static_assert(sizeof(M) == 0, "table columns are std::int64_t, double or std::string");
  }

  template <typename M>
  TableDef bind(const char* name, M R::*member, bool required, std::string doc, bool key = false) && {
    schema_.columns.push_back(Column{name, type_of<M>(), required, key, std::move(doc)});
    getters_.push_back([member](const R& r) { return Value(r.*member); });
    setters_.push_back([member](const Value& v, R& r) { r.*member = std::get<M>(v); });
    return std::move(*this);
  }

  Table schema_;
  std::vector<std::function<Value(const R&)>> getters_;
  std::vector<std::function<void(const Value&, R&)>> setters_;
};

}  // namespace linsweep
