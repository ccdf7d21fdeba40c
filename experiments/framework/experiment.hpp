// The experiment registry. An experiment file registers, in one place: its spec parameters
// (a typed struct with defaults, ranges and docs), how it expands into units, the unit kinds it
// computes, its result tables (storage/table_def.hpp) and its summary section
// (presentation/section.hpp). docs/architecture.md, "Adding an experiment".
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/framework/memory_need.hpp"
#include "experiments/framework/params.hpp"
#include "experiments/framework/plan_builder.hpp"
#include "experiments/framework/sweep.hpp"
#include "storage/store_layout.hpp"
#include "storage/unit_file.hpp"

namespace linsweep {

class Communicator;
class LanguageModel;

// A corpus of the spec, for experiments that read corpora other than their unit's own.
struct CorpusRef {
  std::string path, format;
};

// Everything one unit needs, resolved by the executor. The model is loaded (and cached across
// units) by the executor; `deps` are the committed results of the unit's dependencies.
struct ExperimentInput {
  std::string unit_id, kind;
  std::string model_name, corpus_name;
  std::string model_path, corpus_path, corpus_format;
  nlohmann::json params;           // the unit's canonical parameters (read with the kind's struct)
  std::string provenance;          // stored as the unit's `params` attribute
  std::vector<UnitResult> deps;    // in the order of the plan's deps
  LanguageModel* model = nullptr;  // null for kinds that do not need it
  std::int64_t batch = 8;
  // Where the store keeps things: capture units write activation shards there, training units
  // checkpoints and exported models.
  StoreLayout store;
  // Every corpus of the spec by name (training experiments evaluate on several).
  std::map<std::string, CorpusRef> corpora;
  // The runtime's device request ("auto", "cpu", "cuda:N") and compute dtype (runtime.dtype),
  // for kinds that load their own copy of the model (training).
  std::string device = "auto";
  std::string dtype = "float32";
  // True once the run was asked to stop (SIGUSR1/SIGTERM/SIGINT). Long units (training) check
  // it, save a checkpoint and throw InterruptedError; may be empty.
  std::function<bool()> stop_requested;
  // The unit's worker group when several ranks share it (windows sharded, sums all-reduced);
  // null for a single rank. Every rank of the group runs the unit with the same input.
  Communicator* group = nullptr;
  // With the model split over `stages` consecutive ranks of the group (runtime.stages), this
  // rank holds stage `stage`; the group's windows are sharded over its replicas (group size /
  // stages), and every rank of a replica runs the same windows (model is a StagedModel).
  std::int64_t stage = 0, stages = 1;
  // With stages, the communicator over this rank's replica, in stage order (stage_data.hpp
  // moves what one stage computed to the others); null with one stage.
  Communicator* replica = nullptr;
  // With stages, the communicator over the group's ranks that hold this rank's stage, one per
  // replica (training sums a stage's gradients over it); null with one stage.
  Communicator* stage_peers = nullptr;
};

using UnitFn = std::function<UnitResult(const ExperimentInput&)>;

// A unit kind's computation.
struct UnitKind {
  std::string kind;
  UnitFn run;
  bool needs_model = false;  // the executor loads (or reuses) the unit's model first
  // Its memory on one rank (memory_need.hpp); empty: forward_need over its context when it
  // needs a model, nothing beyond the process's own footprint otherwise.
  MemoryFn memory{};
  // Whether it runs on a model split by layers over ranks (runtime.stages: the model it gets is
  // a StagedModel, engine/model/staged_model.hpp) or on no model at all; a spec with stages
  // whose plan holds a unit of another kind is refused.
  bool runs_split = false;
  // Why a unit with these parameters needs a whole model, one clause for the plan's refusal on
  // a split model: of a kind that runs split, empty when this unit does not; of one that does
  // not, the kind's reason. May be empty.
  std::function<std::string(const nlohmann::json& params)> whole_model_reason{};
  // The need of one of its units: `memory`, or the default above, with at least the model's
  // weights (the executor holds the model it last loaded while later units of it run).
  MemoryNeed need(const MemoryQuery& q) const;
};

// A spec experiment, type-erased: its parameters travel as canonical JSON (every declared key,
// defaults filled) between the spec reader and the plan, and each callback reads them back
// into the experiment's own struct.
struct ExperimentDef {
  std::string name;  // key under `experiments:` in a spec
  std::string doc;   // one line, for docs and --help
  int order = 0;     // expansion order: lower first (fit before its readers)
  std::vector<ParamField> params;
  // Checks beyond each parameter's range (other parameters, the sweep's models and corpora).
  std::function<std::vector<ParamProblem>(const nlohmann::json&, const Sweep&)> validate;
  // Layers it needs fitted and captured beyond the sweep's, before any experiment expands.
  std::function<void(const nlohmann::json&, const Sweep&, PlanNeeds&)> needs;
  // Adds its units. Throws SpecError for combinations the spec reader cannot see alone.
  std::function<void(const nlohmann::json&, PlanBuilder&)> expand;
};

// An ExperimentDef from a typed parameter schema and typed callbacks.
template <typename P>
ExperimentDef make_experiment(std::string name, std::string doc, int order, const ParamSchema<P>& schema,
                              std::function<void(const P&, PlanBuilder&)> expand,
                              std::function<void(const P&, const Sweep&, std::vector<ParamProblem>&)> validate = {},
                              std::function<void(const P&, const Sweep&, PlanNeeds&)> needs = {}) {
  ExperimentDef d;
  d.name = std::move(name);
  d.doc = std::move(doc);
  d.order = order;
  d.params = schema.fields();
  d.expand = [schema, expand](const nlohmann::json& j, PlanBuilder& b) { expand(schema.from_json(j), b); };
  if (validate)
    d.validate = [schema, validate](const nlohmann::json& j, const Sweep& s) {
      std::vector<ParamProblem> problems;
      validate(schema.from_json(j), s, problems);
      return problems;
    };
  if (needs)
    d.needs = [schema, needs](const nlohmann::json& j, const Sweep& s, PlanNeeds& n) {
      needs(schema.from_json(j), s, n);
    };
  return d;
}

// Process-wide registry, filled by static registrars before main() and read-only afterwards.
class ExperimentRegistry {
 public:
  static ExperimentRegistry& instance();
  void add(ExperimentDef def);
  void add(UnitKind kind);

  // Spec experiments in expansion order (then by name).
  std::vector<const ExperimentDef*> experiments() const;
  // Null when `name` is not a spec experiment.
  const ExperimentDef* experiment(const std::string& name) const;
  // Throws InputError("unknown unit kind 'x' (known: ...)").
  const UnitKind& kind(const std::string& kind) const;
  std::vector<std::string> experiment_names() const;
  // Every unit kind, sorted.
  std::vector<std::string> kind_names() const;

 private:
  std::vector<ExperimentDef> experiments_;
  std::vector<UnitKind> kinds_;
};

struct ExperimentRegistrar {
  explicit ExperimentRegistrar(ExperimentDef def) { ExperimentRegistry::instance().add(std::move(def)); }
};
struct UnitKindRegistrar {
  UnitKindRegistrar(std::string kind, UnitFn run, bool needs_model, MemoryFn memory = {}, bool runs_split = false,
                    std::function<std::string(const nlohmann::json&)> whole_model_reason = {}) {
    ExperimentRegistry::instance().add(UnitKind{std::move(kind), std::move(run), needs_model, std::move(memory),
                                                runs_split, std::move(whole_model_reason)});
  }
};

}  // namespace linsweep
