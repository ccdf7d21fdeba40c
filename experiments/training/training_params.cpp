// The common part of training experiments' parameters and plans.
#include "experiments/training/training_params.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "experiments/fit/fit_units.hpp"

namespace linsweep {

void write_training_common(nlohmann::json& j, const TrainingUnitCommon& c) {
  j["lr"] = c.lr;
  j["weight_decay"] = c.weight_decay;
  j["clip"] = c.clip;
  j["batch"] = c.batch;
  j["warmup"] = c.warmup;
  if (c.schedule != "constant") j["schedule"] = c.schedule;  // constant units keep their ids
  j["seed"] = c.seed;
  j["trainable"] = c.trainable;
  j["checkpoint_every"] = c.checkpoint_every;
  j["save_model"] = c.save_model;
  j["train"] = c.train;
  j["eval"] = c.eval;
  put_basics(j, c.basics);
}

void read_training_common(const nlohmann::json& j, TrainingUnitCommon& c) {
  j.at("lr").get_to(c.lr);
  j.at("weight_decay").get_to(c.weight_decay);
  j.at("clip").get_to(c.clip);
  j.at("batch").get_to(c.batch);
  c.warmup = j.value("warmup", std::int64_t{0});
  c.schedule = j.value("schedule", std::string("constant"));
  j.at("seed").get_to(c.seed);
  j.at("trainable").get_to(c.trainable);
  j.at("checkpoint_every").get_to(c.checkpoint_every);
  c.save_model = j.value("save_model", true);
  j.at("train").get_to(c.train);
  j.at("eval").get_to(c.eval);
  c.basics = get_basics(j);
}

MemoryNeed training_memory(const MemoryQuery& q) {
  const ModelSize& m = q.model;
  const double tokens = static_cast<double>(q.params.value("batch", std::int64_t{1}) * q.context);
  // With stages a rank holds its stage's layers (the most any stage has) and parameters.
  const std::int64_t stages = std::max<std::int64_t>(1, q.stages);
  const double layers = static_cast<double>((m.layers + stages - 1) / stages);
  const double held = stage_weight_bytes(q);
  const double parameters = m.weight_bytes > 0 ? held / m.weight_bytes : static_cast<double>(m.parameters);
  // Per token and layer autograd keeps about ten tensors of width d and four of width d_ff.
  const double kept = tokens * layers * (10.0 * static_cast<double>(m.d_model) + 4.0 * static_cast<double>(m.d_ff)) * 4;
  return MemoryNeed{.weights = held, .activations = kept + forward_bytes(q, q.context), .optimizer = 16.0 * parameters};
}

bool training_applies(const TrainingCommonParams& p, const ModelSpec& m) {
  return p.model.empty() || p.model == m.name;
}

TrainingUnitCommon training_unit_common(const TrainingCommonParams& p, PlanBuilder& b, std::string* corpus) {
  const Sweep& sweep = b.sweep();
  *corpus = p.corpus.empty() ? sweep.corpora.front().name : p.corpus;
  TrainingUnitCommon c;
  c.lr = p.lr, c.weight_decay = p.weight_decay, c.clip = p.clip;
  c.batch = p.batch, c.warmup = p.warmup, c.seed = p.seed;
  c.schedule = p.schedule;
  c.trainable = p.trainable;
  c.checkpoint_every = p.checkpoint_every;
  c.save_model = p.save_model;
  c.train = b.split("train").get<Split>();
  c.basics.context = sweep.context;
  std::vector<std::string> names = p.eval_corpora;
  if (names.empty())
    for (const auto& x : sweep.corpora) names.push_back(x.name);
  for (const auto& n : names) c.eval.push_back({n, b.split("eval").get<Split>()});
  c.basics.lambda = first_lambda(sweep);
  return c;
}

std::map<std::string, std::string> training_inputs(PlanBuilder& b, const ModelSpec& m, const std::string& corpus,
                                                   const TrainingUnitCommon& c) {
  std::map<std::string, std::string> inputs = b.inputs(m.name, corpus);
  for (const auto& e : c.eval) inputs["stream:" + e.corpus] = b.stream_fingerprint(m.name, e.corpus);
  return inputs;
}

void check_training_layers(const TrainingCommonParams& p, const std::vector<std::int64_t>& layers,
                           const std::string& key, bool exports_linear, const Sweep& sweep,
                           std::vector<ParamProblem>& problems) {
  bool found = p.model.empty();
  for (const auto& m : sweep.models) {
    if (!p.model.empty() && m.name != p.model) continue;
    found = true;
    if (exports_linear && p.save_model && !m.export_problem.empty()) {
      problems.push_back({"save_model", "model '" + m.name + "': " + m.export_problem +
                                            "; set save_model: false to train it without exporting the weights"});
      return;
    }
    for (std::int64_t l : layers)
      if (l >= m.layers) {
        problems.push_back({key, "layer " + std::to_string(l) + " is outside model '" + m.name + "'"});
        return;
      }
  }
  if (!found) problems.push_back({"model", "'" + p.model + "' is not a model of this spec"});
  if (std::set<std::int64_t>(layers.begin(), layers.end()).size() != layers.size())
    problems.push_back({key, "lists a layer twice"});
}

std::vector<std::int64_t> middle_out_order(std::int64_t n) {
  std::vector<std::int64_t> out;
  const std::int64_t c = n / 2;
  for (std::int64_t k = 0; static_cast<std::int64_t>(out.size()) < n; ++k) {
    if (c - k >= 0) out.push_back(c - k);
    if (k > 0 && c + k < n) out.push_back(c + k);
  }
  return out;
}

}  // namespace linsweep
