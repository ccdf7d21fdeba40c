// Chunked HDF5 activation shards: X (and optionally Y), δ with the token it scores, token ids,
// window and position.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/enum_names.hpp"
#include "storage/hdf5.hpp"

namespace linsweep {

enum class ActivationDType { kFloat16, kFloat32, kBFloat16 };
inline constexpr EnumName<ActivationDType> kActivationDTypes[] = {{ActivationDType::kFloat16, "float16"},
                                                                  {ActivationDType::kFloat32, "float32"},
                                                                  {ActivationDType::kBFloat16, "bfloat16"}};
// A name of kActivationDTypes; StorageError(kBadInput) listing them otherwise.
ActivationDType parse_activation_dtype(const std::string& name);
inline const char* activation_dtype_name(ActivationDType d) noexcept { return enum_name(kActivationDTypes, d); }

// What a shard holds, written as its root attributes so that it describes itself.
struct ShardDescription {
  std::string model, corpus, split;  // the spec's names and the split (e.g. "gate")
  std::int64_t layer = -1;           // the layer whose MLP input X is
  std::string unit;                  // the capture unit that wrote it
};

struct ActivationOptions {
  ShardDescription describes;
  ActivationDType dtype = ActivationDType::kFloat16;  // X and Y storage type
  bool with_y = false;
  bool with_delta = false;
  bool compress = false;  // shuffle + deflate level 1
  std::int64_t chunk_rows = 1024;
};

// One append's rows, every array `rows` long (x and y rows·d, row-major float32); the writer
// reads them during the call only.
struct ActivationRows {
  const float* x = nullptr;
  const float* y = nullptr;                      // required when the shard has Y
  const float* delta = nullptr;                  // required when the shard has δ
  const std::int32_t* token_ids = nullptr;       // the input token at the row's position
  const std::int32_t* next_token_ids = nullptr;  // required with δ: the next token, the one δ scores
  const std::int64_t* window = nullptr;
  const std::int32_t* position = nullptr;
  std::int64_t rows = 0;
};

// Streams rows into `path` (one writer per file; written to a temporary name and renamed on
// close(), so a reader never sees a half-written shard). Datasets, all with `rows` first:
//   X [rows, d] (float16 as an IEEE half type, float32, or bfloat16 bits as uint16 with
//   attribute encoding="bfloat16"), Y likewise when with_y, delta [rows] float32 and
//   next_token_ids [rows] int32 when with_delta, token_ids [rows] int32, window [rows] int64,
//   position [rows] int32. Root
//   attributes: dtype, d, rows, and options.describes (model, corpus, split, layer, unit);
//   every dataset has a `meaning` attribute.
// Only the rows of one append are buffered (converted), never a whole layer. Not thread safe.
class ActivationWriter {
 public:
  ActivationWriter(std::string path, std::int64_t d, ActivationOptions options);
  ~ActivationWriter();  // abandons (removes) the temporary file unless close() succeeded
  ActivationWriter(const ActivationWriter&) = delete;
  ActivationWriter& operator=(const ActivationWriter&) = delete;

  // Throws StorageError when an array the shard was created with is null, or after close().
  void append(const ActivationRows& rows);
  // Flushes, fsyncs, renames into place and fsyncs the directory. Throws StorageError.
  void close();
  std::int64_t rows() const noexcept { return rows_; }

 private:
  void extend(H5Id& ds, int rank, hid_t mem_type, const void* data, std::int64_t rows, std::int64_t width);

  std::string path_, tmp_;
  std::int64_t d_;
  ActivationOptions opt_;
  std::int64_t rows_ = 0;
  H5Id file_, x_, y_, delta_, next_ids_, ids_, window_, position_;
  H5Id half_type_;
  std::vector<std::uint16_t> scratch_;
  bool closed_ = false;
};

// Reads a closed shard in row ranges (for gate training). Validates dataset shapes, agreement
// of row counts and the declared size (rows·d ≤ 2^36, d ≤ 2^20) on open, before anything is
// allocated; throws StorageError(kBadInput) naming the file.
class ActivationReader {
 public:
  explicit ActivationReader(const std::string& path);
  std::int64_t rows() const noexcept { return rows_; }
  std::int64_t d() const noexcept { return d_; }
  bool has_y() const noexcept { return y_.valid(); }
  bool has_delta() const noexcept { return delta_.valid(); }
  bool has_next_token_ids() const noexcept { return next_ids_.valid(); }
  ActivationDType dtype() const noexcept { return dtype_; }

  // Rows [begin, begin + count) as float32, count·d values. Throws on a range past the end.
  std::vector<float> x(std::int64_t begin, std::int64_t count) const;
  std::vector<float> y(std::int64_t begin, std::int64_t count) const;
  std::vector<float> delta(std::int64_t begin, std::int64_t count) const;
  std::vector<std::int32_t> token_ids(std::int64_t begin, std::int64_t count) const;
  // Throws StorageError(kBadInput) when the shard has no next_token_ids (likewise y and delta).
  std::vector<std::int32_t> next_token_ids(std::int64_t begin, std::int64_t count) const;
  std::vector<std::int64_t> window(std::int64_t begin, std::int64_t count) const;
  std::vector<std::int32_t> position(std::int64_t begin, std::int64_t count) const;

 private:
  std::vector<float> matrix(const H5Id& ds, std::int64_t begin, std::int64_t count) const;
  template <typename T>
  std::vector<T> column(const H5Id& ds, hid_t type, std::int64_t begin, std::int64_t count) const;
  void check_range(std::int64_t begin, std::int64_t count) const;

  std::string path_;
  H5Id file_, x_, y_, delta_, next_ids_, ids_, window_, position_;
  std::int64_t rows_ = 0, d_ = 0;
  ActivationDType dtype_ = ActivationDType::kFloat16;
};

}  // namespace linsweep
