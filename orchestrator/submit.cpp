// `submit` and the scheduler half of `status` / `resume --submit`.
#include "orchestrator/submit.hpp"

#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <nlohmann/json.hpp>
#include <set>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "orchestrator/plan.hpp"
#include "orchestrator/runner.hpp"
#include "orchestrator/spec.hpp"
#include "slurm/batch_script.hpp"
#include "slurm/job_record.hpp"
#include "slurm/scheduler.hpp"
#include "storage/store.hpp"

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
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0 && ::fsync(fileno(f)) == 0;
  std::fclose(f);
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) throw SlurmError(path + ": write failed");
  if (executable) fs::permissions(path, fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add);
}

}  // namespace

nlohmann::json SubmitReport::to_json() const {
  nlohmann::json j = {{"store", store}, {"units", total}, {"committed", committed}, {"pending", pending}, {"held_by_live_jobs", held},
                      {"live_jobs", live_jobs}, {"jobs", nlohmann::json::array()}};
  for (const auto& job : jobs)
    j["jobs"].push_back({{"name", job.name}, {"job_id", job.job_id}, {"script", job.script_path}, {"units", job.units.size()},
                         {"all_pending", job.units.empty()}, {"dependencies", job.dependencies}});
  return j;
}

SubmitReport submit_sweep(const std::string& spec_path, const SubmitOptions& options) {
  const SweepSpec spec = load_spec(spec_path, options.store_override);
  check_resources(spec.resources, spec_path);
  if (is_directory(spec.store)) require_store_confined(spec.store);  // STORE/slurm must not lead elsewhere
  const Plan plan = make_plan(spec);
  SubmitReport report;
  report.store = absolute(spec.store);
  std::unique_ptr<Store> store;
  if (fs::exists(spec.store + "/store.json")) store = std::make_unique<Store>(Store::open_read(spec.store));
  const auto status = plan_status(plan, store.get());
  report.total = status.size();
  // Units that recorded jobs which are still alive will run: never submitted twice.
  std::map<std::string, std::string> held;  // unit id -> the live job that holds it
  bool all_held = false;
  if (store) {
    const auto records = read_job_records(spec.store);
    if (!records.empty()) {
      std::vector<std::string> ids;
      for (const auto& r : records) ids.push_back(r.job_id);
      const auto states = query_jobs(ids);
      for (const auto& r : records) {
        auto it = states.find(r.job_id);
        if (it != states.end() && it->second.reason == "DependencyNeverSatisfied" && !options.dry_run)
          run_program({"scancel", r.job_id}, 60);  // Slurm would keep it pending forever
        if (it == states.end() || !it->second.alive()) continue;
        report.live_jobs.push_back(r.job_id);
        if (r.units.empty()) all_held = true;
        for (const auto& u : r.units) held[u] = r.job_id;
      }
    }
  }
  std::vector<const Unit*> pending;
  for (const auto& p : status) {
    if (p.state == UnitState::kDone) {
      ++report.committed;
      continue;
    }
    ++report.pending;
    if (all_held || held.count(p.unit->id)) {
      ++report.held;
      continue;
    }
    pending.push_back(p.unit);
  }
  if (pending.empty()) return report;

  // Split into groups of units.
  std::vector<std::vector<const Unit*>> groups;
  std::int64_t per_job = 0;
  if (options.split == "none") {
    groups.push_back(pending);
  } else if (options.split == "model") {
    std::map<std::string, std::size_t> slot;
    for (const Unit* u : pending) {
      auto [it, fresh] = slot.emplace(u->model, groups.size());
      if (fresh) groups.emplace_back();
      groups[it->second].push_back(u);
    }
  } else if (options.split.rfind("units:", 0) == 0) {
    try {
      per_job = std::stoll(options.split.substr(6));
    } catch (const std::exception&) {
      per_job = 0;
    }
    if (per_job < 1) throw InputError("--split: '" + options.split + "' needs a positive unit count (units:K)");
    for (std::size_t i = 0; i < pending.size(); i += static_cast<std::size_t>(per_job))
      groups.emplace_back(pending.begin() + static_cast<std::ptrdiff_t>(i),
                          pending.begin() + static_cast<std::ptrdiff_t>(std::min(pending.size(), i + static_cast<std::size_t>(per_job))));
  } else {
    throw InputError("--split: '" + options.split + "' is not none, model or units:K");
  }
  // A single job over everything pending runs without a unit list (and takes the store lock
  // exclusively); otherwise every job lists its units and shares the lock.
  const bool listed = groups.size() > 1 || !held.empty() || all_held;

  const std::string slurm_dir = report.store + "/slurm", log_dir = slurm_dir + "/logs";
  const std::string base = "ls-" + job_token(fs::path(report.store).filename().string());
  // Seconds plus a random tag: two submissions in the same second must not share file names.
  const auto stamp = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string tag = std::to_string(stamp) + "-" + std::to_string(std::random_device{}() % 100000);
  if (!options.dry_run) {
    std::error_code ec;
    fs::create_directories(log_dir, ec);
    if (ec) throw SlurmError(log_dir + ": cannot create: " + ec.message());
  }
  std::map<std::string, std::size_t> job_of;  // unit id -> job index in this submission
  for (std::size_t g = 0; g < groups.size(); ++g) {
    PlannedJob job;
    job.name = base + "-" + tag + "-" + std::to_string(g);
    if (listed)
      for (const Unit* u : groups[g]) job.units.push_back(u->id);
    std::set<std::size_t> after;
    std::set<std::string> after_live;  // dependencies that a still-live earlier job holds
    for (const Unit* u : groups[g])
      for (const auto& d : u->deps) {
        if (auto it = job_of.find(d); it != job_of.end() && it->second != g) after.insert(it->second);
        if (auto it = held.find(d); it != held.end()) after_live.insert(it->second);
      }
    for (std::size_t a : after) job.dependencies.push_back("afterok:" + (options.dry_run ? "<job " + std::to_string(a) + ">" : report.jobs[a].job_id));
    for (const auto& id : after_live) job.dependencies.push_back("afterok:" + id);
    if (options.max_concurrent > 0 && g >= static_cast<std::size_t>(options.max_concurrent)) {
      const std::size_t prev = g - static_cast<std::size_t>(options.max_concurrent);
      job.dependencies.push_back("afterany:" + (options.dry_run ? "<job " + std::to_string(prev) + ">" : report.jobs[prev].job_id));
    }
    job.script_path = slurm_dir + "/" + job.name + ".sh";
    if (listed) job.units_file = slurm_dir + "/" + job.name + ".units";
    BatchJob b{job.name, absolute(options.linsweep.empty() ? self_path() : options.linsweep), absolute(spec_path), report.store,
               job.units_file, log_dir, spec.runtime.grace_seconds};
    job.script = render_batch_script(spec.resources, b, spec_path);
    if (!options.dry_run) {
      std::string units_text;
      for (const auto& id : job.units) units_text += id + "\n";
      try {
        if (listed) write_file(job.units_file, units_text, false);
        write_file(job.script_path, job.script, true);
        job.job_id = submit_batch(job.script_path, log_dir, job.dependencies);
      } catch (...) {
        // All or nothing: the jobs of this submission that sbatch already accepted are
        // cancelled and nothing of it is recorded.
        std::error_code ec;
        fs::remove(job.script_path, ec);
        if (listed) fs::remove(job.units_file, ec);
        for (const auto& earlier : report.jobs) {
          run_program({"scancel", earlier.job_id}, 60);
          fs::remove(earlier.script_path, ec);
          if (!earlier.units_file.empty()) fs::remove(earlier.units_file, ec);
        }
        throw;
      }
    }
    for (const Unit* u : groups[g]) job_of[u->id] = g;
    report.jobs.push_back(std::move(job));
  }
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
    append_job_record(report.store, {job.job_id, job.name, job.script_path, job.units_file, job.units, job.dependencies, now});
  return report;
}

nlohmann::json slurm_jobs_status(const std::string& store_dir) {
  nlohmann::json out = nlohmann::json::array();
  const auto records = read_job_records(store_dir);
  if (records.empty()) return out;
  std::vector<std::string> ids;
  for (const auto& r : records) ids.push_back(r.job_id);
  const auto states = query_jobs(ids);
  const Store store = Store::open_read(store_dir);
  const auto committed_list = store.committed_units();
  const std::set<std::string> committed(committed_list.begin(), committed_list.end());
  for (const auto& r : records) {
    const JobInfo& j = states.at(r.job_id);
    std::size_t done = 0;
    for (const auto& u : r.units) done += committed.count(u);
    out.push_back({{"job_id", r.job_id}, {"name", r.name}, {"state", j.state}, {"reason", j.reason}, {"restarts", j.restarts},
                   {"source", j.source}, {"alive", j.alive()}, {"units", r.units.size()}, {"units_committed", done},
                   {"all_pending", r.units.empty()}, {"dependencies", r.after}, {"script", r.script}});
  }
  return out;
}

}  // namespace linsweep
