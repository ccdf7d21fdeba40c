// The experiment registry: each experiment file registers a function of its unit's inputs.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "storage/unit_file.hpp"

namespace linsweep {

class Communicator;
class LanguageModel;

// A corpus of the spec, for experiments that read corpora other than their unit's own.
struct CorpusRef {
  std::string path, format;
};

// Everything one unit needs, resolved by the runner. The model is loaded (and cached across
// units) by the runner; `deps` are the committed results of the unit's dependencies.
struct ExperimentInput {
  std::string unit_id, kind;
  std::string model_name, corpus_name;
  std::string model_path, corpus_path, corpus_format;
  nlohmann::json params;             // the unit's canonical parameters
  std::string provenance;            // stored as the unit's `params` attribute
  std::vector<UnitResult> deps;      // in the order of the plan's deps
  LanguageModel* model = nullptr;    // null for experiments that do not need it
  std::int64_t batch = 8;
  // The store's directory: capture units write activation shards under STORE/activations.
  std::string store_dir;
  // Every corpus of the spec by name (training experiments evaluate on several).
  std::map<std::string, CorpusRef> corpora;
  // The runtime's device request ("auto", "cpu", "cuda:N"), for experiments that load their
  // own copy of the model (training).
  std::string device = "auto";
  // True once the run was asked to stop (SIGUSR1/SIGTERM/SIGINT). Long units (training) check
  // it, save a checkpoint and throw InterruptedError; may be empty.
  std::function<bool()> stop_requested;
  // The unit's worker group when several ranks share it (windows sharded, sums all-reduced);
  // null for a single rank. Every rank of the group runs the experiment with the same input.
  Communicator* group = nullptr;
};

using ExperimentFn = std::function<UnitResult(const ExperimentInput&)>;

// Process-wide map from unit kind to experiment, filled by static registrars before main().
class ExperimentRegistry {
 public:
  static ExperimentRegistry& instance();
  void add(std::string kind, ExperimentFn fn, bool needs_model);
  // Throws InputError("unknown experiment 'x' (known: ...)").
  const ExperimentFn& get(const std::string& kind) const;
  bool needs_model(const std::string& kind) const;
  std::vector<std::string> names() const;

 private:
  struct Entry {
    std::string kind;
    ExperimentFn fn;
    bool needs_model;
  };
  const Entry& find(const std::string& kind) const;
  std::vector<Entry> entries_;
};

struct ExperimentRegistrar {
  ExperimentRegistrar(std::string kind, ExperimentFn fn, bool needs_model) {
    ExperimentRegistry::instance().add(std::move(kind), std::move(fn), needs_model);
  }
};

}  // namespace linsweep
