// A spec's sweep over any of its values (docs/spec.md, "Sweeps"): the keys and values swept,
// from the spec's `sweep:` block and the command line's `key=choice(a,b)` (`-m key=a,b`), and
// every combination of them as the overrides that make its setting.
#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "orchestrator/spec/spec_overrides.hpp"

namespace linsweep {

struct SweepAxis {
  std::string key;                  // as settings and table columns name it: "context", "all_linear.bootstrap"
  std::string path;                 // the spec's path: "context", "experiments.all_linear.bootstrap"
  std::vector<std::string> values;  // YAML texts, in order, distinct
};

// The axes of `root`'s `sweep:` block (which is removed from `root`), then those of `sweeps`
// (overrides with choices; a key swept twice keeps its last values, in the first one's place).
// Keys are dotted paths below context, layers, splits or experiments ("all_linear.bootstrap"
// stands for "experiments.all_linear.bootstrap" when the spec requests all_linear). Throws
// SpecError "<file>[:line]: sweep.<key>: <problem>" (or naming the override) for another key,
// a value list that is empty, not a list, or repeats a value, and for more than 256 settings.
std::vector<SweepAxis> read_sweep_axes(const std::string& file, YAML::Node& root,
                                       const std::vector<SpecOverride>& sweeps);

struct SettingOverrides {
  nlohmann::json values;                // key -> value (JSON when the YAML text is JSON, else the text)
  std::vector<SpecOverride> overrides;  // path=value for each axis (Op::kPut: replaced or added)
};

// Every combination of the axes' values, the first axis varying slowest.
std::vector<SettingOverrides> sweep_combinations(const std::vector<SweepAxis>& axes);

}  // namespace linsweep
