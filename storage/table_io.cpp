// Compound-type packing and unpacking of table rows.
#include "storage/table_io.hpp"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "storage/hdf5.hpp"

namespace linsweep {
namespace {

struct Layout {
  std::vector<std::size_t> offsets, sizes;
  std::size_t row_size = 0;
};

H5Id string_type(std::size_t size) {
  H5Id t = H5_TYPE(H5Tcopy(H5T_C_S1));
  H5_CHECK(H5Tset_size(t, size));
  H5_CHECK(H5Tset_strpad(t, H5T_STR_NULLPAD));
  H5_CHECK(H5Tset_cset(t, H5T_CSET_UTF8));
  return t;
}

H5Id compound_type(const std::vector<Column>& columns, const Layout& layout) {
  H5Id t = H5_TYPE(H5Tcreate(H5T_COMPOUND, layout.row_size));
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const char* name = columns[c].name.c_str();
    switch (columns[c].type) {
      case ColumnType::kInt:
        H5_CHECK(H5Tinsert(t, name, layout.offsets[c], H5T_NATIVE_INT64));
        break;
      case ColumnType::kFloat:
        H5_CHECK(H5Tinsert(t, name, layout.offsets[c], H5T_NATIVE_DOUBLE));
        break;
      case ColumnType::kString: {
        H5Id s = string_type(layout.sizes[c]);
        H5_CHECK(H5Tinsert(t, name, layout.offsets[c], s));
        break;
      }
    }
  }
  return t;
}

Layout layout_for(const std::vector<Column>& columns, const std::vector<std::size_t>& string_sizes) {
  Layout l;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const std::size_t size = columns[c].type == ColumnType::kString ? string_sizes[c] : 8;
    l.offsets.push_back(l.row_size);
    l.sizes.push_back(size);
    l.row_size += size;
  }
  if (l.row_size == 0) l.row_size = 1;
  return l;
}

}  // namespace

void write_table(hid_t group, const Table& table) {
  table.validate();
  std::vector<std::size_t> widths(table.columns.size(), 1);
  for (const auto& row : table.rows)
    for (std::size_t c = 0; c < row.size(); ++c)
      if (const auto* s = std::get_if<std::string>(&row[c])) widths[c] = std::max(widths[c], s->size());
  const Layout l = layout_for(table.columns, widths);
  H5Id type = compound_type(table.columns, l);
  std::vector<unsigned char> buf(l.row_size * std::max<std::size_t>(1, table.rows.size()), 0);
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    unsigned char* p = buf.data() + r * l.row_size;
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
      const Value& v = table.rows[r][c];
      if (const auto* i = std::get_if<std::int64_t>(&v))
        std::memcpy(p + l.offsets[c], i, 8);
      else if (const auto* d = std::get_if<double>(&v))
        std::memcpy(p + l.offsets[c], d, 8);
      else {
        const auto& s = std::get<std::string>(v);
        std::memcpy(p + l.offsets[c], s.data(), s.size());
      }
    }
  }
  hsize_t dims[1] = {table.rows.size()};
  H5Id space = H5_SPACE(H5Screate_simple(1, dims, nullptr));
  H5Id ds = H5_DATASET(H5Dcreate2(group, table.name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!table.rows.empty()) H5_CHECK(H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()));
  write_int_attribute(ds, "schema_version", kStoreSchemaVersion);
  // The columns that identify a row, so that a reader of the file alone (h5py, a script that
  // compares two stores) can match rows without a list of its own.
  std::string keys;
  for (const Column& c : table.columns)
    if (c.key) keys += (keys.empty() ? "" : ",") + c.name;
  if (!keys.empty()) write_string_attribute(ds, "keys", keys);
}

