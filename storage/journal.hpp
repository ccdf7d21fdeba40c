// Append-only journal of unit events (started, committed, failed) in STORE/journal.jsonl.
#pragma once

#include <string>
#include <vector>

namespace linsweep {

struct JournalEvent {
  std::string event;  // "started" | "committed" | "failed" | "interrupted"
  std::string unit;
  std::string host;
  int rank = 0;
  double time = 0;      // seconds since the epoch
  double duration = 0;  // seconds, for committed/failed
  std::string error;    // for failed
};

// Appends one JSON line with O_APPEND and fsyncs it. Host and time are filled in when
// empty/zero. Throws StorageError on a write failure.
void append_journal(const std::string& path, JournalEvent event);

// Reads every complete line; a torn last line (a crash mid-append) and malformed lines are
// skipped. A missing journal is empty.
std::vector<JournalEvent> read_journal(const std::string& path);

}  // namespace linsweep
