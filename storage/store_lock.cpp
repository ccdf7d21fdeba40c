// flock-based store lock.
#include "storage/store_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <utility>

#include "common/errors.hpp"
#include "storage/store_layout.hpp"

namespace linsweep {
namespace {

std::string read_holder(int fd) {
  char buf[512] = {};
  ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  std::string s = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) s.pop_back();
  return s;
}

}  // namespace

StoreLock::StoreLock(const std::string& dir, bool shared) : shared_(shared), path_(StoreLayout(dir).lock()) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) throw StorageError(path_ + ": cannot open lock file: " + std::strerror(errno));
  if (::flock(fd_, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0) {
    const int e = errno;
    const std::string holder = read_holder(fd_);
    ::close(fd_);
    fd_ = -1;
    if (e == EWOULDBLOCK)
      throw StorageError(
          dir + ": store is being written by another sweep (" +
              (holder.empty() ? (shared ? "an exclusive run" : "shared by split Slurm jobs, or unknown") : holder) +
              "); wait for it or stop it",
          ExitCode::kBadInput);
    throw StorageError(path_ + ": cannot lock: " + std::strerror(e));
  }
  if (shared) return;  // several holders: the record stays whatever an exclusive holder left
  const std::string previous = read_holder(fd_);
  if (!previous.empty()) stale_ = previous;  // the file outlived a holder that did not unlock
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  char when[64] = {};
  const std::time_t now = std::time(nullptr);
  std::strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  const std::string record =
      "host " + std::string(host) + " pid " + std::to_string(::getpid()) + " since " + when + "\n";
  const ssize_t n = ::ftruncate(fd_, 0) != 0 ? -1 : ::pwrite(fd_, record.data(), record.size(), 0);
  if (n != static_cast<ssize_t>(record.size())) {
    const int e = n < 0 ? errno : ENOSPC;  // a short write of a few bytes: the disk is full
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
    fd_ = -1;
    throw_write_error(path_ + ": cannot write lock record", e);
  }
  ::fsync(fd_);
}

std::optional<std::string> live_writer(const std::string& dir) {
  const std::string path = StoreLayout(dir).lock();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return std::nullopt;
  std::optional<std::string> holder = read_holder(fd);
  if (holder->empty()) {
    holder.reset();  // released cleanly, or never held
  } else if (::flock(fd, LOCK_SH | LOCK_NB) == 0) {
    ::flock(fd, LOCK_UN);  // a record without a flock: its writer died
    holder.reset();
  }
  ::close(fd);
  return holder;
}

StoreLock::StoreLock(StoreLock&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), shared_(o.shared_), path_(std::move(o.path_)), stale_(std::move(o.stale_)) {}

StoreLock::~StoreLock() {
  if (fd_ < 0) return;
  // Empty the record first: a non-empty lock file without a flock means a holder died.
  if (!shared_ && ::ftruncate(fd_, 0) == 0) ::fsync(fd_);
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

}  // namespace linsweep
