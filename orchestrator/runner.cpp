// Single-process sweep execution.
#include "orchestrator/runner.hpp"

#include <csignal>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include "common/errors.hpp"
#include "orchestrator/plan.hpp"
#include "orchestrator/unit_executor.hpp"
#include "storage/store.hpp"
#include "workers/runtime.hpp"

namespace linsweep {
namespace {

// Set by the signal handler; a signal handler can only talk through a sig_atomic_t.
volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }

// Installs the handlers for the run and restores the previous ones afterwards.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    prev_int_ = std::signal(SIGINT, on_stop_signal);
    prev_term_ = std::signal(SIGTERM, on_stop_signal);
    prev_usr1_ = std::signal(SIGUSR1, on_stop_signal);
  }
  ~StopSignals() {
    std::signal(SIGINT, prev_int_);
    std::signal(SIGTERM, prev_term_);
    std::signal(SIGUSR1, prev_usr1_);
  }

 private:
  void (*prev_int_)(int), (*prev_term_)(int), (*prev_usr1_)(int);
};

}  // namespace

int run_sweep(const std::string& spec_path, const RunOptions& options) {
  const SweepSpec spec = load_spec(spec_path, options.store_override);
  const Plan plan = make_plan(spec);
  Store store = Store::open_write(spec.store, spec.text);
  if (auto stale = store.recovered_stale_lock(); stale && !options.quiet)
    std::fprintf(stderr, "run: recovered a stale lock (%s)\n", stale->c_str());
  configure_threads(options.threads > 0 ? options.threads : static_cast<int>(spec.runtime.threads));
  for (const auto& e : plan.not_planned)
    if (!options.quiet) std::fprintf(stderr, "run: experiment '%s' has no units in this build yet; skipped\n", e.c_str());

  StopSignals signals;
  const auto status = plan_status(plan, &store);
  std::set<std::string> failed;
  UnitExecutor executor(spec);
  std::size_t done = 0, ran = 0, index = 0;
  for (const auto& p : status) {
    ++index;
    const Unit& u = *p.unit;
    if (p.state == UnitState::kDone) {
      ++done;
      continue;
    }
    if (g_stop_signal != 0) break;
    bool blocked = false;
    for (const auto& d : u.deps) blocked = blocked || failed.count(d) > 0;
    if (blocked) {
      failed.insert(u.id);
      if (!options.quiet) std::fprintf(stderr, "[%zu/%zu] %s %s/%s skipped: a dependency failed\n", index, status.size(),
                                       u.kind.c_str(), u.model.c_str(), u.corpus.c_str());
      continue;
    }
    bool committed = false;
    for (std::int64_t attempt = 0; attempt <= spec.runtime.retries && !committed; ++attempt) {
      JournalEvent started;
      started.event = "started";
      started.unit = u.id;
      store.journal(started);
      const auto t0 = std::chrono::steady_clock::now();
      try {
        const UnitResult result = executor.run(u, store, nullptr);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        store.commit(result, seconds);
        committed = true;
        ++ran;
        if (!options.quiet)
          std::fprintf(stderr, "[%zu/%zu] %s %s/%s committed in %.2f s\n", index, status.size(), u.kind.c_str(),
                       u.model.c_str(), u.corpus.c_str(), seconds);
      } catch (const std::exception& e) {
        JournalEvent f;
        f.event = "failed";
        f.unit = u.id;
        f.error = e.what();
        f.duration = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        store.journal(f);
        if (!options.quiet)
          std::fprintf(stderr, "[%zu/%zu] %s %s/%s failed (attempt %lld of %lld): %s\n", index, status.size(), u.kind.c_str(),
                       u.model.c_str(), u.corpus.c_str(), static_cast<long long>(attempt + 1),
                       static_cast<long long>(spec.runtime.retries + 1), e.what());
      }
    }
    if (!committed) failed.insert(u.id);
  }
  store.rebuild_consolidated();
  const bool interrupted = g_stop_signal != 0;
  if (!options.quiet)
    std::fprintf(stderr, "run: %zu units: %zu already done, %zu run now, %zu failed%s; store %s\n", status.size(), done, ran,
                 failed.size(), interrupted ? ", interrupted" : "", spec.store.c_str());
  if (interrupted) return static_cast<int>(ExitCode::kInterrupted);
  return failed.empty() ? 0 : static_cast<int>(ExitCode::kUnitsFailed);
}

}  // namespace linsweep
