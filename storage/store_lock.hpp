// Exclusive writer lock on a store directory, released by the kernel when its holder dies.
#pragma once

#include <optional>
#include <string>

namespace linsweep {

// Takes `dir/lock` with flock(LOCK_EX | LOCK_NB) and records host, pid and time in it. A
// second writer (another process, or another StoreLock in this one) is refused with
// StorageError(kBadInput) naming the holder. A lock file left by a process that died holds
// no flock, so it is taken over and reported through stale_holder(). Move-only; released on
// destruction.
// `shared` takes LOCK_SH instead, for runs of disjoint unit sets (the jobs of one split Slurm
// submission): shared holders coexist, and exclude (and are excluded by) an exclusive holder.
// A shared holder leaves the record alone (it belongs to no single process).
class StoreLock {
 public:
  explicit StoreLock(const std::string& dir, bool shared = false);
  ~StoreLock();
  StoreLock(StoreLock&& o) noexcept;
  StoreLock& operator=(StoreLock&&) = delete;
  StoreLock(const StoreLock&) = delete;
  StoreLock& operator=(const StoreLock&) = delete;

  // The previous holder's record ("host H pid P since T") when a stale lock was recovered.
  const std::optional<std::string>& stale_holder() const noexcept { return stale_; }

 private:
  int fd_ = -1;
  bool shared_ = false;
  std::string path_;
  std::optional<std::string> stale_;
};

// The record ("host H pid P since T") of the exclusive writer that holds `dir/lock` now, or
// nullopt when none does (no lock file, an empty record, or a record left by a dead holder).
// Takes no lock while a writer holds it; only for a dead holder's record does it take a shared
// one for an instant to tell. Shared holders (split Slurm jobs) write no record and are not
// reported. Never throws.
std::optional<std::string> live_writer(const std::string& dir);

}  // namespace linsweep
