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

// Keeps the last model loaded, so consecutive units of one model load it once. Not thread safe.
class UnitExecutor {
 public:
  explicit UnitExecutor(const SweepSpec& spec);
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
  const SweepSpec& spec_;
  std::string held_;
  std::unique_ptr<LoadedModel> model_;
  std::function<bool()> stop_check_;
};

}  // namespace linsweep
