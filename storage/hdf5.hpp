// RAII ownership and checked calls for the HDF5 C API (only storage/ includes this).
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <variant>

namespace linsweep {

// Throws StorageError("<file>:<line>: <call> failed: <HDF5's innermost message>") when
// `status` is negative, or DiskFullError("<call> failed: No space left on device") when a
// write under it failed with ENOSPC or EDQUOT; returns it otherwise. HDF5's own printing is
// switched off once.
hid_t h5_check(hid_t status, const char* call, const char* file, int line);
#define H5_CHECK(call) ::linsweep::h5_check(static_cast<hid_t>(call), #call, __FILE__, __LINE__)

// HDF5's innermost message for the last failed call (and clears the error stack).
std::string h5_error_message();

// Silences HDF5's automatic error printing (errors are raised as StorageError instead).
void silence_hdf5_errors();

// Owns one HDF5 identifier and closes it with the matching H5?close. Move-only.
class H5Id {
 public:
  enum class Kind { kFile, kGroup, kDataset, kDataspace, kDatatype, kAttribute, kPropertyList };
  H5Id() = default;
  H5Id(hid_t id, Kind kind) : id_(id), kind_(kind) {}
  ~H5Id() { reset(); }
  H5Id(H5Id&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)), kind_(o.kind_) {}
  H5Id& operator=(H5Id&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, H5I_INVALID_HID);
      kind_ = o.kind_;
    }
    return *this;
  }
  H5Id(const H5Id&) = delete;
  H5Id& operator=(const H5Id&) = delete;

  hid_t get() const noexcept { return id_; }
  operator hid_t() const noexcept { return id_; }  // NOLINT: passes straight to the C API
  bool valid() const noexcept { return id_ >= 0; }
  // Closes now and reports failure (a file's close is where buffered writes can fail).
  void close(const char* what);
  void reset() noexcept;

 private:
  hid_t id_ = H5I_INVALID_HID;
  Kind kind_ = Kind::kFile;
};

// Checked constructors of owned identifiers.
H5Id h5_owned(hid_t id, H5Id::Kind kind, const char* call, const char* file, int line);
#define H5_FILE(call) ::linsweep::h5_owned((call), ::linsweep::H5Id::Kind::kFile, #call, __FILE__, __LINE__)
#define H5_GROUP(call) ::linsweep::h5_owned((call), ::linsweep::H5Id::Kind::kGroup, #call, __FILE__, __LINE__)
#define H5_DATASET(call) ::linsweep::h5_owned((call), ::linsweep::H5Id::Kind::kDataset, #call, __FILE__, __LINE__)
#define H5_SPACE(call) ::linsweep::h5_owned((call), ::linsweep::H5Id::Kind::kDataspace, #call, __FILE__, __LINE__)
#define H5_TYPE(call) ::linsweep::h5_owned((call), ::linsweep::H5Id::Kind::kDatatype, #call, __FILE__, __LINE__)
#define H5_ATTR(call) ::linsweep::h5_owned((call), ::linsweep::H5Id::Kind::kAttribute, #call, __FILE__, __LINE__)
#define H5_PLIST(call) ::linsweep::h5_owned((call), ::linsweep::H5Id::Kind::kPropertyList, #call, __FILE__, __LINE__)

// Opens an existing HDF5 file read-only; a file that HDF5 cannot open is reported as
// StorageError(kBadInput) "truncated or corrupted HDF5 file (<HDF5's message>)".
H5Id open_hdf5_read(const std::string& path);

// Throws StorageError(kBadInput) "<what> declares N elements but stores only B bytes" unless
// dataset `ds` has `elements` × (its element size) bytes stored in the file. A read must call it
// before allocating from a declared extent: a dataset can declare any extent with no storage
// behind it (HDF5 then reads fill values), so a few bytes of a corrupted file could otherwise
// ask for gigabytes. Only for datasets written uncompressed, as every store file is.
void require_stored(hid_t ds, unsigned long long elements, const std::string& what);

// IEEE binary16 as an HDF5 float type (HDF5 1.10 has no predefined one; h5py reads it as float16).
H5Id make_float16_type();

// String attributes on any object; read throws StorageError when absent.
void write_string_attribute(hid_t obj, const std::string& name, const std::string& value);
std::string read_string_attribute(hid_t obj, const std::string& name);

bool has_attribute(hid_t obj, const std::string& name);
void write_int_attribute(hid_t obj, const std::string& name, long long value);
long long read_int_attribute(hid_t obj, const std::string& name);
void write_double_attribute(hid_t obj, const std::string& name, double value);
double read_double_attribute(hid_t obj, const std::string& name);

// A named attribute value for write_attributes: a string, a 64-bit integer or a double.
struct Attribute {
  const char* name;
  std::variant<std::string, std::int64_t, double> value;
};

// Writes each attribute on `obj` as write_string_attribute, write_int_attribute or
// write_double_attribute would, in order. Throws StorageError.
void write_attributes(hid_t obj, std::initializer_list<Attribute> attributes);

}  // namespace linsweep
