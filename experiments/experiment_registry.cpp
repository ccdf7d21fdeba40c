// Experiment lookup by unit kind.
#include "common/errors.hpp"
#include "experiments/experiment.hpp"

namespace linsweep {

ExperimentRegistry& ExperimentRegistry::instance() {
  static ExperimentRegistry registry;
  return registry;
}

void ExperimentRegistry::add(std::string kind, ExperimentFn fn, bool needs_model) {
  entries_.push_back({std::move(kind), std::move(fn), needs_model});
}

const ExperimentRegistry::Entry& ExperimentRegistry::find(const std::string& kind) const {
  for (const auto& e : entries_)
    if (e.kind == kind) return e;
  std::string known;
  for (const auto& n : names()) known += (known.empty() ? "" : ", ") + n;
  throw InputError("unknown experiment '" + kind + "' (known: " + known + ")");
}

const ExperimentFn& ExperimentRegistry::get(const std::string& kind) const { return find(kind).fn; }
bool ExperimentRegistry::needs_model(const std::string& kind) const { return find(kind).needs_model; }

std::vector<std::string> ExperimentRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.kind);
  return out;
}

}  // namespace linsweep
