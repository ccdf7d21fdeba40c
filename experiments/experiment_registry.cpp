// The registry of spec experiments and unit kinds.
#include <algorithm>
#include <stdexcept>

#include "common/errors.hpp"
#include "common/suggest.hpp"
#include "experiments/experiment.hpp"

namespace linsweep {

ExperimentRegistry& ExperimentRegistry::instance() {
  static ExperimentRegistry registry;
  return registry;
}

void ExperimentRegistry::add(ExperimentDef def) {
  if (experiment(def.name) != nullptr) throw std::logic_error("experiment '" + def.name + "' registered twice");
  experiments_.push_back(std::move(def));
}

void ExperimentRegistry::add(UnitKind kind) {
  for (const auto& k : kinds_)
    if (k.kind == kind.kind) throw std::logic_error("unit kind '" + kind.kind + "' registered twice");
  kinds_.push_back(std::move(kind));
}

std::vector<const ExperimentDef*> ExperimentRegistry::experiments() const {
  std::vector<const ExperimentDef*> out;
  for (const auto& e : experiments_) out.push_back(&e);
  std::sort(out.begin(), out.end(), [](const ExperimentDef* a, const ExperimentDef* b) {
    return a->order != b->order ? a->order < b->order : a->name < b->name;
  });
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

const UnitKind& ExperimentRegistry::kind(const std::string& kind) const {
  for (const auto& k : kinds_)
    if (k.kind == kind) return k;
  std::vector<std::string> names;
  std::string known;
  for (const auto& k : kinds_) names.push_back(k.kind), known += (known.empty() ? "" : ", ") + k.kind;
  throw InputError("unknown unit kind '" + kind + "'" + did_you_mean(kind, names) + " (known: " + known + ")");
}

}  // namespace linsweep
