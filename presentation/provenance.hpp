// Where a store's results came from, for the report: the spec, each planning's spec and
// overrides (plans/<seq>.json), the last run recorded in run.json,
// the hosts and times of the journal, what failed, and the store's per-unit `units` table when
// it has one.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "storage/plan_records.hpp"
#include "storage/store_status.hpp"
#include "storage/table.hpp"

namespace linsweep {

class Store;

struct Provenance {
  std::string store;                   // the store directory as given
  std::string written_by;              // the linsweep version writing the report (filled by the caller)
  std::string spec_path;               // from run.json ("" when the store was never run by `linsweep run`)
  std::vector<std::string> overrides;  // command-line overrides recorded in run.json
  std::string spec_text;               // STORE/spec.yaml, the spec frozen at creation ("" when absent)
  std::vector<PlanRecord> plans;       // every planning (`run`, `resume`, `submit`), its spec and overrides
  StoreStatus status;                  // units by experiment, failures, first and last journal event
  struct Host {
    std::string host;
    int committed = 0;
    double first = 0, last = 0;  // seconds since the epoch
  };
  std::vector<Host> hosts;     // from the journal's committed events, by host name
  std::optional<Table> units;  // the store's `units` table (who, when, which version), if it has one
  // Per model, the precision its current units computed in: "tiny-gpt2: float32 compute,
  // float16 activation shards" (from the `units` table; a model whose units differ lists each).
  std::vector<std::string> precision;
};

// Reads everything above but `written_by`; `tables` are the store's tables as already read
// (the `units` table is taken from them when the unit files carry it, else from store.h5
// when this build knows its schema). A run.json that does not parse leaves spec_path empty
// (the report says so); a damaged unit file or journal line throws StorageError as the
// store's readers do.
Provenance read_provenance(const Store& store, const std::map<std::string, Table>& tables);

// "2025-01-31 14:05:09 UTC" for seconds since the epoch; "" for 0.
std::string utc_time(double seconds);

}  // namespace linsweep
