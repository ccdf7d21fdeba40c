// Unit file writing and validated reading.
#include "storage/unit_file.hpp"

#include <limits>

#include "common/errors.hpp"
#include "storage/hdf5.hpp"
#include "storage/table_io.hpp"
#include "storage/unit_seal.hpp"

namespace linsweep {
namespace {

constexpr std::uint64_t kMaxArrayValues = std::uint64_t{1} << 31;

struct ArrayVisit {
  std::map<std::string, ArrayData>* out;
  std::string error;
};

herr_t visit_array(hid_t group, const char* name, const H5O_info_t* info, void* data) {
  auto* v = static_cast<ArrayVisit*>(data);
  if (info->type != H5O_TYPE_DATASET || !v->error.empty()) return 0;
  try {
    H5Id ds = H5_DATASET(H5Dopen2(group, name, H5P_DEFAULT));
    H5Id space = H5_SPACE(H5Dget_space(ds));
    const int rank = H5Sget_simple_extent_ndims(space);
    if (rank < 0 || rank > 8) throw StorageError(std::string("array '") + name + "' has an invalid rank");
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    H5_CHECK(H5Sget_simple_extent_dims(space, dims.data(), nullptr));
    ArrayData a;
    std::uint64_t n = 1;
    for (auto d : dims) {
      if (d != 0 && n > kMaxArrayValues / d) throw StorageError(std::string("array '") + name + "' is too large");
      n *= d;
      a.shape.push_back(static_cast<std::int64_t>(d));
    }
    require_stored(ds, n, std::string("array '") + name + "'");
    a.values.resize(n);
    if (n > 0) H5_CHECK(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, a.values.data()));
    (*v->out)[name] = std::move(a);
  } catch (const Error& e) {
    v->error = e.what();
  }
  return 0;
}

}  // namespace

void write_unit_file(const std::string& path, const UnitResult& unit) {
  silence_hdf5_errors();
  H5Id fcpl = H5_PLIST(H5Pcreate(H5P_FILE_CREATE));
  H5_CHECK(H5Pset_userblock(fcpl, kUnitSealBytes));  // room for the seal (unit_seal.hpp)
  H5Id file = H5_FILE(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl, H5P_DEFAULT));
  write_int_attribute(file, "schema_version", kStoreSchemaVersion);
  write_string_attribute(file, "unit_id", unit.unit_id);
  write_string_attribute(file, "kind", unit.kind);
  write_string_attribute(file, "params", unit.params);
  H5Id tables = H5_GROUP(H5Gcreate2(file, "tables", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  for (const auto& t : unit.tables) write_table(tables, t);
  H5Id lcpl = H5_PLIST(H5Pcreate(H5P_LINK_CREATE));
  H5_CHECK(H5Pset_create_intermediate_group(lcpl, 1));
  H5Id arrays = H5_GROUP(H5Gcreate2(file, "arrays", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  for (const auto& [name, a] : unit.arrays) {
    std::uint64_t n = 1;
    std::vector<hsize_t> dims;
    for (auto d : a.shape) {
      dims.push_back(static_cast<hsize_t>(d));
      n *= static_cast<std::uint64_t>(d);
    }
    if (n != a.values.size()) throw StorageError("array '" + name + "' has " + std::to_string(a.values.size()) +
                                                 " values for its shape");
    H5Id space = H5_SPACE(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
    H5Id ds = H5_DATASET(H5Dcreate2(arrays, name.c_str(), H5T_IEEE_F64LE, space, lcpl, H5P_DEFAULT, H5P_DEFAULT));
    if (n > 0) H5_CHECK(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, a.values.data()));
  }
  arrays.reset();
  tables.reset();
  file.close("H5Fclose(unit file)");
  write_unit_seal(path);
}

namespace {

// Opens a unit file whose seal matches its bytes and refuses one from a newer schema.
H5Id open_unit_file(const std::string& path) {
  verify_unit_seal(path);
  H5Id file = open_hdf5_read(path);
  const long long version = read_int_attribute(file, "schema_version");
  if (version > kStoreSchemaVersion)
    throw StorageError("written by schema version " + std::to_string(version) + ", newer than this build's " +
                       std::to_string(kStoreSchemaVersion) + "; use a newer linsweep");
  return file;
}

// The root attributes that name a unit.
UnitResult read_identity(const H5Id& file) {
  UnitResult u;
  u.unit_id = read_string_attribute(file, "unit_id");
  u.kind = read_string_attribute(file, "kind");
  u.params = read_string_attribute(file, "params");
  return u;
}

}  // namespace

UnitResult read_unit_header(const std::string& path) {
  silence_hdf5_errors();
  try {
    return read_identity(open_unit_file(path));
  } catch (const Error& e) {
    throw StorageError(path + ": " + e.what(), ExitCode::kBadInput);
  }
}

std::string read_unit_params_file(const std::string& path) { return read_unit_header(path).params; }

UnitResult read_unit_file(const std::string& path) {
  silence_hdf5_errors();
  try {
    H5Id file = open_unit_file(path);
    UnitResult u = read_identity(file);
    H5Id tables = H5_GROUP(H5Gopen2(file, "tables", H5P_DEFAULT));
    for (const auto& schema : table_schemas())
      if (H5Lexists(tables, schema.name.c_str(), H5P_DEFAULT) > 0) u.tables.push_back(read_table(tables, schema));
    H5Id arrays = H5_GROUP(H5Gopen2(file, "arrays", H5P_DEFAULT));
    ArrayVisit visit{&u.arrays, {}};
    H5_CHECK(H5Ovisit2(arrays, H5_INDEX_NAME, H5_ITER_INC, visit_array, &visit, H5O_INFO_BASIC));
    if (!visit.error.empty()) throw StorageError(visit.error);
    return u;
  } catch (const Error& e) {
    throw StorageError(path + ": " + e.what(), ExitCode::kBadInput);
  }
}

}  // namespace linsweep
