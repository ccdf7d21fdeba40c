// How `submit --split` places a sweep's pending units in Slurm jobs and job arrays.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace linsweep {

// A unit to place: its id, its model, and its dependencies (ids; those that are not among the
// units being split are taken as done or held elsewhere).
struct SplitUnit {
  std::string id, model;
  std::vector<std::string> deps;
};

// A job of a split: one task (a plain job) or several (a job array); each task lists indices
// into the split's units, in their given order. `after`: earlier jobs of the split that hold
// dependencies of its units (they must succeed first: afterok).
struct SplitJob {
  std::vector<std::vector<std::size_t>> tasks;
  bool array = false;
  std::set<std::size_t> after;
};

// Splits `units` (in dependency order) by `split`:
//   none     one plain job with every unit;
//   model    a plain job per model, in order of first appearance;
//   units:K  the units by depth (0 for a unit none of whose dependencies is among `units`,
//            else one more than its deepest dependency there), each depth cut into tasks of at
//            most K units; a depth of one task is a plain job, a depth of several one job array.
//            Units of one depth never depend on each other, so an array's tasks may run at once,
//            and every depth after the first waits for the one before.
// Throws InputError naming --split for anything else, or a K below 1.
std::vector<SplitJob> split_units(const std::vector<SplitUnit>& units, const std::string& split);

}  // namespace linsweep
