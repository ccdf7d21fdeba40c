// HDF5 error capture and identifier ownership.
#include "storage/hdf5.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "storage/versions.hpp"

namespace linsweep {
namespace {

struct ErrorWalk {
  std::string innermost;
  int disk_full_errno = 0;  // ENOSPC or EDQUOT when a write in the stack failed with it
};

herr_t walk_error(unsigned n, const H5E_error2_t* err, void* data) {
  auto* out = static_cast<ErrorWalk*>(data);
  if (err == nullptr || err->desc == nullptr) return 0;
  if (n == 0) {
    out->innermost = err->desc;  // the sec2 driver's record quotes ctime(), which ends in '\n'
    std::replace(out->innermost.begin(), out->innermost.end(), '\n', ' ');
  }
  // The sec2 driver quotes the failed write's errno: "..., errno = 28, error message = ...".
  const std::string desc = err->desc;
  for (int e : {ENOSPC, EDQUOT})
    if (desc.find("errno = " + std::to_string(e) + ",") != std::string::npos) out->disk_full_errno = e;
  return 0;
}

ErrorWalk walk_errors() {
  ErrorWalk w;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, walk_error, &w);
  H5Eclear2(H5E_DEFAULT);
  return w;
}

// HDF5 closes whatever is still open from an atexit handler. A file whose H5Fclose failed (a
// write error while flushing, e.g. a full disk) stays half-closed in its ID table, and that
// handler then dereferences it: SIGSEGV in H5F__close_cb (HDF5 1.10), so a clean "exit 1, disk
// full" became a crash. Every file here is closed explicitly (H5Id), so the handler is not
// registered. This runs before main, before anything initialises the library.
const bool kHdf5AtexitOff = H5dont_atexit() >= 0;

}  // namespace

void silence_hdf5_errors() {
  static std::once_flag once;
  std::call_once(once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

std::string h5_error_message() { return walk_errors().innermost; }

H5Id open_hdf5_read(const std::string& path) {
  silence_hdf5_errors();
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    throw StorageError("not an HDF5 file (truncated or corrupted?)", ExitCode::kBadInput);
  }
  hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) throw StorageError("truncated or corrupted HDF5 file (" + h5_error_message() + ")", ExitCode::kBadInput);
  return H5Id(id, H5Id::Kind::kFile);
}

hid_t h5_check(hid_t status, const char* call, const char* file, int line) {
  if (status >= 0) return status;
  const ErrorWalk w = walk_errors();
  // A full disk is the user's to fix: the errno's text, not the driver's long record.
  if (w.disk_full_errno != 0) throw DiskFullError(std::string(call) + " failed: " + std::strerror(w.disk_full_errno));
  throw StorageError(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed" +
                     (w.innermost.empty() ? "" : ": " + w.innermost));
}

H5Id h5_owned(hid_t id, H5Id::Kind kind, const char* call, const char* file, int line) {
  h5_check(id, call, file, line);
  return H5Id(id, kind);
}

namespace {

// H5Fclose, H5Gclose, … for the kind of handle `id` is.
herr_t close_handle(hid_t id, H5Id::Kind kind) noexcept {
  using Kind = H5Id::Kind;
  static constexpr std::pair<Kind, herr_t (*)(hid_t)> kClose[] = {
      {Kind::kFile, H5Fclose},        {Kind::kGroup, H5Gclose},    {Kind::kDataset, H5Dclose},
      {Kind::kDataspace, H5Sclose},   {Kind::kDatatype, H5Tclose}, {Kind::kAttribute, H5Aclose},
      {Kind::kPropertyList, H5Pclose}};
  for (const auto& [k, close] : kClose)
    if (k == kind) return close(id);
  return -1;
}

}  // namespace

void H5Id::reset() noexcept {
  if (id_ < 0) return;
  close_handle(std::exchange(id_, H5I_INVALID_HID), kind_);
}

void H5Id::close(const char* what) {
  if (id_ < 0) return;
  h5_check(close_handle(std::exchange(id_, H5I_INVALID_HID), kind_), what, __FILE__, __LINE__);
}

void require_stored(hid_t ds, unsigned long long elements, const std::string& what) {
  if (elements == 0) return;
  H5Id type = H5_TYPE(H5Dget_type(ds));
  const std::size_t element_size = H5Tget_size(type);
  if (element_size == 0) throw StorageError(what + " has an element type of size 0", ExitCode::kBadInput);
  // H5Dget_storage_size is 0 both for no storage and on failure: either way nothing to read.
  const hsize_t stored = H5Dget_storage_size(ds);
  H5Eclear2(H5E_DEFAULT);
  if (elements > stored / element_size)
    throw StorageError(what + " declares " + std::to_string(elements) + " elements of " + std::to_string(element_size) +
                           " bytes but stores only " + std::to_string(stored) + " bytes",
                       ExitCode::kBadInput);
}

H5Id make_float16_type() {
  H5Id t = H5_TYPE(H5Tcopy(H5T_IEEE_F32LE));
  H5_CHECK(H5Tset_fields(t, 15, 10, 5, 0, 10));
  H5_CHECK(H5Tset_size(t, 2));
  H5_CHECK(H5Tset_ebias(t, 15));
  return t;
}

