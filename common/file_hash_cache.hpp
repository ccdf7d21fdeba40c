// SHA-256 of files, remembered by identity (path, size, mtime in ns, inode) so that hashing
// the same unchanged inputs again reads none of their bytes.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace linsweep {

// A cache of file digests, optionally kept in a JSON file between processes. Not thread safe.
//
// An entry is used only while the file's size, mtime (ns) and inode are those it was hashed
// with; any change of them hashes the file again. A file rewritten within one mtime tick with
// its size kept and its inode reused would keep its old digest: the filesystem's mtime
// resolution (ns on ext4, xfs, btrfs) is what bounds that.
class FileHashCache {
 public:
  // Memory only: nothing is loaded or saved.
  FileHashCache() = default;
  // Loads `cache_file` when it exists. A cache file that cannot be read or parsed is ignored
  // (every file is hashed again and the cache rewritten): it is a cache, never the truth.
  explicit FileHashCache(std::string cache_file);

  // The 64-hex-digit SHA-256 of `path`'s bytes. Throws InputError naming `path` when it cannot
  // be read.
  std::string sha256(const std::string& path);

  // Writes the cache file atomically when entries changed (no-op for a memory-only cache).
  // Throws StorageError or DiskFullError naming the cache file.
  void save();

  // Bytes read for hashing since construction (0 when every digest came from the cache).
  std::uint64_t bytes_hashed() const noexcept { return bytes_hashed_; }

 private:
  struct Entry {
    std::uint64_t size = 0, inode = 0;
    std::int64_t mtime_ns = 0;
    std::string sha256;
  };
  std::string cache_file_;
  std::map<std::string, Entry> entries_;  // absolute path -> entry
  bool dirty_ = false;
  std::uint64_t bytes_hashed_ = 0;
};

}  // namespace linsweep
