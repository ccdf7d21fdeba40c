// A store's progress from its unit files and journal (`linsweep status`).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace linsweep {

class Store;

struct StoreStatus {
  struct Counts {
    int committed = 0;               // current committed units (unit_standing.hpp)
    int superseded = 0;              // committed units another unit of their slot replaced
    int pending = 0;                 // planned by the latest plan record and not started, committed or failed
    int failed = 0, unfinished = 0;  // unfinished: started, never committed or failed (running, if a run is live)
    double seconds = 0;              // summed durations of committed units
    std::int64_t tokens = 0;         // summed corpus tokens they read
    double tokens_per_second() const { return seconds > 0 ? static_cast<double>(tokens) / seconds : 0; }
  };
  std::map<std::string, Counts> by_kind;  // unit kind (the id's prefix) -> counts
  struct Failure {
    std::string unit, host, error;
    int rank = 0;
    int attempts = 0;
  };
  std::vector<Failure> failures;           // units whose last event is "failed"
  std::vector<std::string> unfinished;     // the unfinished units' ids, sorted
  std::optional<std::string> live_writer;  // the lock record of a run writing the store now
  double first_event = 0, last_event = 0;  // seconds since the epoch
  int committed() const;
  // Committed units per hour between the first and the last journal event.
  double units_per_hour() const;
};

// Reads the journal and the committed units. Throws StorageError on an unreadable store.
StoreStatus summarize_store(const Store& store);

}  // namespace linsweep
