// What an experiment's unit expansion sees and does: the sweep, input fingerprints, splits,
// and adding units; and the shared units other experiments build on (a model's fit, its
// captured activations), each created by the file that owns it on first request.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "experiments/framework/sweep.hpp"
#include "experiments/framework/unit.hpp"
#include "experiments/framework/unit_params.hpp"

namespace linsweep {

// How to fingerprint the sweep's inputs (SHA-256 of file contents); the builder asks only for
// the inputs some unit reads, and each once.
struct Fingerprinter {
  std::function<std::string(const ModelSpec&)> model;                      // weights and config
  std::function<std::string(const ModelSpec&, const CorpusSpec&)> stream;  // corpus bytes, format, tokenizer
};

// Layers that experiments need fitted and captured beyond the sweep's own, gathered from every
// requested experiment before any expands (ExperimentDef::needs).
struct PlanNeeds {
  std::map<std::string, std::set<std::int64_t>> measured_layers;  // model -> layers the measurements read
  bool capture = false;                                           // some experiment reads activation shards
  std::map<std::string, std::set<std::int64_t>> training_layers;  // model -> layers training linearizes
};

// Not thread safe. Units are kept in the order added; a provider adds its units before it
// returns, so dependencies always come first.
class PlanBuilder {
 public:
  PlanBuilder(const Sweep& sweep, Fingerprinter fingerprinter, PlanNeeds needs);

  const Sweep& sweep() const noexcept { return sweep_; }
  const PlanNeeds& needs() const noexcept { return needs_; }
  // The sweep's layers of a model.
  std::vector<std::int64_t> sweep_layers(const ModelSpec& m) const;
  // The sweep's layers plus every measured layer of `m` (what stats, fit and capture cover).
  std::vector<std::int64_t> covered_layers(const ModelSpec& m) const;
  // {"start", "tokens"} of split `name`. Throws SpecError "<spec>: splits.<name>: missing
  // (needed by the requested experiments)".
  nlohmann::json split(const std::string& name) const;
  bool has_split(const std::string& name) const { return sweep_.splits.count(name) > 0; }
  // What a unit of `corpus` reads: split `split_name` ("" for none; missing: the SpecError of
  // split()), the sweep's context and the corpus's format, and the surrogates of λ `lambda`
  // (0: none).
  UnitBasics basics(const std::string& corpus, const std::string& split_name, double lambda = 0) const;
  // {"model": fingerprint, "stream": fingerprint, "dtype": compute dtype} of (model, corpus):
  // what a unit that runs the model over the corpus computes from, so all of it is its identity
  // (a unit computed in another precision is another unit).
  std::map<std::string, std::string> inputs(const std::string& model, const std::string& corpus);
  const std::string& model_fingerprint(const std::string& model);
  const std::string& stream_fingerprint(const std::string& model, const std::string& corpus);

  // Adds `u`: its slot is "<kind>/<model>/<corpus><slot_suffix>" and its id is computed from
  // its contents. Returns the id.
  std::string add(Unit u, const std::string& slot_suffix = "");
  // add(u) with u.inputs = inputs(u.model, u.corpus): for a unit that reads the model's weights
  // and the corpus's stream, so that a changed file makes it a new unit.
  std::string add_with_inputs(Unit u, const std::string& slot_suffix = "");
  const std::vector<Unit>& units() const noexcept { return units_; }
  std::vector<Unit> take_units() { return std::move(units_); }

  // The id of the unit that `provider` makes for (model, corpus) and `request`: created on the
  // first call by the provider's registered function, the same id afterwards. Throws
  // std::logic_error for an unknown provider.
  std::string provide(const std::string& provider, const ModelSpec& m, const std::string& corpus,
                      const nlohmann::json& request = nullptr);

 private:
  const Sweep& sweep_;
  Fingerprinter fingerprinter_;
  std::map<std::string, std::string> model_fp_;
  std::map<std::pair<std::string, std::string>, std::string> stream_fp_;
  PlanNeeds needs_;
  std::vector<Unit> units_;
  std::map<std::string, std::string> provided_;  // provider/model/corpus/request -> id
};

// A provider: makes the shared unit of (model, corpus) for `request` and returns its id.
using ProviderFn = std::function<std::string(PlanBuilder&, const ModelSpec&, const std::string& corpus,
                                             const nlohmann::json& request)>;

// Registers a provider by name from a static initializer (the file that owns the unit kind).
struct ProviderRegistrar {
  ProviderRegistrar(std::string name, ProviderFn fn);
};

}  // namespace linsweep
