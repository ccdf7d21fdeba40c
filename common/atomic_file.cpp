// Temporary file, fsync, rename, directory fsync.
#include "common/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "common/errors.hpp"

namespace linsweep {
namespace {

void fsync_at(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) throw StorageError(path + ": cannot open for fsync: " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int e = errno;
  ::close(fd);
  if (rc != 0) throw_write_error(path + ": fsync failed", e);  // delayed write-back errors, ENOSPC on NFS
}

std::string parent_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

}  // namespace

void sync_file(const std::string& path) { fsync_at(path, false); }
void sync_directory(const std::string& dir) { fsync_at(dir, true); }

int write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

std::string message_at(const std::string& path, const std::string& message) {
  return message.rfind(path, 0) == 0 ? message : path + ": " + message;
}

void atomic_replace(const std::string& path, const std::function<void(const std::string&)>& write) {
  char host[64] = {};
  ::gethostname(host, sizeof(host) - 1);
  static thread_local std::mt19937_64 rng(std::random_device{}());
  const std::string tmp = parent_of(path) + "/.tmp-" + host + "-" + std::to_string(::getpid()) + "-" +
                          std::to_string(rng() % 1000000007ull) + "-" + path.substr(path.find_last_of('/') + 1);
  try {
    write(tmp);
    sync_file(tmp);
    if (std::rename(tmp.c_str(), path.c_str()) != 0) throw_write_error(path + ": rename failed", errno);
    sync_directory(parent_of(path));
  } catch (const DiskFullError& e) {
    std::remove(tmp.c_str());
    throw DiskFullError(message_at(tmp, e.what()));
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
}

void atomic_write_text(const std::string& path, const std::string& text) {
  atomic_replace(path, [&](const std::string& tmp) {
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) throw_write_error(tmp + ": cannot create", errno);
    const int e = write_all(fd, text);
    const int closed = ::close(fd) == 0 ? 0 : errno;
    if (e != 0 || closed != 0) throw_write_error(tmp + ": write failed", e != 0 ? e : closed);
  });
}

}  // namespace linsweep
