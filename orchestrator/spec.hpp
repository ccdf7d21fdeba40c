// The sweep spec (YAML): models, corpora, splits, layers, experiments, runtime, resources.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "slurm/resources.hpp"

namespace linsweep {

struct ModelSpec {
  std::string name;
  std::string path;                   // HF directory (resolved relative to the spec file)
  std::optional<std::string> dtype;   // compute dtype override
  std::int64_t layers = 0;            // from its config.json
  std::int64_t max_positions = 0;     // from its config.json
};

struct CorpusSpec {
  std::string name;
  std::string path;    // resolved relative to the spec file
  std::string format;  // text | wikitext | lambada | brown | npy
};

struct SplitSpec {
  std::int64_t start = 0;
  std::int64_t tokens = 0;
};

// Inclusive layer ranges, or every layer.
struct LayerSelection {
  bool all = true;
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  // The selected layers of a model with `n` layers, ascending and unique.
  std::vector<std::int64_t> resolve(std::int64_t n) const;
};

struct RuntimeSpec {
  std::string device = "auto";
  std::string dtype = "float32";
  std::int64_t batch = 8;
  std::int64_t ranks_per_group = 1;
  std::int64_t retries = 2;
  std::int64_t grace_seconds = 60;
  std::int64_t threads = 0;  // 0: cores / local ranks
  std::string activation_dtype = "float16";
};


struct SweepSpec {
  std::string file;  // path of the spec
  std::string text;  // the spec as written (frozen into the store)
  std::string store;
  std::int64_t context = 512;  // default: min(512, every model's positions)
  std::vector<ModelSpec> models;
  std::vector<CorpusSpec> corpora;
  std::map<std::string, SplitSpec> splits;  // fit, gate, select, eval, train
  LayerSelection layers;
  std::map<std::string, std::string> experiments;  // name -> parameters as canonical JSON (defaults filled)
  RuntimeSpec runtime;
  ResourcesSpec resources;
};

// Reads and validates a spec before any work: unknown keys, wrong types, missing model or
// corpus files, overlapping or empty splits, layers outside a model, context past a model's
// positions, duplicate names, unknown experiments and parameters. Every problem is a
// SpecError "<file>:<line>: <field>: <problem>" (exit code 2). `store_override` replaces
// the spec's `store` (--store).
SweepSpec load_spec(const std::string& path, const std::string& store_override = "");

// Names of the experiments a spec may list, in a fixed order.
const std::vector<std::string>& known_experiments();

}  // namespace linsweep
