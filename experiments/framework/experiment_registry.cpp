// The registry of spec experiments and unit kinds.
#include <algorithm>
#include <utility>

#include "common/errors.hpp"
#include "common/registry.hpp"
#include "common/suggest.hpp"
#include "experiments/framework/experiment.hpp"

namespace linsweep {

ExperimentRegistry& ExperimentRegistry::instance() {
  static ExperimentRegistry registry;
  return registry;
}

void ExperimentRegistry::add(ExperimentDef def) {
  register_once(
      experiments_, std::move(def), "experiment", [](const ExperimentDef& e) { return e.name; },
      [](const ExperimentDef& a, const ExperimentDef& b) {
        return a.order != b.order ? a.order < b.order : a.name < b.name;
      });
}

MemoryNeed UnitKind::need(const MemoryQuery& q) const {
  MemoryNeed n = memory ? memory(q) : needs_model ? forward_need(q, q.context) : MemoryNeed{};
  // The executor holds the last model it loaded while it runs the units after it, those that
  // load none too.
  n.weights = std::max(n.weights, stage_weight_bytes(q));
  return n;
}

void ExperimentRegistry::add(UnitKind kind) {
  register_once(
      kinds_, std::move(kind), "unit kind", [](const UnitKind& k) { return k.kind; },
      [](const UnitKind& a, const UnitKind& b) { return a.kind < b.kind; });
}

std::vector<const ExperimentDef*> ExperimentRegistry::experiments() const {
  std::vector<const ExperimentDef*> out;
  for (const auto& e : experiments_) out.push_back(&e);
  return out;
}

const ExperimentDef* ExperimentRegistry::experiment(const std::string& name) const {
  for (const auto& e : experiments_)
    if (e.name == name) return &e;
  return nullptr;
}

std::vector<std::string> ExperimentRegistry::experiment_names() const {
  std::vector<std::string> out;
  for (const auto* e : experiments()) out.push_back(e->name);
  return out;
}

std::vector<std::string> ExperimentRegistry::kind_names() const {
  std::vector<std::string> out;
  for (const auto& k : kinds_) out.push_back(k.kind);
  std::sort(out.begin(), out.end());
  return out;
}

const UnitKind& ExperimentRegistry::kind(const std::string& kind) const {
  for (const auto& k : kinds_)
    if (k.kind == kind) return k;
  std::vector<std::string> names;
  std::string known;
  for (const auto& k : kinds_) names.push_back(k.kind), known += (known.empty() ? "" : ", ") + k.kind;
  throw InputError("unknown unit kind '" + kind + "'" + did_you_mean(kind, names) + " (known: " + known + ")");
}

}  // namespace linsweep
