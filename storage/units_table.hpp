// The store's `units` table: one row per committed unit, joinable with every result table on
// `unit` (docs/store.md).
#pragma once

#include <cstdint>
#include <string>

#include "storage/table_def.hpp"

namespace linsweep {

struct UnitRow {
  std::string unit, kind, slot;
  std::string params;                   // the unit's provenance: {"slot", "params", "inputs", "deps"} as JSON
  std::string version, host;            // the linsweep that computed it, and where
  std::int64_t rank = 0;                // the rank that staged it
  std::int64_t group_ranks = 1;         // ranks that computed it together
  std::string communicator;             // how they summed: mpi, nccl, none ("" before it was recorded)
  double started = 0, finished = 0;     // unix seconds (NaN for units of schema-1 stores)
  std::int64_t current = 1;             // 1: current; 0: superseded (unit_standing.hpp)
  std::int64_t planned_by = 0;          // seq of the latest plan record that planned it (0: none)
  std::string dtype, activation_dtype;  // its precision (UnitProvenance)
  double peak_host_mib = 0, peak_device_mib = 0;
};

// Registered with the other table schemas, so `query STORE units` works like any table.
const TableDef<UnitRow>& units_table();

}  // namespace linsweep
