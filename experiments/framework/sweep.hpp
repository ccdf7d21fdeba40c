// What a sweep measures, as read from its spec: models, corpora, splits, layers, the requested
// experiments' parameters and the runtime. The spec reader (orchestrator/spec/spec.hpp) fills it;
// the plan and the experiments read it. Plain data.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace linsweep {

struct ModelSpec {
  std::string name;
  std::string path;                  // HF directory (resolved relative to the spec file)
  std::optional<std::string> dtype;  // compute dtype override
  std::int64_t layers = 0;           // from its config.json
  std::int64_t max_positions = 0;    // from its config.json
  std::string export_problem;        // why linearized weights cannot be exported ("" when they can)
  // Mixture of experts, from its config.json: the experts of a sparse layer (0: a dense model)
  // and the sparse layers, ascending (dense layers of an MoE model are not among them).
  std::int64_t experts = 0;
  std::vector<std::int64_t> sparse_layers;
};

struct CorpusSpec {
  std::string name;
  std::string path;    // resolved relative to the spec file
  std::string format;  // text | wikitext | lambada | brown | npy (resolved from the path when not given)
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
  // `all` or [layer, "a-b", ...], as written in canonical JSON.
  nlohmann::json to_json() const;
  // The inverse of to_json (for parameters kept as JSON).
  static LayerSelection from_json(const nlohmann::json& j);
};

struct RuntimeSpec {
  std::string device = "auto";
  std::string dtype = "float32";
  std::int64_t batch = 8;
  std::int64_t ranks_per_group = 1;
  std::int64_t retries = 2;
  std::int64_t grace_seconds = 60;
  std::int64_t threads = 0;        // 0: cores / local ranks
  bool groups_span_nodes = false;  // worker groups of several ranks may span nodes (else refused)
  std::string activation_dtype = "float16";
  std::string communicator = "auto";  // auto | mpi | nccl (orchestrator/run/group_backend.hpp)
  // The model split by layers over this many consecutive ranks of a worker group, as a number,
  // or "auto": the fewest that fit memory_per_rank (orchestrator/plan/memory_plan.hpp).
  std::string stages = "1";
  // Bytes a rank may hold, as a number or with a unit ("512MiB", "80GB"); "": the device's
  // free memory, or the node's memory divided by its ranks.
  std::string memory_per_rank;
};

struct Sweep {
  std::string file;            // path of the spec, for messages
  std::int64_t context = 512;  // default: min(512, every model's positions)
  std::vector<ModelSpec> models;
  std::vector<CorpusSpec> corpora;
  std::map<std::string, SplitSpec> splits;  // fit, gate, select, eval, train
  LayerSelection layers;
  std::map<std::string, nlohmann::json> experiments;  // requested: name -> canonical parameters (defaults filled)
  RuntimeSpec runtime;

  const ModelSpec* model(const std::string& name) const;
  const CorpusSpec* corpus(const std::string& name) const;
  // The parameters of a requested experiment, or null when the spec does not request it.
  const nlohmann::json* requested(const std::string& experiment) const;
};

}  // namespace linsweep
