// Unit execution shared by the local run and the MPI worker ranks.
#include "orchestrator/run/unit_executor.hpp"

#include "common/errors.hpp"
#include "engine/model/load_model.hpp"
#include "experiments/framework/experiment.hpp"
#include "storage/store.hpp"

namespace linsweep {

UnitExecutor::UnitExecutor(const SweepSpec& spec) : spec_(spec) {}
UnitExecutor::~UnitExecutor() = default;

UnitResult UnitExecutor::run(const Unit& u, const Store& store, Communicator* group) {
  const ModelSpec* m = spec_.model(u.model);
  const CorpusSpec* c = spec_.corpus(u.corpus);
  if (m == nullptr || c == nullptr) throw InputError(u.id + ": model or corpus not in the spec");
  const UnitKind& kind = ExperimentRegistry::instance().kind(u.kind);
  ExperimentInput in;
  in.unit_id = u.id;
  in.kind = u.kind;
  in.model_name = u.model;
  in.corpus_name = u.corpus;
  in.model_path = m->path;
  in.corpus_path = c->path;
  in.corpus_format = c->format;
  in.params = u.params;
  in.provenance = u.provenance();
  in.batch = spec_.runtime.batch;
  in.group = group;
  in.store = store.layout();
  in.device = spec_.runtime.device;
  in.dtype = spec_.runtime.dtype;
  in.stop_requested = stop_check_;
  for (const auto& x : spec_.corpora) in.corpora[x.name] = {x.path, x.format};
  for (const auto& d : u.deps) in.deps.push_back(store.read_unit(d));
  if (kind.needs_model) {
    if (held_ != u.model) {
      model_.reset();  // free the previous model before loading the next
      held_.clear();
      model_ = std::make_unique<LoadedModel>(
          load_model(m->path, ModelOptions{spec_.runtime.device, m->dtype.value_or(spec_.runtime.dtype)}));
      held_ = u.model;
    }
    in.model = model_->model.get();
  }
  return kind.run(in);
}

}  // namespace linsweep
