// `submit` and `resume --submit`.
#include "orchestrator/submit/submit.hpp"

#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "orchestrator/plan/memory_plan.hpp"
#include "orchestrator/plan/plan.hpp"
#include "orchestrator/plan/split_check.hpp"
#include "orchestrator/run/sweep_setup.hpp"
#include "orchestrator/spec/spec.hpp"
#include "orchestrator/submit/slurm_jobs.hpp"
#include "slurm/batch_script.hpp"
#include "slurm/job_record.hpp"
#include "slurm/job_split.hpp"
#include "slurm/scheduler.hpp"
#include "storage/store.hpp"
#include "storage/store_layout.hpp"

namespace linsweep {
namespace {

namespace fs = std::filesystem;

std::string self_path() {
  std::error_code ec;
  const auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("linsweep") : p.string();
}

std::string absolute(const std::string& p) {
  std::error_code ec;
  const auto a = fs::absolute(p, ec);
  return ec ? p : a.lexically_normal().string();
}

// Letters, digits, '_', '.', '-' only: job names reach #SBATCH lines and file names.
std::string job_token(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-') ? c : '_';
  return out.empty() ? "sweep" : out.substr(0, 40);
}

void write_file(const std::string& path, const std::string& text, bool executable) {
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) throw SlurmError(tmp + ": cannot write");
  const bool ok =
      std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0 && ::fsync(fileno(f)) == 0;
  std::fclose(f);
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) throw SlurmError(path + ": write failed");
  if (executable) fs::permissions(path, fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add);
}

// The recorded jobs (and array tasks) that may still run, and the units they hold.
struct LiveJobs {
  std::map<std::string, std::string> held;  // unit id -> the live job or array task that holds it
  bool all_held = false;                    // a live plain job runs every pending unit
  std::vector<std::string> ids;
};

LiveJobs live_jobs(const std::string& store_dir, bool dry_run) {
  LiveJobs live;
  const RecordedJobs jobs = recorded_jobs(store_dir);
  const auto& states = jobs.states;
  for (const auto& s : jobs.scheduled) {
    auto it = states.find(s.id);
    if (it != states.end() && it->second.reason == "DependencyNeverSatisfied" && !dry_run)
      run_program({"scancel", s.id}, 60);  // Slurm would keep it pending forever
    if (it == states.end() || !it->second.alive()) continue;
    live.ids.push_back(s.id);
    if (s.units.empty()) live.all_held = true;
    for (const auto& u : s.units) live.held[u] = s.id;
  }
  return live;
}

// Job g of `split` as a PlannedJob: its units (and tasks, for an array) when `listed`, and
// what it waits for: afterok on the jobs of this submission and the live jobs that hold its
// dependencies; with --max-concurrent, an array runs that many tasks at once and a plain job
// waits (afterany) for the job that many places before it. `earlier`: the jobs planned so far.
PlannedJob plan_job(const std::vector<SplitJob>& split, std::size_t g, const std::vector<SplitUnit>& units,
                    const LiveJobs& live, bool listed, const SubmitOptions& options,
                    const std::vector<PlannedJob>& earlier) {
  PlannedJob job;
  const SplitJob& s = split[g];
  std::set<std::string> after_live;
  for (const auto& task : s.tasks) {
    if (s.array) job.tasks.emplace_back();
    for (std::size_t u : task) {
      if (listed) job.units.push_back(units[u].id);
      if (s.array) job.tasks.back().push_back(units[u].id);
      for (const auto& d : units[u].deps)
        if (auto it = live.held.find(d); it != live.held.end()) after_live.insert(it->second);
    }
  }
  auto id_of = [&](std::size_t j) { return options.dry_run ? "<job " + std::to_string(j) + ">" : earlier[j].job_id; };
  for (std::size_t a : s.after) job.dependencies.push_back("afterok:" + id_of(a));
  for (const auto& id : after_live) job.dependencies.push_back("afterok:" + id);
  if (s.array)
    job.array_limit = options.max_concurrent;
  else if (options.max_concurrent > 0 && g >= static_cast<std::size_t>(options.max_concurrent))
    job.dependencies.push_back("afterany:" + id_of(g - static_cast<std::size_t>(options.max_concurrent)));
  return job;
}

void remove_job_files(const PlannedJob& job) {
  std::error_code ec;
  fs::remove(job.script_path, ec);
  if (job.units_file.empty()) return;
  if (job.tasks.empty()) fs::remove(job.units_file, ec);
  for (std::size_t t = 0; t < job.tasks.size(); ++t)
    fs::remove(array_units_file(job.units_file, static_cast<std::int64_t>(t)), ec);
}

std::string lines(const std::vector<std::string>& ids) {
  std::string text;
  for (const auto& id : ids) text += id + "\n";
  return text;
}

// Writes the job's unit list(s) and script and submits it (job->job_id); on failure its files
// are removed and the error rethrown.
void submit_job(PlannedJob* job, const std::string& log_dir) {
  try {
    if (!job->units_file.empty() && job->tasks.empty()) write_file(job->units_file, lines(job->units), false);
    for (std::size_t t = 0; t < job->tasks.size(); ++t)
      write_file(array_units_file(job->units_file, static_cast<std::int64_t>(t)), lines(job->tasks[t]), false);
    write_file(job->script_path, job->script, true);
    job->job_id = submit_batch(job->script_path, log_dir, job->dependencies);
  } catch (...) {
    remove_job_files(*job);
    throw;
  }
}

}  // namespace

