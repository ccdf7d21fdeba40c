// Unit execution shared by the local run and the MPI worker ranks.
#include "orchestrator/run/unit_executor.hpp"

#include "common/errors.hpp"
#include "common/peak_memory.hpp"
#include "engine/device_memory.hpp"
#include "engine/model/load_model.hpp"
#include "engine/model/model_stages.hpp"
#include "engine/model/staged_model.hpp"
#include "engine/runtime.hpp"
#include "experiments/framework/experiment.hpp"
#include "storage/store.hpp"

namespace linsweep {

UnitExecutor::UnitExecutor(const SweepSpec& spec, StageContext stages) : spec_(spec), stages_(stages) {}
UnitExecutor::~UnitExecutor() = default;

namespace {

// The dtype of the activation shards a unit writes (its own parameter) or reads (a dependency's).
std::string activation_dtype_of(const Unit& u, const std::vector<UnitResult>& deps) {
  if (u.params.is_object() && u.params.contains("activation_dtype"))
    return u.params["activation_dtype"].get<std::string>();
  for (const UnitResult& d : deps)
    if (!d.provenance.activation_dtype.empty()) return d.provenance.activation_dtype;
  return "";
}

}  // namespace

LoadedModel UnitExecutor::load_held_model(const ModelSpec& m) const {
  const ModelOptions options{spec_.runtime.device, m.dtype.value_or(spec_.runtime.dtype),
                             stages_.stages > 1 ? stages_.replica->rank() : 0, stages_.stages};
  LoadedModel loaded = load_model(m.path, options);
  if (stages_.stages > 1)
    loaded.model = std::make_shared<StagedModel>(loaded.model, *stages_.replica,
                                                 split_stages(loaded.config(), stages_.stages), loaded.parameter_count);
  return loaded;
}

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
      model_ = std::make_unique<LoadedModel>(load_held_model(*m));
      held_ = u.model;
    }
    in.model = model_->model.get();
  }
  if (stages_.stages > 1) {
    in.stage = stages_.replica->rank(), in.stages = stages_.stages;
    in.replica = stages_.replica, in.stage_peers = stages_.stage_peers;
  }
  const std::string device = kind.needs_model ? model_->device : resolve_device(spec_.runtime.device);
  reset_peak_resident();
  reset_device_peak(device);
  UnitResult result = kind.run(in);
  UnitProvenance& p = result.provenance;
  p.dtype = m->dtype.value_or(spec_.runtime.dtype);
  p.activation_dtype = activation_dtype_of(u, in.deps);
  p.peak_host_mib = peak_resident_mib();
  p.peak_device_mib = device_peak_mib(device);
  return result;
}

}  // namespace linsweep
