// Unit execution shared by the single-process runner and the MPI workers.
#include "orchestrator/unit_executor.hpp"

#include <chrono>
#include <cstdlib>
#include <thread>

#include "common/errors.hpp"
#include "experiments/experiment.hpp"
#include "storage/store.hpp"
#include "workers/corpus/corpus.hpp"
#include "workers/model/load_model.hpp"

namespace linsweep {

UnitExecutor::UnitExecutor(const SweepSpec& spec) : spec_(spec) {}
UnitExecutor::~UnitExecutor() = default;

UnitResult UnitExecutor::run(const Unit& u, const Store& store, Communicator* group) {
  // Test hook: make every unit of one kind fail, to exercise retries and failure reporting.
  if (const char* kind = std::getenv("LINSWEEP_TEST_FAIL_KIND"); kind != nullptr && u.kind == kind)
    throw InputError("test hook LINSWEEP_TEST_FAIL_KIND=" + u.kind + " failed unit " + u.id);
  // Test hook: slow every unit down, so that tests can signal or kill a sweep mid-run.
  if (const char* secs = std::getenv("LINSWEEP_TEST_UNIT_SLEEP"); secs != nullptr)
    std::this_thread::sleep_for(std::chrono::duration<double>(std::atof(secs)));
  const ModelSpec* m = nullptr;
  const CorpusSpec* c = nullptr;
  for (const auto& x : spec_.models) m = x.name == u.model ? &x : m;
  for (const auto& x : spec_.corpora) c = x.name == u.corpus ? &x : c;
  if (m == nullptr || c == nullptr) throw InputError(u.id + ": model or corpus not in the spec");
  ExperimentInput in;
  in.unit_id = u.id;
  in.kind = u.kind;
  in.model_name = u.model;
  in.corpus_name = u.corpus;
  in.model_path = m->path;
  in.corpus_path = c->path;
  in.corpus_format = c->format.empty() ? corpus_format_name(guess_corpus_format(c->path)) : c->format;
  in.params = u.params;
  in.provenance = u.provenance();
  in.batch = spec_.runtime.batch;
  in.group = group;
  in.store_dir = store.dir();
  in.device = spec_.runtime.device;
  in.stop_requested = stop_check_;
  for (const auto& x : spec_.corpora)
    in.corpora[x.name] = {x.path, x.format.empty() ? corpus_format_name(guess_corpus_format(x.path)) : x.format};
  for (const auto& d : u.deps) in.deps.push_back(store.read_unit(d));
  if (ExperimentRegistry::instance().needs_model(u.kind)) {
    if (held_ != u.model) {
      model_.reset();  // free the previous model before loading the next
      held_.clear();
      model_ = std::make_unique<LoadedModel>(load_model(m->path, ModelOptions{spec_.runtime.device, m->dtype.value_or(spec_.runtime.dtype)}));
      held_ = u.model;
    }
    in.model = model_->model.get();
  }
  return ExperimentRegistry::instance().get(u.kind)(in);
}

}  // namespace linsweep
