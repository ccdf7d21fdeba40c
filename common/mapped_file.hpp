// Read-only memory mapping of a whole file, owned RAII-style.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace linsweep {

// Maps `path` read-only for the lifetime of the object. Throws InputError naming the path
// when the file cannot be opened, stat'ed or mapped. An empty file maps to an empty span.
// Movable, not copyable; bytes() stays valid until destruction or move. Thread safe for
// concurrent reads.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::uint8_t> bytes() const noexcept { return {data_, size_}; }
  std::size_t size() const noexcept { return size_; }
  const std::string& path() const noexcept { return path_; }

 private:
  void release() noexcept;

  std::string path_;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

// Drops the pages of `bytes`, a range inside a live MappedFile's bytes(), from this process's
// resident set (madvise MADV_DONTNEED on the pages it touches, rounded out to whole pages).
// The data stays readable: a later read faults the page in again from the page cache. Lets a
// reader that copies a large file piece by piece hold one piece resident, not the whole file.
// Throws std::runtime_error when the kernel refuses (a range outside any mapping).
void drop_resident_pages(std::span<const std::uint8_t> bytes);

}  // namespace linsweep
