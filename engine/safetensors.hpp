// Bounds-checked reader of the safetensors format over a memory-mapped file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "common/mapped_file.hpp"

namespace linsweep {

// Element types of the safetensors format. Only F32, F16 and BF16 are loaded as model
// weights; the others are parsed so that ignorable buffers do not fail a checkpoint.
enum class DType { kF64, kF32, kF16, kBF16, kI64, kI32, kI16, kI8, kU8, kBool };

const char* dtype_name(DType d) noexcept;
std::size_t dtype_size(DType d) noexcept;

// One tensor's description; `data` points into the owning SafetensorsFile's mapping.
struct TensorInfo {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<std::int64_t> shape;
  std::span<const std::uint8_t> data;  // exactly numel * dtype_size bytes
  std::int64_t numel() const noexcept;
};

// A parsed safetensors file. The constructor validates everything before exposing any
// tensor: 8-byte header length within the file and at most kMaxHeaderBytes; the header is a
// JSON object; every entry has a known dtype, a non-negative shape whose byte size does not
// overflow and equals its data_offsets span; offsets lie inside the data section and no two
// tensors overlap. On failure throws ModelError("<path>: <problem>").
// Immutable after construction; safe to read from several threads.
class SafetensorsFile {
 public:
  static constexpr std::size_t kMaxHeaderBytes = 100u << 20;

  explicit SafetensorsFile(const std::string& path);

  const std::string& path() const noexcept { return file_.path(); }
  // Returns nullptr when absent.
  const TensorInfo* find(const std::string& name) const;
  const std::map<std::string, TensorInfo>& tensors() const noexcept { return tensors_; }
  const std::map<std::string, std::string>& metadata() const noexcept { return metadata_; }

 private:
  MappedFile file_;
  std::map<std::string, TensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
};

// A tensor to write: raw little-endian bytes of `dtype` in C order.
struct TensorBytes {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> bytes;  // numel * dtype_size
};

// Writes a safetensors file (header padded to 8 bytes, tensors in the given order) to
// `path` via a temporary file, fsync, rename and directory fsync, so a reader never sees half
// a file and a crash after return keeps it. Throws ModelError on a size mismatch or a write
// failure (the temporary file is removed).
void write_safetensors(const std::string& path, const std::vector<TensorBytes>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace linsweep
