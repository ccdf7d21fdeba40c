// Activation shard writing (chunked, streamed) and range reading.
#include "storage/activation_shard.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "storage/half.hpp"

namespace linsweep {
namespace {

H5Id create_dataset(hid_t file, const char* name, hid_t type, int rank, std::int64_t width,
                    const ActivationOptions& opt) {
  hsize_t dims[2] = {0, static_cast<hsize_t>(width)};
  hsize_t maxdims[2] = {H5S_UNLIMITED, static_cast<hsize_t>(width)};
  hsize_t chunk[2] = {static_cast<hsize_t>(opt.chunk_rows), static_cast<hsize_t>(width)};
  H5Id space = H5_SPACE(H5Screate_simple(rank, dims, maxdims));
  H5Id dcpl = H5_PLIST(H5Pcreate(H5P_DATASET_CREATE));
  H5_CHECK(H5Pset_chunk(dcpl, rank, chunk));
  if (opt.compress) {
    H5_CHECK(H5Pset_shuffle(dcpl));
    H5_CHECK(H5Pset_deflate(dcpl, 1));
  }
  return H5_DATASET(H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
}

}  // namespace

ActivationDType parse_activation_dtype(const std::string& name) {
  if (auto d = parse_enum(kActivationDTypes, name)) return *d;
  throw StorageError("activation dtype '" + name + "' is unknown (" + enum_names_list(kActivationDTypes) + ")",
                     ExitCode::kBadInput);
}

ActivationWriter::ActivationWriter(std::string path, std::int64_t d, ActivationOptions options)
    : path_(std::move(path)), d_(d), opt_(options) {
  silence_hdf5_errors();
  if (d_ <= 0 || opt_.chunk_rows <= 0) throw StorageError(path_ + ": invalid activation shape");
  const auto slash = path_.find_last_of('/');
  tmp_ = (slash == std::string::npos ? std::string() : path_.substr(0, slash + 1)) + ".tmp-" +
         std::to_string(::getpid()) + "-" + path_.substr(slash == std::string::npos ? 0 : slash + 1);
  file_ = H5_FILE(H5Fcreate(tmp_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  half_type_ = make_float16_type();
  hid_t xtype = opt_.dtype == ActivationDType::kFloat16   ? half_type_.get()
                : opt_.dtype == ActivationDType::kFloat32 ? H5T_IEEE_F32LE
                                                          : H5T_STD_U16LE;
  x_ = create_dataset(file_, "X", xtype, 2, d_, opt_);
  if (opt_.with_y) y_ = create_dataset(file_, "Y", xtype, 2, d_, opt_);
  if (opt_.with_delta) {
    delta_ = create_dataset(file_, "delta", H5T_IEEE_F32LE, 1, 1, opt_);
    next_ids_ = create_dataset(file_, "next_token_ids", H5T_STD_I32LE, 1, 1, opt_);
  }
  ids_ = create_dataset(file_, "token_ids", H5T_STD_I32LE, 1, 1, opt_);
  window_ = create_dataset(file_, "window", H5T_STD_I64LE, 1, 1, opt_);
  position_ = create_dataset(file_, "position", H5T_STD_I32LE, 1, 1, opt_);
  const ShardDescription& what = opt_.describes;
  write_attributes(file_, {{"dtype", activation_dtype_name(opt_.dtype)},
                           {"d", d_},
                           {"model", what.model},
                           {"corpus", what.corpus},
                           {"split", what.split},
                           {"layer", what.layer},
                           {"unit", what.unit}});
  write_string_attribute(x_, "meaning", "the MLP's input at the row's position (the normalised residual entering it)");
  if (y_.valid()) write_string_attribute(y_, "meaning", "the MLP's output at the row's position");
  if (delta_.valid()) {
    write_string_attribute(delta_, "meaning",
                           "nll_linear - nll_full of the next token when this layer's MLP is its affine surrogate");
    write_string_attribute(next_ids_, "meaning", "the next token id: the one whose NLL delta measures");
  }
  write_string_attribute(ids_, "meaning", "the input token id at the row's position (the one the MLP sees)");
  write_string_attribute(window_, "meaning", "the window's index in the split (row-major windows of `context` tokens)");
  write_string_attribute(position_, "meaning", "the position in the window, 0..context-2 (those with a next token)");
  if (opt_.dtype == ActivationDType::kBFloat16) {
    write_string_attribute(x_, "encoding", "bfloat16");
    if (y_.valid()) write_string_attribute(y_, "encoding", "bfloat16");
  }
}

ActivationWriter::~ActivationWriter() {
  if (closed_) return;
  x_.reset(), y_.reset(), delta_.reset(), next_ids_.reset(), ids_.reset(), window_.reset(), position_.reset();
  file_.reset();
  std::remove(tmp_.c_str());
}

void ActivationWriter::extend(H5Id& ds, int rank, hid_t mem_type, const void* data, std::int64_t rows,
                              std::int64_t width) {
  hsize_t new_dims[2] = {static_cast<hsize_t>(rows_ + rows), static_cast<hsize_t>(width)};
  H5_CHECK(H5Dset_extent(ds, new_dims));
  H5Id fspace = H5_SPACE(H5Dget_space(ds));
  hsize_t start[2] = {static_cast<hsize_t>(rows_), 0};
  hsize_t count[2] = {static_cast<hsize_t>(rows), static_cast<hsize_t>(width)};
  H5_CHECK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, nullptr, count, nullptr));
  H5Id mspace = H5_SPACE(H5Screate_simple(rank, count, nullptr));
  H5_CHECK(H5Dwrite(ds, mem_type, mspace, fspace, H5P_DEFAULT, data));
}

void ActivationWriter::append(const ActivationRows& in) {
  if (closed_) throw StorageError(path_ + ": append after close");
  const std::int64_t rows = in.rows;
  if (rows <= 0) return;
  if (in.x == nullptr || in.token_ids == nullptr || in.window == nullptr || in.position == nullptr ||
      (opt_.with_y && in.y == nullptr) || (opt_.with_delta && (in.delta == nullptr || in.next_token_ids == nullptr)))
    throw StorageError(path_ + ": append without an array the shard was created with");
  auto write_matrix = [&](H5Id& ds, const float* src) {
    if (opt_.dtype == ActivationDType::kFloat32) {
      extend(ds, 2, H5T_NATIVE_FLOAT, src, rows, d_);
      return;
    }
    const std::size_t n = static_cast<std::size_t>(rows * d_);
    scratch_.resize(n);
    if (opt_.dtype == ActivationDType::kFloat16) {
      floats_to_halves(src, scratch_.data(), n);
      extend(ds, 2, half_type_, scratch_.data(), rows, d_);
    } else {
      for (std::size_t i = 0; i < n; ++i) scratch_[i] = float_to_bfloat16(src[i]);
      extend(ds, 2, H5T_NATIVE_UINT16, scratch_.data(), rows, d_);
    }
  };
  write_matrix(x_, in.x);
  if (opt_.with_y) write_matrix(y_, in.y);
  if (opt_.with_delta) {
    extend(delta_, 1, H5T_NATIVE_FLOAT, in.delta, rows, 1);
    extend(next_ids_, 1, H5T_NATIVE_INT32, in.next_token_ids, rows, 1);
  }
  extend(ids_, 1, H5T_NATIVE_INT32, in.token_ids, rows, 1);
  extend(window_, 1, H5T_NATIVE_INT64, in.window, rows, 1);
  extend(position_, 1, H5T_NATIVE_INT32, in.position, rows, 1);
  rows_ += rows;
}

void ActivationWriter::close() {
  if (closed_) return;
  write_int_attribute(file_, "rows", rows_);
  x_.close("H5Dclose(X)");
  y_.reset(), delta_.reset(), next_ids_.reset(), ids_.reset(), window_.reset(), position_.reset();
  file_.close("H5Fclose(activation shard)");
  int fd = ::open(tmp_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    if (fd >= 0) ::close(fd);
    throw StorageError(tmp_ + ": fsync failed: " + std::strerror(errno));
  }
  ::close(fd);
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0)
    throw StorageError(path_ + ": rename failed: " + std::strerror(errno));
  // The rename is durable only once the directory is: a unit committed after close() may rely on it.
  const auto slash = path_.rfind('/');
  sync_directory(slash == std::string::npos ? "." : path_.substr(0, slash));
  closed_ = true;
}

ActivationReader::ActivationReader(const std::string& path) : path_(path) {
  silence_hdf5_errors();
  try {
    file_ = open_hdf5_read(path);
    dtype_ = parse_activation_dtype(read_string_attribute(file_, "dtype"));
    rows_ = read_int_attribute(file_, "rows");
    auto open = [&](const char* name, int rank, bool required) {
      if (H5Lexists(file_, name, H5P_DEFAULT) <= 0) {
        if (required) throw StorageError(std::string("dataset '") + name + "' is missing");
        return H5Id();
      }
      H5Id ds = H5_DATASET(H5Dopen2(file_, name, H5P_DEFAULT));
      H5Id space = H5_SPACE(H5Dget_space(ds));
      hsize_t dims[2] = {0, 0};
      if (H5Sget_simple_extent_ndims(space) != rank)
        throw StorageError(std::string("dataset '") + name + "' has the wrong rank");
      H5_CHECK(H5Sget_simple_extent_dims(space, dims, nullptr));
      if (static_cast<std::int64_t>(dims[0]) != rows_)
        throw StorageError(std::string("dataset '") + name + "' has " + std::to_string(dims[0]) + " rows, not " +
                           std::to_string(rows_));
      if (rank == 2) {
        if (d_ == 0) d_ = static_cast<std::int64_t>(dims[1]);
        if (static_cast<std::int64_t>(dims[1]) != d_) throw StorageError("X and Y widths differ");
      }
      return ds;
    };
    x_ = open("X", 2, true);
    y_ = open("Y", 2, false);
    delta_ = open("delta", 1, false);
    next_ids_ = open("next_token_ids", 1, false);
    ids_ = open("token_ids", 1, true);
    window_ = open("window", 1, true);
    position_ = open("position", 1, true);
    // Declared sizes are checked before anything is allocated from them: a chunked dataset
    // can claim a huge extent with no storage behind it.
    if (rows_ < 0 || rows_ > (std::int64_t{1} << 40) || d_ < 1 || d_ > (1 << 20) ||
        rows_ > (std::int64_t{1} << 36) / d_)
      throw StorageError("declared size " + std::to_string(rows_) + " x " + std::to_string(d_) + " is out of range");
  } catch (const Error& e) {
    throw StorageError(path + ": " + e.what(), ExitCode::kBadInput);
  }
}

void ActivationReader::check_range(std::int64_t begin, std::int64_t count) const {
  if (begin < 0 || count < 0 || begin > rows_ || count > rows_ - begin)
    throw StorageError(path_ + ": rows [" + std::to_string(begin) + ", " + std::to_string(begin + count) +
                           ") are outside the shard's " + std::to_string(rows_),
                       ExitCode::kBadInput);
}

std::vector<float> ActivationReader::matrix(const H5Id& ds, std::int64_t begin, std::int64_t count) const {
  check_range(begin, count);
  std::vector<float> out(static_cast<std::size_t>(count * d_));
  if (count == 0) return out;
  H5Id fspace = H5_SPACE(H5Dget_space(ds));
  hsize_t start[2] = {static_cast<hsize_t>(begin), 0}, cnt[2] = {static_cast<hsize_t>(count), static_cast<hsize_t>(d_)};
  H5_CHECK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, nullptr, cnt, nullptr));
  H5Id mspace = H5_SPACE(H5Screate_simple(2, cnt, nullptr));
  if (dtype_ == ActivationDType::kBFloat16) {
    std::vector<std::uint16_t> raw(out.size());
    H5_CHECK(H5Dread(ds, H5T_NATIVE_UINT16, mspace, fspace, H5P_DEFAULT, raw.data()));
    for (std::size_t i = 0; i < raw.size(); ++i) out[i] = bfloat16_to_float(raw[i]);
  } else {
    H5_CHECK(H5Dread(ds, H5T_NATIVE_FLOAT, mspace, fspace, H5P_DEFAULT, out.data()));  // HDF5 converts half
  }
  return out;
}