namespace {

// libhdf5 trusts a compound type's member offsets when it converts rows (H5T__conv_struct
// copies each member from its file offset): a member past the row's end, or two members
// overlapping, reads outside the row buffer inside the library. Our writer lays members out
// disjointly within the row, so anything else is a damaged file, refused before H5Dread.
template <typename Bad>
void check_member_layout(hid_t ftype, Bad&& bad) {
  constexpr std::size_t kMaxRowBytes = std::size_t{1} << 22;
  constexpr int kMaxMembers = 4096;
  const std::size_t row = H5Tget_size(ftype);
  if (row == 0 || row > kMaxRowBytes) bad("has an invalid row size");
  const int members = H5Tget_nmembers(ftype);
  if (members <= 0 || members > kMaxMembers) bad("has an invalid number of columns");
  std::vector<std::pair<std::size_t, std::size_t>> spans;  // (offset, size) per member
  for (int i = 0; i < members; ++i) {
    H5Id mtype = H5_TYPE(H5Tget_member_type(ftype, static_cast<unsigned>(i)));
    const H5T_class_t cls = H5Tget_class(mtype);
    const std::size_t size = H5Tget_size(mtype);
    const bool fixed_string = cls == H5T_STRING && H5Tis_variable_str(mtype) == 0;
    const bool number = (cls == H5T_INTEGER || cls == H5T_FLOAT) && size >= 1 && size <= 8;
    if (!number && !fixed_string) bad("column " + std::to_string(i) + " has a type the store never writes");
    const std::size_t offset = H5Tget_member_offset(ftype, static_cast<unsigned>(i));
    if (size == 0 || offset > row || size > row - offset) bad("column " + std::to_string(i) + " lies outside its row");
    spans.emplace_back(offset, size);
  }
  std::sort(spans.begin(), spans.end());
  for (std::size_t i = 1; i < spans.size(); ++i)
    if (spans[i].first < spans[i - 1].first + spans[i - 1].second) bad("has overlapping columns");
}

}  // namespace

