// Spec -> plan -> --units -> open -> status -> run.json, shared by every way of running a sweep.
#include "orchestrator/run/sweep_setup.hpp"

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "orchestrator/plan/memory_plan.hpp"
#include "orchestrator/plan/split_check.hpp"

namespace linsweep {
namespace {

// What open_write recovered: a stale lock, journal lines written for unit files a killed
// writer committed, and journal lines whose unit file is gone.
void report_store_recovery(const Store& store, bool quiet) {
  if (auto stale = store.recovered_stale_lock(); stale && !quiet)
    std::fprintf(stderr, "run: recovered a stale lock (%s)\n", stale->c_str());
  const auto& r = store.reconciliation();
  for (const auto& id : r.recovered)
    if (!quiet)
      std::fprintf(
          stderr, "run: %s was committed by a writer that stopped before its journal line; journaled now (recovered)\n",
          id.c_str());
  for (const auto& id : r.missing)
    std::fprintf(stderr, "run: the journal lists %s as committed but units/%s.h5 is missing; it is pending again\n",
                 id.c_str(), id.c_str());
}

}  // namespace

std::unique_ptr<SweepSetup> prepare_sweep(
    const std::string& spec_path, const RunOptions& options,
    const std::function<void(const SweepSpec&, std::int64_t stages)>& check_layout) {
  SweepSpec spec = load_spec(spec_path, options.store_override, options.overrides);
  FileHashCache fingerprints = fingerprint_cache(spec);
  Plan plan = make_plan(spec, fingerprints);
  check_splits_fit(spec_path, spec, plan);  // before the store exists
  const MemoryPlan memory = plan_memory(spec, plan);
  check_memory(spec_path, spec, memory);  // before anything runs
  if (check_layout) check_layout(spec, memory.stages);
  const bool listed = !options.units_file.empty();
  const std::set<std::string> wanted = listed ? read_units_file(options.units_file, plan) : std::set<std::string>{};
  Store store = Store::open_write(spec.store, spec.text, listed);
  if (listed) restrict_plan(wanted, store.committed_units(), &plan);
  save_fingerprint_cache(fingerprints, spec);  // the store exists now
  auto setup =
      std::make_unique<SweepSetup>(SweepSetup{std::move(spec), std::move(plan), std::move(store), {}, memory.stages});
  setup->status = plan_status(setup->plan, &setup->store);
  report_store_recovery(setup->store, options.quiet);
  for (const auto& e : setup->plan.not_planned) std::fprintf(stderr, "run: skipped %s\n", e.c_str());
  record_run(setup->store, spec_path, options);
  // A job of a split submission runs part of a plan that `submit` recorded.
  if (!listed)
    setup->store.record_plan(plan_record(options.command, setup->plan, setup->spec, spec_path, options.overrides));
  return setup;
}

std::map<std::string, std::string> plan_slots(const Plan& plan) {
  std::map<std::string, std::string> slots;
  for (const auto& u : plan.units) slots[u.slot] = u.id;
  return slots;
}

std::set<std::string> read_units_file(const std::string& path, const Plan& plan) {
  std::set<std::string> wanted;
  std::istringstream in(read_file(path, 64u << 20));
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty() && line[0] != '#') wanted.insert(line);
  }
  std::set<std::string> known;
  for (const auto& u : plan.units) known.insert(u.id);
  for (const auto& id : wanted)
    if (!known.count(id))
      throw InputError(path + ": unit '" + printable(id) +
                       "' is not in this spec's plan (was the spec changed after submission?)");
  return wanted;
}

void restrict_plan(const std::set<std::string>& wanted, const std::vector<std::string>& committed, Plan* plan) {
  const std::set<std::string> done(committed.begin(), committed.end());
  std::set<std::string> kept;
  std::vector<Unit> units;
  for (auto& u : plan->units) {
    if (!wanted.count(u.id) && !done.count(u.id)) continue;
    bool ok = true;
    for (const auto& d : u.deps) ok = ok && (kept.count(d) || done.count(d));
    if (!ok) {
      plan->not_planned.push_back(u.label() + " (" + u.id + "): a dependency is neither in this job nor committed");
      continue;
    }
    kept.insert(u.id);
    units.push_back(std::move(u));
  }
  plan->units = std::move(units);
}

PlanRecord plan_record(const std::string& command, const Plan& plan, const SweepSpec& spec,
                       const std::string& spec_path, const std::vector<std::string>& overrides) {
  std::error_code ec;
  const auto abs = std::filesystem::absolute(spec_path, ec);
  return {.command = command,
          .slots = plan_slots(plan),
          .spec = ec ? spec_path : abs.lexically_normal().string(),
          .overrides = overrides,
          .spec_text = spec.text};
}

std::string recorded_spec(const std::string& store_dir, RunOptions* options) {
  const Store store = Store::open_read(store_dir);  // refuses a directory that is not a store
  const std::string path = store.layout().run_record();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw InputError(path + ": missing; this store was never run by `linsweep run` (run the spec instead)");
  const nlohmann::json j = read_json_file(path, 1 << 20);
  if (!j.is_object() || !j.contains("spec") || !j["spec"].is_string()) throw InputError(path + ": no \"spec\" string");
  const std::string spec = j["spec"].get<std::string>();
  if (!std::filesystem::is_regular_file(spec, ec))
    throw InputError(path + ": the recorded spec " + spec + " no longer exists; run `linsweep run SPEC --store " +
                     store_dir + "`");
  options->store_override = store_dir;
  if (options->threads <= 0 && j.contains("threads") && j["threads"].is_number_integer())
    options->threads = j["threads"].get<int>();
  // The recorded overrides first, then those given to `resume` (which may change them again).
  std::vector<std::string> overrides;
  if (j.contains("overrides")) {
    if (!j["overrides"].is_array()) throw InputError(path + ": \"overrides\" is not a list");
    for (const auto& o : j["overrides"]) {
      if (!o.is_string()) throw InputError(path + ": \"overrides\" holds a value that is not a string");
      overrides.push_back(o.get<std::string>());
    }
  }
  overrides.insert(overrides.end(), options->overrides.begin(), options->overrides.end());
  options->overrides = std::move(overrides);
  return spec;
}

void record_run(Store& store, const std::string& spec_path, const RunOptions& options) {
  std::error_code ec;
  const auto abs = std::filesystem::absolute(spec_path, ec);
  nlohmann::json j = {{"spec", ec ? spec_path : abs.lexically_normal().string()},
                      {"store", store.dir()},
                      {"overrides", options.overrides}};
  if (options.threads > 0) j["threads"] = options.threads;
  atomic_write_text(store.layout().run_record(), j.dump(2) + "\n");
}

}  // namespace linsweep
