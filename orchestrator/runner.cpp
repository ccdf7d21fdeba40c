// Single-process sweep execution.
#include "orchestrator/runner.hpp"

#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <cstdlib>
#include <sstream>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "common/signal_recorder.hpp"
#include "orchestrator/plan.hpp"
#include "orchestrator/progress.hpp"
#include "orchestrator/unit_executor.hpp"
#include "storage/store.hpp"
#include "workers/runtime.hpp"

namespace linsweep {

namespace {

int run_sweep_unchecked(const std::string& spec_path, const RunOptions& options) {
  const SweepSpec spec = load_spec(spec_path, options.store_override);
  Plan plan = make_plan(spec);
  const std::set<std::string> wanted = options.units_file.empty() ? std::set<std::string>{}
                                                                   : read_units_file(options.units_file, plan);
  Store store = Store::open_write(spec.store, spec.text, !options.units_file.empty());
  if (!options.units_file.empty()) restrict_plan(wanted, store.committed_units(), &plan);
  DeadlineGuard deadline(store, plan);
  // Reads every committed unit's header and the journal: a corrupt store is refused here,
  // before run.json or any other file of it is written.
  const auto status = plan_status(plan, &store);
  if (auto stale = store.recovered_stale_lock(); stale && !options.quiet)
    std::fprintf(stderr, "run: recovered a stale lock (%s)\n", stale->c_str());
  configure_threads(options.threads > 0 ? options.threads : static_cast<int>(spec.runtime.threads));
  for (const auto& e : plan.not_planned) std::fprintf(stderr, "run: skipped %s\n", e.c_str());

  const SignalRecorder signals({SIGINT, SIGTERM, SIGUSR1});
  record_run(store, spec_path, options);
  std::size_t already = 0;
  for (const auto& p : status) already += p.state == UnitState::kDone ? 1 : 0;
  Progress progress(status.size(), already, progress_options(options));
  std::set<std::string> failed;
  UnitExecutor executor(spec);
  executor.set_stop_check([] { return SignalRecorder::received() != 0; });
  std::size_t ran = 0;
  bool out_of_time = false;
  for (const auto& p : status) {
    const Unit& u = *p.unit;
    if (p.state == UnitState::kDone) continue;
    if (SignalRecorder::received() != 0) break;
    if (!deadline.fits(u.kind)) {
      progress.note("run: " + u.label() + " would not finish before the job's time limit; stopping here (resumable)", true);
      out_of_time = true;
      break;
    }
    bool blocked = false;
    for (const auto& d : u.deps) blocked = blocked || failed.count(d) > 0;
    if (blocked) {
      failed.insert(u.id);
      skip_unit(store, progress, u);
      continue;
    }
    bool committed = false;
    for (std::int64_t attempt = 1; attempt <= spec.runtime.retries + 1 && !committed; ++attempt) {
      store.journal({.event = "started", .unit = u.id});
      log_unit(store, progress, u, "attempt " + std::to_string(attempt) + " started in this process");
      progress.started();
      const auto t0 = std::chrono::steady_clock::now();
      try {
        const UnitResult result = executor.run(u, store, nullptr);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        store.commit(result, seconds, 0, u.tokens());
        deadline.record(u.kind, seconds);
        committed = true;
        ++ran;
        log_unit(store, progress, u, committed_log(u, seconds, "", peak_rss_mib()));
        progress.finished(true, u.tokens(), committed_line(u, progress.done() + 1, status.size(), seconds));
      } catch (const InterruptedError& e) {
        // Stopped on request after saving a checkpoint: not a failure, and no retry.
        store.journal({.event = "interrupted", .unit = u.id, .error = e.what()});
        log_unit(store, progress, u, std::string("interrupted: ") + e.what());
        break;
      } catch (const DiskFullError&) {
        throw;  // no retry can succeed; run_sweep reports it
      } catch (const std::exception& e) {
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        store.journal({.event = "failed", .unit = u.id, .duration = seconds, .error = e.what()});
        log_unit(store, progress, u, "attempt " + std::to_string(attempt) + " failed: " + e.what());
        progress.finished(false, 0, failed_line(u, attempt, spec.runtime.retries + 1, e.what()));
      }
    }
    if (SignalRecorder::received() != 0 && !committed) break;  // interrupted inside the unit: resumable, not failed
    if (!committed) failed.insert(u.id);
  }
  store.rebuild_consolidated();
  const bool interrupted = SignalRecorder::received() != 0 || out_of_time;
  if (SignalRecorder::received() != 0) progress.note("run: signal " + std::to_string(SignalRecorder::received()) + ": stopped before the next unit", true);
  progress.note("run: " + std::to_string(status.size()) + " units: " + std::to_string(already) + " already done, " +
                std::to_string(ran) + " run now, " + std::to_string(failed.size()) + " failed" + (interrupted ? ", interrupted" : "") +
                "; store " + spec.store);
  if (interrupted) return static_cast<int>(ExitCode::kInterrupted);
  // A unit left out by --units because its dependency is missing did not run: not a success.
  return failed.empty() && plan.not_planned.empty() ? 0 : static_cast<int>(ExitCode::kUnitsFailed);
}

}  // namespace

int run_sweep(const std::string& spec_path, const RunOptions& options) {
  try {
    return run_sweep_unchecked(spec_path, options);
  } catch (const DiskFullError& e) {
    throw DiskFullError(user_message(e));
  }
}

std::string disk_full_message(const std::string& error) {
  return error + " (disk full: free space, then rerun or `linsweep resume STORE`; committed units are kept)";
}

std::string user_message(const std::exception& e) {
  return dynamic_cast<const DiskFullError*>(&e) != nullptr ? disk_full_message(e.what()) : std::string(e.what());
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
      throw InputError(path + ": unit '" + printable(id) + "' is not in this spec's plan (was the spec changed after submission?)");
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

DeadlineGuard::DeadlineGuard(const Store& store, const Plan& plan) {
  const char* env = std::getenv("LINSWEEP_DEADLINE");
  if (env == nullptr || *env == '\0') return;
  char* end = nullptr;
  const double v = std::strtod(env, &end);
  if (end == env || *end != '\0' || !(v > 0)) throw InputError(std::string("LINSWEEP_DEADLINE: '") + env + "' is not a unix time");
  deadline_ = v;
  std::map<std::string, std::string> kind_of;
  for (const auto& u : plan.units) kind_of[u.id] = u.kind;
  for (const auto& e : store.journal_events())
    if (e.event == "committed" && e.duration > 0)
      if (auto it = kind_of.find(e.unit); it != kind_of.end()) record(it->second, e.duration);
}

bool DeadlineGuard::fits(const std::string& kind) const {
  if (deadline_ <= 0) return true;
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto it = sums_.find(kind);
  const double estimate = it == sums_.end() ? 0.0 : it->second.first / it->second.second;
  return now + estimate < deadline_;
}

void DeadlineGuard::record(const std::string& kind, double seconds) {
  auto& [sum, n] = sums_[kind];
  sum += seconds;
  n += 1;
}

std::string recorded_spec(const std::string& store_dir, RunOptions* options) {
  const Store store = Store::open_read(store_dir);  // refuses a directory that is not a store
  const std::string path = store_dir + "/run.json";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw InputError(path + ": missing; this store was never run by `linsweep run` (run the spec instead)");
  const nlohmann::json j = read_json_file(path, 1 << 20);
  if (!j.is_object() || !j.contains("spec") || !j["spec"].is_string()) throw InputError(path + ": no \"spec\" string");
  const std::string spec = j["spec"].get<std::string>();
  if (!std::filesystem::is_regular_file(spec, ec))
    throw InputError(path + ": the recorded spec " + spec + " no longer exists; run `linsweep run SPEC --store " + store_dir + "`");
  options->store_override = store_dir;
  if (options->threads <= 0 && j.contains("threads") && j["threads"].is_number_integer()) options->threads = j["threads"].get<int>();
  return spec;
}

void log_unit(Store& store, Progress& progress, const Unit& unit, const std::string& line) {
  try {
    store.append_unit_log(unit.id, line);
  } catch (const DiskFullError&) {
    throw;
  } catch (const StorageError& e) {
    progress.note(std::string("run: ") + e.what(), true);
  }
}

std::string committed_line(const Unit& unit, std::size_t done, std::size_t total, double seconds) {
  char s[48];
  std::snprintf(s, sizeof(s), " committed in %.2f s", seconds);
  return "[" + std::to_string(done) + "/" + std::to_string(total) + "] " + unit.label() + s;
}

std::string committed_log(const Unit& unit, double seconds, const std::string& where, double peak_rss) {
  char s[96];
  std::snprintf(s, sizeof(s), ", %lld tokens, peak RSS %.0f MiB", static_cast<long long>(unit.tokens()), peak_rss);
  char t[48];
  std::snprintf(t, sizeof(t), "committed after %.2f s", seconds);
  return t + where + s;
}

std::string failed_line(const Unit& unit, std::int64_t attempt, std::int64_t attempts, const std::string& error) {
  return unit.label() + " (" + unit.id + ") failed, attempt " + std::to_string(attempt) + " of " + std::to_string(attempts) +
         ": " + error;
}

void skip_unit(Store& store, Progress& progress, const Unit& unit) {
  log_unit(store, progress, unit, "skipped: a dependency failed");
  progress.note(unit.label() + " (" + unit.id + ") skipped: a dependency failed", true);
}

ProgressOptions progress_options(const RunOptions& options) {
  ProgressOptions p;
  p.quiet = options.quiet;
  p.live = stderr_is_terminal();
  return p;
}

double peak_rss_mib() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // kilobytes on Linux
}

void record_run(Store& store, const std::string& spec_path, const RunOptions& options) {
  std::error_code ec;
  const auto abs = std::filesystem::absolute(spec_path, ec);
  nlohmann::json j = {{"spec", ec ? spec_path : abs.lexically_normal().string()}, {"store", store.dir()}};
  if (options.threads > 0) j["threads"] = options.threads;
  atomic_write_text(store.dir() + "/run.json", j.dump(2) + "\n");
}

}  // namespace linsweep
