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

// H5Ovisit's callback takes H5O_info2_t from HDF5 1.12 (H5Ovisit3); 1.10 has only H5Ovisit2
// with H5O_info_t. In 1.12 and later H5Ovisit2 remains, deprecated, with H5O_info1_t, while
// the name H5O_info_t means H5O_info2_t: H5Ovisit2 with H5O_info_t no longer compiles.
#if H5_VERSION_GE(1, 12, 0)
using ObjectInfo = H5O_info2_t;
herr_t visit_objects(hid_t obj, H5O_iterate2_t op, void* data) {
  return H5Ovisit3(obj, H5_INDEX_NAME, H5_ITER_INC, op, data, H5O_INFO_BASIC);
}
#else
using ObjectInfo = H5O_info_t;
herr_t visit_objects(hid_t obj, H5O_iterate_t op, void* data) {
  return H5Ovisit2(obj, H5_INDEX_NAME, H5_ITER_INC, op, data, H5O_INFO_BASIC);
}
#endif

herr_t visit_array(hid_t group, const char* name, const ObjectInfo* info, void* data) {
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

namespace {

H5Id create_sealable(const std::string& path) {
  silence_hdf5_errors();
  H5Id fcpl = H5_PLIST(H5Pcreate(H5P_FILE_CREATE));
  H5_CHECK(H5Pset_userblock(fcpl, kUnitSealBytes));  // room for the seal (unit_seal.hpp)
  return H5_FILE(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl, H5P_DEFAULT));
}

void write_identity(const H5Id& file, const UnitResult& unit) {
  write_attributes(file, {{"schema_version", kStoreSchemaVersion},
                          {"unit_id", unit.unit_id},
                          {"kind", unit.kind},
                          {"params", unit.params}});
}

void write_arrays_group(const H5Id& file, const UnitResult& unit) {
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
    if (n != a.values.size())
      throw StorageError("array '" + name + "' has " + std::to_string(a.values.size()) + " values for its shape");
    H5Id space = H5_SPACE(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
    H5Id ds = H5_DATASET(H5Dcreate2(arrays, name.c_str(), H5T_IEEE_F64LE, space, lcpl, H5P_DEFAULT, H5P_DEFAULT));
    if (n > 0) H5_CHECK(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, a.values.data()));
  }
}

}  // namespace

std::string unit_arrays_path(const std::string& unit_path) {
  const bool h5 = unit_path.size() >= 3 && unit_path.compare(unit_path.size() - 3, 3, ".h5") == 0;
  return (h5 ? unit_path.substr(0, unit_path.size() - 3) : unit_path) + ".arrays.h5";
}