template <typename T>
std::vector<T> ActivationReader::column(const H5Id& ds, hid_t type, std::int64_t begin, std::int64_t count) const {
  check_range(begin, count);
  std::vector<T> out(static_cast<std::size_t>(count));
  if (count == 0) return out;
  H5Id fspace = H5_SPACE(H5Dget_space(ds));
  hsize_t start[1] = {static_cast<hsize_t>(begin)}, cnt[1] = {static_cast<hsize_t>(count)};
  H5_CHECK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, nullptr, cnt, nullptr));
  H5Id mspace = H5_SPACE(H5Screate_simple(1, cnt, nullptr));
  H5_CHECK(H5Dread(ds, type, mspace, fspace, H5P_DEFAULT, out.data()));
  return out;
}

std::vector<float> ActivationReader::x(std::int64_t b, std::int64_t c) const { return matrix(x_, b, c); }
std::vector<float> ActivationReader::y(std::int64_t b, std::int64_t c) const {
  if (!y_.valid()) throw StorageError(path_ + ": shard has no Y", ExitCode::kBadInput);
  return matrix(y_, b, c);
}
std::vector<float> ActivationReader::delta(std::int64_t b, std::int64_t c) const {
  if (!delta_.valid()) throw StorageError(path_ + ": shard has no delta", ExitCode::kBadInput);
  return column<float>(delta_, H5T_NATIVE_FLOAT, b, c);
}
std::vector<std::int32_t> ActivationReader::token_ids(std::int64_t b, std::int64_t c) const {
  return column<std::int32_t>(ids_, H5T_NATIVE_INT32, b, c);
}
std::vector<std::int32_t> ActivationReader::next_token_ids(std::int64_t b, std::int64_t c) const {
  if (!next_ids_.valid()) throw StorageError(path_ + ": shard has no next_token_ids", ExitCode::kBadInput);
  return column<std::int32_t>(next_ids_, H5T_NATIVE_INT32, b, c);
}
std::vector<std::int64_t> ActivationReader::window(std::int64_t b, std::int64_t c) const {
  return column<std::int64_t>(window_, H5T_NATIVE_INT64, b, c);
}
std::vector<std::int32_t> ActivationReader::position(std::int64_t b, std::int64_t c) const {
  return column<std::int32_t>(position_, H5T_NATIVE_INT32, b, c);
}

}  // namespace linsweep
