// Which committed units are current: one per slot, the one the latest planning chose.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace linsweep {

class Store;

// A slot is what a unit measures without its parameters (kind, model, corpus, layer, variant:
// each experiment defines its own; the `slot` of the unit's provenance). When several committed
// units fill one slot, the latest plan record (plan_records.hpp) that lists the slot decides:
// the unit it planned is current, the others are superseded; if that unit is not committed yet,
// none is current (the slot is pending again). A slot no plan record lists (units committed
// without one) keeps its most recently committed unit current. A unit whose slot cannot be
// read is its own slot.
struct UnitStanding {
  std::string slot;
  bool current = true;
  std::int64_t planned_by = 0;  // seq of the latest plan record that planned this unit; 0: none
};

// Every committed unit of `store` by id. Reads the plan records, the journal (commit order),
// and the header of each unit no plan record names. Throws StorageError(kBadInput) for a
// corrupt record or unit header.
std::map<std::string, UnitStanding> unit_standings(const Store& store);

}  // namespace linsweep