void write_unit_main_file(const std::string& path, const UnitResult& unit) {
  H5Id file = create_sealable(path);
  write_identity(file, unit);
  const UnitProvenance& p = unit.provenance;
  write_attributes(file, {{"arrays", static_cast<std::int64_t>(unit.arrays.size())},
                          {"linsweep_version", p.version},
                          {"host", p.host},
                          {"rank", p.rank},
                          {"group_ranks", p.group_ranks},
                          {"communicator", p.communicator},
                          {"started", p.started},
                          {"finished", p.finished},
                          {"dtype", p.dtype},
                          {"activation_dtype", p.activation_dtype},
                          {"peak_host_mib", p.peak_host_mib},
                          {"peak_device_mib", p.peak_device_mib}});
  H5Id tables = H5_GROUP(H5Gcreate2(file, "tables", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  for (const auto& t : unit.tables) write_table(tables, t);
  tables.reset();
  file.close("H5Fclose(unit file)");
  write_unit_seal(path);
}

void write_unit_arrays_file(const std::string& path, const UnitResult& unit) {
  H5Id file = create_sealable(path);
  write_identity(file, unit);
  write_arrays_group(file, unit);
  file.close("H5Fclose(unit arrays file)");
  write_unit_seal(path);
}

void write_unit_file(const std::string& path, const UnitResult& unit) {
  if (!unit.arrays.empty()) write_unit_arrays_file(unit_arrays_path(path), unit);
  write_unit_main_file(path, unit);
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

// The root attributes of a unit file. Schema-1 files have no provenance and hold their arrays.
UnitHeader read_attributes(const H5Id& file) {
  UnitHeader h;
  h.unit_id = read_string_attribute(file, "unit_id");
  h.kind = read_string_attribute(file, "kind");
  h.params = read_string_attribute(file, "params");
  if (!has_attribute(file, "arrays")) return h;
  h.arrays = read_int_attribute(file, "arrays");
  if (h.arrays < 0) throw StorageError("attribute 'arrays' is negative");
  UnitProvenance& p = h.provenance;
  p.version = read_string_attribute(file, "linsweep_version");
  p.host = read_string_attribute(file, "host");
  p.rank = static_cast<int>(read_int_attribute(file, "rank"));
  p.group_ranks = static_cast<int>(read_int_attribute(file, "group_ranks"));
  if (has_attribute(file, "communicator")) p.communicator = read_string_attribute(file, "communicator");
  p.started = read_double_attribute(file, "started");
  p.finished = read_double_attribute(file, "finished");
  if (has_attribute(file, "dtype")) p.dtype = read_string_attribute(file, "dtype");
  if (has_attribute(file, "activation_dtype")) p.activation_dtype = read_string_attribute(file, "activation_dtype");
  if (has_attribute(file, "peak_host_mib")) p.peak_host_mib = read_double_attribute(file, "peak_host_mib");
  if (has_attribute(file, "peak_device_mib")) p.peak_device_mib = read_double_attribute(file, "peak_device_mib");
  return h;
}

void read_arrays_group(const H5Id& file, std::map<std::string, ArrayData>* out) {
  H5Id arrays = H5_GROUP(H5Gopen2(file, "arrays", H5P_DEFAULT));
  ArrayVisit visit{out, {}};
  H5_CHECK(visit_objects(arrays, visit_array, &visit));
  if (!visit.error.empty()) throw StorageError(visit.error);
}

// Identity and tables; the arrays too when `with_arrays`.
UnitResult read_unit(const std::string& path, bool with_arrays) {
  silence_hdf5_errors();
  UnitResult u;
  std::int64_t arrays = 0;
  try {
    H5Id file = open_unit_file(path);
    UnitHeader h = read_attributes(file);
    u.unit_id = std::move(h.unit_id);
    u.kind = std::move(h.kind);
    u.params = std::move(h.params);
    u.provenance = std::move(h.provenance);
    arrays = h.arrays;
    H5Id tables = H5_GROUP(H5Gopen2(file, "tables", H5P_DEFAULT));
    for (const auto& name : link_names(tables)) u.tables.push_back(read_any_table(tables, name));
    tables.reset();
    const bool inline_arrays = H5Lexists(file, "arrays", H5P_DEFAULT) > 0;  // schema 1
    if (with_arrays && inline_arrays) read_arrays_group(file, &u.arrays);
  } catch (const Error& e) {
    throw StorageError(path + ": " + e.what(), ExitCode::kBadInput);
  }
  if (!with_arrays || arrays == 0) return u;
  const std::string apath = unit_arrays_path(path);
  try {
    H5Id file = open_unit_file(apath);
    if (read_string_attribute(file, "unit_id") != u.unit_id) throw StorageError("holds another unit's arrays");
    read_arrays_group(file, &u.arrays);
    if (static_cast<std::int64_t>(u.arrays.size()) != arrays)
      throw StorageError("holds " + std::to_string(u.arrays.size()) + " arrays; its unit file names " +
                         std::to_string(arrays));
  } catch (const Error& e) {
    throw StorageError(apath + ": " + e.what(), ExitCode::kBadInput);
  }
  return u;
}

}  // namespace

UnitHeader read_unit_header(const std::string& path) {
  silence_hdf5_errors();
  try {
    return read_attributes(open_unit_file(path));
  } catch (const Error& e) {
    throw StorageError(path + ": " + e.what(), ExitCode::kBadInput);
  }
}

std::string read_unit_params_file(const std::string& path) { return read_unit_header(path).params; }

UnitResult read_unit_file(const std::string& path) { return read_unit(path, true); }

UnitResult read_unit_tables(const std::string& path) { return read_unit(path, false); }

}  // namespace linsweep
