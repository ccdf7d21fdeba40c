// What the training experiments (progressive, finetune) share: their common spec parameters,
// the common part of their units' parameters, and how their units are planned.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/framework/memory_need.hpp"
#include "experiments/framework/params.hpp"
#include "experiments/framework/plan_builder.hpp"
#include "experiments/framework/unit_params.hpp"

namespace linsweep {

// Spec parameters every training experiment has.
struct TrainingCommonParams {
  std::string model;                      // empty: every model
  std::string corpus;                     // trained on its train split (empty: the first corpus)
  std::vector<std::string> eval_corpora;  // evaluated on their eval splits (empty: every corpus)
  double lr = 5e-6;
  double weight_decay = 0.01;
  double clip = 1.0;
  std::int64_t batch = 8;
  std::int64_t warmup = 0;
  std::string schedule = "constant";
  std::int64_t seed = 0;
  std::vector<std::string> trainable{"attention", "mlp", "layernorm", "head"};
  std::int64_t checkpoint_every = 100;
  bool save_model = true;
};

// Declares TrainingCommonParams' fields on the schema of an experiment struct derived from it.
template <typename P>
void add_training_params(ParamSchema<P>& s) {
  s.add("model", static_cast<std::string P::*>(&P::model), any_value(), "the model to train (empty: every model)");
  s.corpus("corpus", static_cast<std::string P::*>(&P::corpus),
           "corpus whose train split it trains on and whose fit gives the surrogates (empty: the first)");
  s.corpora("eval_corpora", static_cast<std::vector<std::string> P::*>(&P::eval_corpora),
            "corpora evaluated on their eval splits (empty: every corpus)");
  s.add("lr", static_cast<double P::*>(&P::lr), positive(), "AdamW learning rate");
  s.add("weight_decay", static_cast<double P::*>(&P::weight_decay), at_least(0), "AdamW weight decay");
  s.add("clip", static_cast<double P::*>(&P::clip), at_least(0), "maximum gradient norm (0: no clipping)");
  s.add("batch", static_cast<std::int64_t P::*>(&P::batch), at_least(1),
        "windows per step over the whole worker group");
  s.add("warmup", static_cast<std::int64_t P::*>(&P::warmup), at_least(0), "linear warmup steps");
  s.add("schedule", static_cast<std::string P::*>(&P::schedule), one_of({"constant", "cosine"}),
        "learning rate after the warmup: constant, or cosine decay to 0.1·lr at the last step");
  s.add("seed", static_cast<std::int64_t P::*>(&P::seed), at_least(0), "seed of the batch order");
  ParamRange groups = one_of({"attention", "mlp", "layernorm", "head", "embeddings"});
  groups.distinct = true;
  s.add("trainable", static_cast<std::vector<std::string> P::*>(&P::trainable), groups, "parameter groups trained");
  s.add("checkpoint_every", static_cast<std::int64_t P::*>(&P::checkpoint_every), at_least(0),
        "steps between checkpoints (0: only at segment ends)");
  s.add("save_model", static_cast<bool P::*>(&P::save_model), any_value(),
        "export the final weights as an HF directory");
}

// An eval corpus of a training unit.
struct TrainingEval {
  std::string corpus;
  Split split;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TrainingEval, corpus, split)

// The unit parameters every training unit has (flat in its JSON, beside its own).
struct TrainingUnitCommon {
  double lr = 0, weight_decay = 0, clip = 0;
  std::int64_t batch = 0, warmup = 0, seed = 0;
  std::string schedule = "constant";
  std::vector<std::string> trainable;
  std::int64_t checkpoint_every = 0;
  bool save_model = true;
  UnitBasics basics;  // context, and λ (0 for units that linearize nothing)
  Split train;
  std::vector<TrainingEval> eval;
};
void write_training_common(nlohmann::json& j, const TrainingUnitCommon& c);
// A training unit on one rank: the executor's model that may still be held (weights), the
// unit's own float32 copy with its gradients and AdamW's two moments (optimizer, 16 bytes a
// parameter), and what autograd keeps of a step's forward over its share of the batch.
MemoryNeed training_memory(const MemoryQuery& q);
void read_training_common(const nlohmann::json& j, TrainingUnitCommon& c);

// Field visitors for a unit's own parameters, so that one list of `visit(key, member)` calls
// both writes and reads them: JsonFieldWriter sets j[key], JsonFieldReader reads j.at(key)
// (throwing nlohmann's error when it is missing or mistyped).
struct JsonFieldWriter {
  nlohmann::json& j;
  template <typename T>
  void operator()(const char* key, const T& value) const {
    j[key] = value;
  }
};
struct JsonFieldReader {
  const nlohmann::json& j;
  template <typename T>
  void operator()(const char* key, T& value) const {
    j.at(key).get_to(value);
  }
};

// to_json and from_json of a training unit's parameters P: the common ones, then the unit's
// own, which `fields(p, visit)` lists once for both directions.
template <typename P, typename Fields>
void write_training_unit(nlohmann::json& j, const P& p, const Fields& fields) {
  j = nlohmann::json::object();
  write_training_common(j, p.common);
  fields(p, JsonFieldWriter{j});
}
template <typename P, typename Fields>
void read_training_unit(const nlohmann::json& j, P& p, const Fields& fields) {
  read_training_common(j, p.common);
  fields(p, JsonFieldReader{j});
}

// Whether a training experiment applies to model `m` (its `model` is empty or names `m`).
bool training_applies(const TrainingCommonParams& p, const ModelSpec& m);
// The common unit parameters of a training unit of `m` planned from `p`, and its slot's corpus.
TrainingUnitCommon training_unit_common(const TrainingCommonParams& p, PlanBuilder& b, std::string* corpus);
// Inputs of a training unit: the model, its training stream and every eval corpus's stream.
std::map<std::string, std::string> training_inputs(PlanBuilder& b, const ModelSpec& m, const std::string& corpus,
                                                   const TrainingUnitCommon& c);
// Problems with `model` (not a model of the spec), with `layers` (outside the model, twice),
// and with save_model when `exports_linear` (a variant exports linearized weights) and a
// model's MLP cannot hold an affine map: found before any training, not after it.
void check_training_layers(const TrainingCommonParams& p, const std::vector<std::int64_t>& layers,
                           const std::string& key, bool exports_linear, const Sweep& sweep,
                           std::vector<ParamProblem>& problems);
// Layers in middle-out order from the central layer: L/2, L/2−1, L/2+1, L/2−2, ...
std::vector<std::int64_t> middle_out_order(std::int64_t n);

// The validate callback of a training experiment whose member `Member` (spec key `key`) lists
// the layers it trains; `exports_linear(p)` says whether it exports linearized weights.
template <typename P, std::vector<std::int64_t> P::*Member>
std::function<void(const P&, const Sweep&, std::vector<ParamProblem>&)> validate_training_layers(
    const char* key, bool (*exports_linear)(const P&)) {
  return [key, exports_linear](const P& p, const Sweep& sweep, std::vector<ParamProblem>& problems) {
    check_training_layers(p, p.*Member, key, exports_linear(p), sweep, problems);
  };
}

// The needs callback of a training experiment: every model it applies to needs fits of the
// layers `layers_of(p, m)` that it trains.
template <typename P>
std::function<void(const P&, const Sweep&, PlanNeeds&)> training_needs(
    std::vector<std::int64_t> (*layers_of)(const P&, const ModelSpec&)) {
  return [layers_of](const P& p, const Sweep& sweep, PlanNeeds& n) {
    for (const auto& m : sweep.models)
      if (training_applies(p, m))
        for (std::int64_t l : layers_of(p, m)) n.training_layers[m.name].insert(l);
  };
}

}  // namespace linsweep
