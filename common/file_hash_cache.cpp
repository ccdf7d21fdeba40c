// File digests cached by file identity.
#include "common/file_hash_cache.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "common/sha256.hpp"

namespace linsweep {
namespace {

constexpr int kFormat = 1;  // the cache file's layout; another value is ignored

std::string absolute(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

}  // namespace

FileHashCache::FileHashCache(std::string cache_file) : cache_file_(std::move(cache_file)) {
  std::ifstream in(cache_file_);
  if (!in) return;
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("format", 0) != kFormat || !j.contains("files") || !j["files"].is_object()) return;
  for (const auto& [path, e] : j["files"].items()) {
    if (!e.is_object()) continue;
    const auto size = e.find("size"), inode = e.find("inode"), mtime = e.find("mtime_ns"), sha = e.find("sha256");
    if (size == e.end() || inode == e.end() || mtime == e.end() || sha == e.end() || !size->is_number_unsigned() ||
        !inode->is_number_unsigned() || !mtime->is_number_integer() || !sha->is_string() ||
        sha->get<std::string>().size() != 64)
      continue;
    entries_[path] = {size->get<std::uint64_t>(), inode->get<std::uint64_t>(), mtime->get<std::int64_t>(),
                      sha->get<std::string>()};
  }
}

std::string FileHashCache::sha256(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw InputError(path + ": cannot open: " + std::strerror(errno));
  const Entry now{static_cast<std::uint64_t>(st.st_size), static_cast<std::uint64_t>(st.st_ino),
                  static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec, ""};
  const std::string key = absolute(path);
  auto it = entries_.find(key);
  if (it != entries_.end() && it->second.size == now.size && it->second.inode == now.inode &&
      it->second.mtime_ns == now.mtime_ns)
    return it->second.sha256;
  Entry fresh = now;
  fresh.sha256 = sha256_file(path);
  bytes_hashed_ += now.size;
  entries_[key] = fresh;
  dirty_ = true;
  return fresh.sha256;
}

void FileHashCache::save() {
  if (cache_file_.empty() || !dirty_) return;
  nlohmann::json files = nlohmann::json::object();
  for (const auto& [path, e] : entries_)
    files[path] = {{"size", e.size}, {"inode", e.inode}, {"mtime_ns", e.mtime_ns}, {"sha256", e.sha256}};
  atomic_write_text(cache_file_, nlohmann::json{{"format", kFormat}, {"files", files}}.dump(1) + "\n");
  dirty_ = false;
}

}  // namespace linsweep
