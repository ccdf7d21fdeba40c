// Unit ids, splits, fingerprints and providers for unit expansion.
#include "experiments/framework/plan_builder.hpp"

#include <stdexcept>

#include "common/errors.hpp"

namespace linsweep {
namespace {

std::map<std::string, ProviderFn>& providers() {
  static std::map<std::string, ProviderFn> p;
  return p;
}

}  // namespace

ProviderRegistrar::ProviderRegistrar(std::string name, ProviderFn fn) {
  if (!providers().emplace(name, std::move(fn)).second)
    throw std::logic_error("provider '" + name + "' registered twice");
}

PlanBuilder::PlanBuilder(const Sweep& sweep, Fingerprinter fingerprinter, PlanNeeds needs)
    : sweep_(sweep), fingerprinter_(std::move(fingerprinter)), needs_(std::move(needs)) {}

std::vector<std::int64_t> PlanBuilder::sweep_layers(const ModelSpec& m) const {
  return sweep_.layers.resolve(m.layers);
}

std::vector<std::int64_t> PlanBuilder::covered_layers(const ModelSpec& m) const {
  const auto layers = sweep_layers(m);
  std::set<std::int64_t> out(layers.begin(), layers.end());
  if (auto it = needs_.measured_layers.find(m.name); it != needs_.measured_layers.end() && needs_.capture)
    out.insert(it->second.begin(), it->second.end());
  return {out.begin(), out.end()};
}

nlohmann::json PlanBuilder::split(const std::string& name) const {
  auto it = sweep_.splits.find(name);
  if (it == sweep_.splits.end())
    throw SpecError(sweep_.file + ": splits." + name + ": missing (needed by the requested experiments)");
  return {{"start", it->second.start}, {"tokens", it->second.tokens}};
}

UnitBasics PlanBuilder::basics(const std::string& corpus, const std::string& split_name, double lambda) const {
  UnitBasics b;
  if (!split_name.empty()) b.split = split(split_name).get<Split>();
  b.context = sweep_.context;
  b.lambda = lambda;
  b.format = sweep_.corpus(corpus)->format;
  return b;
}

const std::string& PlanBuilder::model_fingerprint(const std::string& model) {
  auto it = model_fp_.find(model);
  if (it == model_fp_.end()) it = model_fp_.emplace(model, fingerprinter_.model(*sweep_.model(model))).first;
  return it->second;
}

const std::string& PlanBuilder::stream_fingerprint(const std::string& model, const std::string& corpus) {
  auto it = stream_fp_.find({model, corpus});
  if (it == stream_fp_.end())
    it =
        stream_fp_
            .emplace(std::make_pair(model, corpus), fingerprinter_.stream(*sweep_.model(model), *sweep_.corpus(corpus)))
            .first;
  return it->second;
}

std::map<std::string, std::string> PlanBuilder::inputs(const std::string& model, const std::string& corpus) {
  const ModelSpec& m = *sweep_.model(model);
  return {{"model", model_fingerprint(model)},
          {"stream", stream_fingerprint(model, corpus)},
          {"dtype", m.dtype.value_or(sweep_.runtime.dtype)}};
}

std::string PlanBuilder::add(Unit u, const std::string& slot_suffix) {
  u.slot = u.kind + "/" + u.model + "/" + u.corpus + slot_suffix;
  u.id = unit_content_id(u);
  units_.push_back(std::move(u));
  return units_.back().id;
}

std::string PlanBuilder::add_with_inputs(Unit u, const std::string& slot_suffix) {
  u.inputs = inputs(u.model, u.corpus);
  return add(std::move(u), slot_suffix);
}

std::string PlanBuilder::provide(const std::string& provider, const ModelSpec& m, const std::string& corpus,
                                 const nlohmann::json& request) {
  const std::string key = provider + "\n" + m.name + "\n" + corpus + "\n" + request.dump();
  if (auto it = provided_.find(key); it != provided_.end()) return it->second;
  auto fn = providers().find(provider);
  if (fn == providers().end()) throw std::logic_error("no provider '" + provider + "'");
  const std::string id = fn->second(*this, m, corpus, request);
  provided_[key] = id;
  return id;
}

}  // namespace linsweep
