// A store's progress from its unit files and journal (`linsweep status`).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace linsweep {

class Store;

struct StoreStatus {
  struct Counts {
    int committed = 0;               // current committed units (unit_standing.hpp)
    int superseded = 0;              // committed units another unit of their slot replaced
    int pending = 0;                 // planned by the latest plan record, not committed and not failed
    int failed = 0, unfinished = 0;  // unfinished: started, never committed or failed
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
  double first_event = 0, last_event = 0;  // seconds since the epoch
  int committed() const;
  // Committed units per hour between the first and the last journal event.
  double units_per_hour() const;
};

// Reads the journal and the committed units. Throws StorageError on an unreadable store.
StoreStatus summarize_store(const Store& store);

}  // namespace linsweep