Table read_table(hid_t group, const Table& schema) {
  auto bad = [&](const std::string& what) {
    throw StorageError("table '" + schema.name + "': " + what, ExitCode::kBadInput);
  };
  if (H5Lexists(group, schema.name.c_str(), H5P_DEFAULT) <= 0) bad("missing");
  H5Id ds = H5_DATASET(H5Dopen2(group, schema.name.c_str(), H5P_DEFAULT));
  H5Id space = H5_SPACE(H5Dget_space(ds));
  if (H5Sget_simple_extent_ndims(space) != 1) bad("not one-dimensional");
  hsize_t n = 0;
  H5_CHECK(H5Sget_simple_extent_dims(space, &n, nullptr));
  if (n > kMaxTableRows) bad("has more than the allowed number of rows");
  require_stored(ds, n, "table '" + schema.name + "'");
  H5Id ftype = H5_TYPE(H5Dget_type(ds));
  if (H5Tget_class(ftype) != H5T_COMPOUND) bad("not a compound dataset");
  check_member_layout(ftype, bad);
  std::vector<std::size_t> widths(schema.columns.size(), 1);
  std::vector<bool> present(schema.columns.size(), true);
  for (std::size_t c = 0; c < schema.columns.size(); ++c) {
    const int idx = H5Tget_member_index(ftype, schema.columns[c].name.c_str());
    if (idx < 0 && !schema.columns[c].required) {  // a column added after the file was written
      present[c] = false;
      continue;
    }
    if (idx < 0) bad("column '" + schema.columns[c].name + "' is missing");
    H5Id mtype = H5_TYPE(H5Tget_member_type(ftype, static_cast<unsigned>(idx)));
    const H5T_class_t cls = H5Tget_class(mtype);
    const ColumnType want = schema.columns[c].type;
    if ((want == ColumnType::kInt && cls != H5T_INTEGER) || (want == ColumnType::kFloat && cls != H5T_FLOAT) ||
        (want == ColumnType::kString && cls != H5T_STRING))
      bad("column '" + schema.columns[c].name + "' has the wrong type");
    if (want == ColumnType::kString) {
      if (H5Tis_variable_str(mtype) > 0) bad("column '" + schema.columns[c].name + "' is a variable-length string");
      widths[c] = H5Tget_size(mtype);
      if (widths[c] == 0 || widths[c] > 65536) bad("column '" + schema.columns[c].name + "' has an invalid width");
    }
  }
  // Read the columns the file has; later-added ones get their defaults.
  std::vector<Column> cols;
  std::vector<std::size_t> col_widths, slot(schema.columns.size(), 0);
  for (std::size_t c = 0; c < schema.columns.size(); ++c)
    if (present[c]) slot[c] = cols.size(), cols.push_back(schema.columns[c]), col_widths.push_back(widths[c]);
  const Layout l = layout_for(cols, col_widths);
  H5Id mem = compound_type(cols, l);
  std::vector<unsigned char> buf(l.row_size * std::max<hsize_t>(1, n));
  if (n > 0) H5_CHECK(H5Dread(ds, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()));
  Table t = schema;
  t.rows.reserve(n);
  for (hsize_t r = 0; r < n; ++r) {
    const unsigned char* p = buf.data() + r * l.row_size;
    Row row;
    for (std::size_t c = 0; c < schema.columns.size(); ++c) {
      if (!present[c]) {
        row.push_back(missing_value(schema.columns[c].type));
        continue;
      }
      const std::size_t off = l.offsets[slot[c]];
      switch (schema.columns[c].type) {
        case ColumnType::kInt: {
          std::int64_t v;
          std::memcpy(&v, p + off, 8);
          row.emplace_back(v);
          break;
        }
        case ColumnType::kFloat: {
          double v;
          std::memcpy(&v, p + off, 8);
          row.emplace_back(v);
          break;
        }
        case ColumnType::kString: {
          const char* s = reinterpret_cast<const char*>(p + off);
          row.emplace_back(std::string(s, strnlen(s, widths[c])));
          break;
        }
      }
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table stored_schema(hid_t group, const std::string& name) {
  auto bad = [&](const std::string& what) { throw StorageError("table '" + name + "': " + what, ExitCode::kBadInput); };
  if (H5Lexists(group, name.c_str(), H5P_DEFAULT) <= 0) bad("missing");
  H5Id ds = H5_DATASET(H5Dopen2(group, name.c_str(), H5P_DEFAULT));
  H5Id ftype = H5_TYPE(H5Dget_type(ds));
  if (H5Tget_class(ftype) != H5T_COMPOUND) bad("not a compound dataset");
  check_member_layout(ftype, bad);
  Table t;
  t.name = name;
  const int members = H5Tget_nmembers(ftype);
  for (int i = 0; i < members; ++i) {
    char* raw = H5Tget_member_name(ftype, static_cast<unsigned>(i));
    if (raw == nullptr) bad("column " + std::to_string(i) + " has no name");
    const std::string column(raw);
    H5free_memory(raw);
    H5Id mtype = H5_TYPE(H5Tget_member_type(ftype, static_cast<unsigned>(i)));
    const H5T_class_t cls = H5Tget_class(mtype);
    const ColumnType type = cls == H5T_INTEGER ? ColumnType::kInt
                            : cls == H5T_FLOAT ? ColumnType::kFloat
                                               : ColumnType::kString;
    if (column.empty() || t.column_index(column) >= 0) bad("column names are empty or repeated");
    t.columns.push_back(Column{.name = column, .type = type});
  }
  if (has_attribute(ds, "keys")) {
    const std::string keys = "," + read_string_attribute(ds, "keys") + ",";
    for (Column& c : t.columns) c.key = keys.find("," + c.name + ",") != std::string::npos;
  }
  return t;
}

Table read_any_table(hid_t group, const std::string& name) {
  if (const Table* schema = find_table_schema(name)) return read_table(group, *schema);
  return read_table(group, stored_schema(group, name));
}

namespace {

// H5Literate and H5L_info_t name the 1.10 API there and the 1.12+ one (H5Literate2, H5L_info2_t)
// under the default API mapping of later releases.
extern "C" herr_t collect_link(hid_t, const char* name, const H5L_info_t*, void* out) {
  auto* names = static_cast<std::vector<std::string>*>(out);
  if (names->size() >= 4096) return -1;
  names->emplace_back(name);
  return 0;
}

}  // namespace

std::vector<std::string> link_names(hid_t group) {
  std::vector<std::string> names;
  hsize_t index = 0;
  if (H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, &index, collect_link, &names) < 0)
    throw StorageError("cannot list the group (more than 4096 entries, or damaged)", ExitCode::kBadInput);
  return names;
}

}  // namespace linsweep
