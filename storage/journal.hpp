// Append-only journal of unit events (started, committed, failed) in STORE/journal.jsonl.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace linsweep {

struct JournalEvent {
  std::string event{};  // "started" | "committed" | "failed" | "interrupted" | "resumed" | "removed" (gc)
  std::string unit{};
  std::string host{};
  int rank = 0;
  double time = 0;          // seconds since the epoch
  double duration = 0;      // seconds, for committed/failed
  std::string error{};      // for failed
  std::int64_t tokens = 0;  // corpus tokens the unit read, for committed (throughput)
  // A "committed" line written by reconciliation for a unit file that was renamed into place
  // by a writer killed before its own journal line (Store::open_write).
  bool recovered = false;
};

// Appends one JSON line with O_APPEND and, when `durable`, fsyncs it. Host and time are
// filled in when empty/zero. Throws StorageError on a write failure. "started" events need
// not be durable: what is committed is decided by the unit files, never by the journal.
void append_journal(const std::string& path, JournalEvent event, bool durable = true);

// The journal held open for appending by the store's writer (one open per sweep, not per
// event). Same guarantees as append_journal. Not copyable; closes on destruction.
class JournalWriter {
 public:
  explicit JournalWriter(std::string path);  // throws StorageError when it cannot be opened
  ~JournalWriter();
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;
  void append(JournalEvent event, bool durable);

 private:
  std::string path_, host_;
  int fd_ = -1;
};

// Reads every complete line; a torn last line (a crash mid-append) and malformed lines are
// skipped. A missing journal is empty. A line over 1 MiB (ours stay below 70 KiB: errors are
// cut at 64 KiB) is refused with StorageError(kBadInput) before it is read into memory whole.
std::vector<JournalEvent> read_journal(const std::string& path);

}  // namespace linsweep