namespace {

// A scalar attribute `name` of type `file_type` on `obj` (replacing one of that name), written
// from `value` in memory type `memory_type`.
void write_number_attribute(hid_t obj, const std::string& name, hid_t file_type, hid_t memory_type, const void* value) {
  H5Id space = H5_SPACE(H5Screate(H5S_SCALAR));
  if (H5Aexists(obj, name.c_str()) > 0) H5_CHECK(H5Adelete(obj, name.c_str()));
  H5Id attr = H5_ATTR(H5Acreate2(obj, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT));
  H5_CHECK(H5Awrite(attr, memory_type, value));
}

}  // namespace

void write_string_attribute(hid_t obj, const std::string& name, const std::string& value) {
  H5Id type = H5_TYPE(H5Tcopy(H5T_C_S1));
  H5_CHECK(H5Tset_size(type, value.empty() ? 1 : value.size()));
  H5_CHECK(H5Tset_cset(type, H5T_CSET_UTF8));
  H5Id space = H5_SPACE(H5Screate(H5S_SCALAR));
  if (H5Aexists(obj, name.c_str()) > 0) H5_CHECK(H5Adelete(obj, name.c_str()));
  H5Id attr = H5_ATTR(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT));
  const std::string padded = value.empty() ? std::string(1, '\0') : value;
  H5_CHECK(H5Awrite(attr, type, padded.data()));
}

bool has_attribute(hid_t obj, const std::string& name) { return H5Aexists(obj, name.c_str()) > 0; }

namespace {

// Our attributes hold one value. H5Aread writes every element of the attribute's dataspace, so
// a file whose attribute has more (or none) would write past the one-value buffer.
void require_one_value(const H5Id& attr, const std::string& name) {
  H5Id space = H5_SPACE(H5Aget_space(attr));
  if (H5Sget_simple_extent_npoints(space) != 1)
    throw StorageError("attribute '" + name + "' does not hold exactly one value", ExitCode::kBadInput);
}

}  // namespace

std::string read_string_attribute(hid_t obj, const std::string& name) {
  if (!has_attribute(obj, name)) throw StorageError("attribute '" + name + "' is missing", ExitCode::kBadInput);
  H5Id attr = H5_ATTR(H5Aopen(obj, name.c_str(), H5P_DEFAULT));
  H5Id type = H5_TYPE(H5Aget_type(attr));
  if (H5Tget_class(type) != H5T_STRING)
    throw StorageError("attribute '" + name + "' is not a string", ExitCode::kBadInput);
  if (H5Tis_variable_str(type) > 0)
    throw StorageError("attribute '" + name + "' is a variable-length string", ExitCode::kBadInput);
  const std::size_t size = H5Tget_size(type);
  if (size == 0 || size > (64u << 20))
    throw StorageError("attribute '" + name + "' has an invalid size", ExitCode::kBadInput);
  require_one_value(attr, name);
  std::vector<char> buf(size);
  H5_CHECK(H5Aread(attr, type, buf.data()));
  std::string s(buf.data(), size);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

void write_int_attribute(hid_t obj, const std::string& name, long long value) {
  write_number_attribute(obj, name, H5T_STD_I64LE, H5T_NATIVE_LLONG, &value);
}

long long read_int_attribute(hid_t obj, const std::string& name) {
  if (!has_attribute(obj, name)) throw StorageError("attribute '" + name + "' is missing", ExitCode::kBadInput);
  H5Id attr = H5_ATTR(H5Aopen(obj, name.c_str(), H5P_DEFAULT));
  require_one_value(attr, name);
  long long v = 0;
  H5_CHECK(H5Aread(attr, H5T_NATIVE_LLONG, &v));
  return v;
}

void write_double_attribute(hid_t obj, const std::string& name, double value) {
  write_number_attribute(obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

double read_double_attribute(hid_t obj, const std::string& name) {
  if (!has_attribute(obj, name)) throw StorageError("attribute '" + name + "' is missing", ExitCode::kBadInput);
  H5Id attr = H5_ATTR(H5Aopen(obj, name.c_str(), H5P_DEFAULT));
  require_one_value(attr, name);
  double v = 0;
  H5_CHECK(H5Aread(attr, H5T_NATIVE_DOUBLE, &v));
  return v;
}

std::string hdf5_version() {
  unsigned major = 0, minor = 0, release = 0;
  if (H5get_libversion(&major, &minor, &release) < 0) return "HDF5 (version unknown)";
  return "HDF5 " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
}

void write_attributes(hid_t obj, std::initializer_list<Attribute> attributes) {
  for (const auto& a : attributes) {
    if (const auto* text = std::get_if<std::string>(&a.value)) write_string_attribute(obj, a.name, *text);
    if (const auto* integer = std::get_if<std::int64_t>(&a.value)) write_int_attribute(obj, a.name, *integer);
    if (const auto* number = std::get_if<double>(&a.value)) write_double_attribute(obj, a.name, *number);
  }
}

}  // namespace linsweep
