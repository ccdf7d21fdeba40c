// Runs one planned unit: resolves its model and corpus, loads (and caches) the model, reads
// its dependencies' results, and calls the registered experiment.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "orchestrator/plan/plan.hpp"
#include "storage/unit_file.hpp"

namespace linsweep {

class Communicator;
class Store;
struct LoadedModel;
struct ModelSpec;

// A worker rank's part of a model split over stages (runtime.stages): how many stages, the
// communicator over its replica and the one over its stage's peers in the other replicas (both
// null with one stage).
struct StageContext {
  std::int64_t stages = 1;
  Communicator* replica = nullptr;
  Communicator* stage_peers = nullptr;
};

// Keeps the last model loaded, so consecutive units of one model load it once. With stages, it
// loads this rank's stage and runs it as a StagedModel. Not thread safe.
class UnitExecutor {
 public:
  explicit UnitExecutor(const SweepSpec& spec, StageContext stages = {});
  ~UnitExecutor();
  UnitExecutor(const UnitExecutor&) = delete;
  UnitExecutor& operator=(const UnitExecutor&) = delete;

  // The unit's result, its provenance's precision (dtype, activation_dtype) and peak memory
  // set; `group` (may be null) shards the unit across a worker group, whose ranks must all
  // call this with the same unit. Throws on any failure of the experiment.
  UnitResult run(const Unit& unit, const Store& store, Communicator* group);
  // Lets long units see a stop request (see ExperimentInput::stop_requested).
  void set_stop_check(std::function<bool()> check) { stop_check_ = std::move(check); }
  // Name of the model currently held (empty when none).
  const std::string& held_model() const noexcept { return held_; }

 private:
  // `m` loaded as this rank holds it: its stage, as a StagedModel, with stages.
  LoadedModel load_held_model(const ModelSpec& m) const;

  const SweepSpec& spec_;
  StageContext stages_;
  std::string held_;
  std::unique_ptr<LoadedModel> model_;
  std::function<bool()> stop_check_;
};

}  // namespace linsweep
