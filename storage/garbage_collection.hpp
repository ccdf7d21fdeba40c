// `linsweep gc`: deleting superseded units with everything they own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace linsweep {

class Store;

// What one superseded unit owns: units/<id>.h5 and .arrays.h5, logs/<id>.log, activations/<id>/,
// checkpoints/<id>/, and the directories under models/ whose owner file names it.
struct GcUnit {
  std::string unit, slot;
  std::vector<std::string> paths;  // files and directories, the unit file first
  std::uint64_t bytes = 0;         // their size on disk
};

struct GcPlan {
  std::vector<GcUnit> units;  // superseded units, by id
  // Leftovers of units an earlier, interrupted gc removed (journal "removed", no unit file).
  std::vector<std::string> leftovers;
  std::uint64_t bytes = 0;  // everything above
};

// What gc would delete; current units and their files are never in it. Read-only. Throws
// StorageError(kBadInput) on a corrupt store.
GcPlan plan_gc(const Store& store);

// Deletes `plan` from `store`, which must be open for writing with the exclusive lock. For each
// unit: a durable "removed" journal line, then its unit file (from then on no reader sees it),
// then the rest. A kill at any point leaves a store that readers, `resume` and a second gc
// accept: a unit whose file remains is still superseded and goes next time; what a removed
// unit left behind is a leftover of the next plan. Rebuilds store.h5. Throws StorageError,
// DiskFullError.
void run_gc(Store& store, const GcPlan& plan);

}  // namespace linsweep