nlohmann::json SubmitReport::to_json() const {
  nlohmann::json j = {{"store", store},
                      {"units", total},
                      {"committed", committed},
                      {"pending", pending},
                      {"held_by_live_jobs", held},
                      {"live_jobs", live_jobs},
                      {"jobs", nlohmann::json::array()}};
  for (const auto& job : jobs)
    j["jobs"].push_back({{"name", job.name},
                         {"job_id", job.job_id},
                         {"script", job.script_path},
                         {"units", job.units.size()},
                         {"all_pending", job.units.empty()},
                         {"dependencies", job.dependencies},
                         {"array_tasks", job.tasks.size()},
                         {"array_limit", job.array_limit}});
  return j;
}

namespace {

// The units of `status` still to run, counted into `report`: those committed are done, those a
// live job holds will run there (never submitted twice).
std::vector<SplitUnit> pending_units(const std::vector<PlannedUnit>& status, const LiveJobs& live,
                                     SubmitReport* report) {
  std::vector<SplitUnit> pending;
  for (const auto& p : status) {
    if (p.state == UnitState::kDone) {
      ++report->committed;
      continue;
    }
    ++report->pending;
    if (live.all_held || live.held.count(p.unit->id)) {
      ++report->held;
      continue;
    }
    pending.push_back({p.unit->id, p.unit->model, p.unit->deps});
  }
  return pending;
}

// Writes each job's batch script and submits it (unless a dry run), into report->jobs. All or
// nothing: when sbatch refuses one, the jobs of this submission it already accepted are
// cancelled and the error is thrown.
void submit_jobs(const SweepSpec& spec, const std::string& spec_path, const SubmitOptions& options,
                 const std::vector<SplitJob>& split, const std::vector<SplitUnit>& pending, const LiveJobs& live,
                 SubmitReport* report) {
  // A single job over everything pending runs without a unit list (and takes the store lock
  // exclusively); otherwise every job lists its units and shares the lock.
  const bool listed = split.size() > 1 || split[0].array || !live.held.empty() || live.all_held;
  const std::string slurm_dir = StoreLayout(report->store).slurm_dir(), log_dir = slurm_dir + "/logs";
  const std::string base = "ls-" + job_token(fs::path(report->store).filename().string());
  // Seconds plus a random tag: two submissions in the same second must not share file names.
  const auto stamp =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string tag = std::to_string(stamp) + "-" + std::to_string(std::random_device{}() % 100000);
  if (!options.dry_run) {
    std::error_code ec;
    fs::create_directories(log_dir, ec);
    if (ec) throw SlurmError(log_dir + ": cannot create: " + ec.message());
  }
  for (std::size_t g = 0; g < split.size(); ++g) {
    PlannedJob job = plan_job(split, g, pending, live, listed, options, report->jobs);
    job.name = base + "-" + tag + "-" + std::to_string(g);
    job.script_path = slurm_dir + "/" + job.name + ".sh";
    if (listed) job.units_file = slurm_dir + "/" + job.name + (job.tasks.empty() ? ".units" : ".");
    BatchJob b{job.name,
               absolute(options.linsweep.empty() ? self_path() : options.linsweep),
               absolute(spec_path),
               report->store,
               job.units_file,
               log_dir,
               spec.runtime.grace_seconds,
               static_cast<std::int64_t>(job.tasks.size()),
               job.array_limit,
               options.overrides};
    job.script = render_batch_script(spec.resources, b, spec_path);
    if (!options.dry_run) {
      try {
        submit_job(&job, log_dir);
      } catch (...) {
        for (const auto& earlier : report->jobs) {
          run_program({"scancel", earlier.job_id}, 60);
          remove_job_files(earlier);
        }
        throw;
      }
    }
    report->jobs.push_back(std::move(job));
  }
}

}  // namespace

SubmitReport submit_sweep(const std::string& spec_path, const SubmitOptions& options) {
  const SweepSpec spec = load_spec(spec_path, options.store_override, options.overrides);
  check_resources(spec.resources, spec_path);
  if (is_directory(spec.store)) require_store_confined(spec.store);  // STORE/slurm must not lead elsewhere
  FileHashCache fingerprints = fingerprint_cache(spec);
  const Plan plan = make_plan(spec, fingerprints);
  check_splits_fit(spec_path, spec, plan);
  check_memory(spec_path, spec, plan_memory(spec, plan));  // before anything runs
  save_fingerprint_cache(fingerprints, spec);
  SubmitReport report;
  report.store = absolute(spec.store);
  std::unique_ptr<Store> store;
  if (fs::exists(StoreLayout(spec.store).marker())) store = std::make_unique<Store>(Store::open_read(spec.store));
  const auto status = plan_status(plan, store.get());
  report.total = status.size();
  const LiveJobs live = store ? live_jobs(spec.store, options.dry_run) : LiveJobs{};
  report.live_jobs = live.ids;
  const std::vector<SplitUnit> pending = pending_units(status, live, &report);
  // The submitted plan decides which units are current (a submission of an earlier spec makes
  // its committed units current again even when nothing is left to run).
  auto record_plan = [&] {
    if (!options.dry_run && fs::exists(StoreLayout(spec.store).marker()))
      Store::open_read(spec.store).record_plan(plan_record("submit", plan, spec, spec_path, options.overrides));
  };
  if (pending.empty()) {
    record_plan();
    return report;
  }
  submit_jobs(spec, spec_path, options, split_units(pending, options.split), pending, live, &report);
  if (options.dry_run) return report;
  if (!store) {
    // Make the directory a store now, with run.json, so that status and resume work before
    // the job starts (unless a job already started and holds the lock: then it did this).
    try {
      Store created = Store::open_write(spec.store, spec.text);
      record_run(created, spec_path, RunOptions{});
    } catch (const StorageError&) {
    }
  }
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  for (const auto& job : report.jobs)
    append_job_record(report.store, {job.job_id, job.name, job.script_path, job.units_file, job.units, job.dependencies,
                                     now, job.tasks});
  record_plan();
  return report;
}

}  // namespace linsweep
