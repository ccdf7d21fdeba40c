// The run loop: dispatch, commit, retry, stop; the same for one process and for MPI.
#include "orchestrator/run/run_loop.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "common/errors.hpp"
#include "common/shell_word.hpp"
#include "common/signal_recorder.hpp"
#include "orchestrator/run/deadline_guard.hpp"
#include "orchestrator/run/progress.hpp"
#include "slurm/batch_script.hpp"
#include "storage/store.hpp"

namespace linsweep {
namespace {

using Clock = std::chrono::steady_clock;

// "[5/18] stats m/c committed in 1.23 s"
std::string committed_line(const Unit& unit, std::size_t done, std::size_t total, double seconds) {
  char s[48];
  std::snprintf(s, sizeof(s), " committed in %.2f s", seconds);
  return "[" + std::to_string(done) + "/" + std::to_string(total) + "] " + unit.label() + s;
}

// "committed after 1.23 s on n1 rank 2, 4 threads, 512 tokens, peak RSS 310 MiB" for the log.
std::string committed_log(const Unit& unit, double seconds, const std::string& where, double peak_rss) {
  char s[96];
  std::snprintf(s, sizeof(s), ", %lld tokens, peak RSS %.0f MiB", static_cast<long long>(unit.tokens()), peak_rss);
  char t[48];
  std::snprintf(t, sizeof(t), "committed after %.2f s", seconds);
  return t + where + s;
}

// "fit m/c (fit-…) failed, attempt 2 of 3: <error>"
std::string failed_line(const Unit& unit, std::int64_t attempt, std::int64_t attempts, const std::string& error) {
  return unit.label() + " (" + unit.id + ") failed, attempt " + std::to_string(attempt) + " of " +
         std::to_string(attempts) + ": " + error;
}

// " on n1 rank 2, 4 threads"
std::string where_ran(const UnitReport& r) {
  const std::string threads =
      r.threads > 0 ? ", " + std::to_string(r.threads) + (r.threads == 1 ? " thread" : " threads") : "";
  return " on " + r.host + " rank " + std::to_string(r.rank) + threads;
}

ProgressOptions progress_options(const RunOptions& options) {
  ProgressOptions p;
  p.quiet = options.quiet;
  p.live = stderr_is_terminal();
  return p;
}

int signal_received() { return SignalRecorder::received(); }

class Dispatcher {
 public:
  Dispatcher(const SweepSpec& spec, const Plan& plan, const std::vector<PlannedUnit>& status, Store& store,
             WorkerPool& pool, const RunOptions& options)
      : spec_(spec), plan_(plan), store_(store), pool_(pool), options_(options), deadline_guard_(store, plan) {
    for (std::size_t i = 0; i < status.size(); ++i) {
      if (status[i].state == UnitState::kDone)
        done_.insert(plan_.units[i].id);
      else
        pending_.push_back(i);
    }
    already_ = done_.size();
    progress_ = std::make_unique<Progress>(plan_.units.size(), already_, progress_options(options_));
  }

  int run() {
    while (!finished()) {
      start_grace_on_signal();
      std::optional<PoolEvent> event = pool_.next([&] {
        start_grace_on_signal();  // at once, not after the running unit: the signal's note comes now
        progress_->tick();
        return grace_end_ != Clock::time_point{} && Clock::now() > grace_end_;
      });
      if (!event) abort_after_grace();
      on_event(*event);
      // A commit may have made units runnable for groups that were waiting.
      for (auto it = idle_.begin(); it != idle_.end() && may_dispatch();) {
        const int g = *it;
        it = idle_.erase(it);
        dispatch(g);
        if (running_.count(g) == 0) break;  // back in idle_: nothing runnable now
      }
    }
    return finish();
  }

 private:
  bool may_dispatch() const { return signal_received() == 0 && !out_of_time_ && disk_full_.empty(); }

  bool finished() {
    if (running_.empty() && (!may_dispatch() || pending_.empty())) return true;
    if (running_.empty() && idle_.size() == static_cast<std::size_t>(pool_.groups()) && !pending_.empty()) {
      for (std::size_t i : pending_) failed_.insert(plan_.units[i].id);  // only units behind failures remain
      pending_.clear();
      return true;
    }
    return false;
  }

  void start_grace_on_signal() {
    if (signal_received() == 0 || grace_end_ != Clock::time_point{}) return;
    grace_end_ = Clock::now() + std::chrono::seconds(spec_.runtime.grace_seconds);
    const std::string grace = std::to_string(spec_.runtime.grace_seconds) + " s";
    if (signal_received() == SIGINT) {  // a person at a terminal: what happens now, and the way out
      const std::string units =
          running_.size() == 1 ? "the running unit" : "the " + std::to_string(running_.size()) + " running units";
      progress_->note(running_.empty()
                          ? "run: stopping (no unit is running)"
                          : "run: stopping after " + units + "… (up to " + grace + "; Ctrl-C again to abort)",
                      true);
      return;
    }
    progress_->note("run: signal " + std::to_string(signal_received()) + ": no new units; " +
                        std::to_string(running_.size()) + " running get " + grace,
                    true);
  }

  int finish() {
    const bool interrupted = (signal_received() != 0 || out_of_time_) && !pending_.empty() && disk_full_.empty();
    // A unit left out by --units because its dependency is missing did not run: not a success.
    const bool success = failed_.empty() && plan_.not_planned.empty() && disk_full_.empty();
    int code = interrupted ? static_cast<int>(ExitCode::kInterrupted)
                           : (success ? 0 : static_cast<int>(ExitCode::kUnitsFailed));
    pool_.stop(code);
    // On a full disk store.h5 is left as it was (a rebuild needs room for a second copy); the
    // groups are stopping already, so an error here is reported, not thrown.
    std::string error = disk_full_;
    if (error.empty()) {
      try {
        store_.rebuild_consolidated();
      } catch (const Error& e) {
        error = user_message(e);
        code = static_cast<int>(e.exit_code());
      }
    }
    progress_.reset();
    if (!options_.quiet)
      std::fprintf(stderr, "run: %zu units: %zu already done, %zu run now, %zu failed%s; store %s\n",
                   plan_.units.size(), already_, done_.size() - already_, failed_.size(),
                   interrupted ? ", interrupted" : "", spec_.store.c_str());
    if (!error.empty()) std::fprintf(stderr, "linsweep: %s\n", error.c_str());
    if (interrupted) std::fprintf(stderr, "run: to continue: linsweep resume %s\n", shell_word(spec_.store).c_str());
    return code;
  }

  void on_event(const PoolEvent& event) {
    const int g = event.group;
    hosts_[g] = event.host;  // journaled as where the group's units run
    if (!event.report) {     // a group's first message: ready
      dispatch(g);
      return;
    }
    const UnitReport& r = *event.report;
    const Unit& u = plan_.units[r.index];
    running_.erase(g);
    if (r.interrupted || r.disk_full) {
      // Stopped on request with a checkpoint, or the disk is full: back to pending
      // (resumable), not a failure, and no retry while the disk stays full.
      if (r.disk_full) note_disk_full(r.error);
      write_or_note([&] {
        store_.journal({.event = r.disk_full ? "failed" : "interrupted",
                        .unit = u.id,
                        .host = r.host,
                        .rank = r.rank,
                        .error = r.error});
        log_unit(u, (r.disk_full ? "disk full" : "interrupted") + where_ran(r) + ": " + r.error);
      });
      pending_.push_front(r.index);
      idle_.insert(g);
      return;
    }
    if (!r.ok) {
      record_failure(r.index, r.error, r);
      dispatch(g);
      return;
    }
    deadline_guard_.record(u.kind, r.duration);
    dispatch(g);  // the group computes its next unit while this one is committed
    commit(g, r);
  }

  void commit(int g, const UnitReport& r) {
    const Unit& u = plan_.units[r.index];
    try {
      store_.commit_staged(r.staged, u.id, r.duration, r.rank, u.tokens(), r.host);
    } catch (const DiskFullError& e) {
      note_disk_full(e.what());
      // The rename may have happened before the directory's fsync or the journal line failed:
      // then the unit is committed (unit files decide), otherwise it stays pending.
      if (!store_.is_committed(u.id)) {
        pending_.push_front(r.index);
        return;
      }
    } catch (const std::exception& e) {
      record_failure(r.index, std::string("commit failed: ") + e.what(), r);
      return;
    }
    done_.insert(u.id);
    write_or_note([&] { log_unit(u, committed_log(u, r.duration, where_ran(r), r.peak_rss_mib)); });
    const std::string group = pool_.groups() > 1 ? " (group " + std::to_string(g) + ")" : "";
    progress_->finished(true, u.tokens(),
                        committed_line(u, progress_->done() + 1, plan_.units.size(), r.duration) + group);
  }

  void record_failure(std::size_t i, const std::string& error, const UnitReport& r) {
    const Unit& u = plan_.units[i];
    const std::int64_t attempt = ++attempts_[i];
    write_or_note([&] {
      store_.journal(
          {.event = "failed", .unit = u.id, .host = r.host, .rank = r.rank, .duration = r.duration, .error = error});
      log_unit(u, "attempt " + std::to_string(attempt) + " failed" + where_ran(r) + ": " + error);
    });
    // Bad input (a split past the corpus end, a broken file) fails the same way every time.
    const std::int64_t attempts = r.bad_input ? attempt : spec_.runtime.retries + 1;
    if (attempt < attempts) {
      pending_.push_front(i);
    } else {
      failed_.insert(u.id);
      fail_dependents();
    }
    progress_->finished(false, 0, failed_line(u, attempt, attempts, error));
  }

  // Units that depend on a failed unit fail too (transitively: the plan is in dependency order).
  void fail_dependents() {
    for (auto it = pending_.begin(); it != pending_.end();) {
      bool blocked = false;
      for (const auto& d : plan_.units[*it].deps) blocked = blocked || failed_.count(d) > 0;
      if (!blocked) {
        ++it;
        continue;
      }
      const Unit& u = plan_.units[*it];
      failed_.insert(u.id);
      write_or_note([&] { log_unit(u, "skipped: a dependency failed"); });
      progress_->note(u.label() + " (" + u.id + ") skipped: a dependency failed", true);
      it = pending_.erase(it);
    }
  }

  // The next runnable unit for group g: dependencies committed, the group's model first.
  std::optional<std::size_t> next_for(int g) {
    std::optional<std::deque<std::size_t>::iterator> pick;
    const auto held = held_.find(g);
    for (auto it = pending_.begin(); it != pending_.end(); ++it) {
      bool ready = true;
      for (const auto& d : plan_.units[*it].deps) ready = ready && done_.count(d) > 0;
      if (!ready) continue;
      if (!pick) pick = it;
      if (held == held_.end() || plan_.units[*it].model == held->second) {
        pick = it;
        break;
      }
    }
    if (!pick) return std::nullopt;
    const std::size_t i = **pick;
    pending_.erase(*pick);
    return i;
  }

  void dispatch(int g) {
    const std::optional<std::size_t> i = may_dispatch() ? next_for(g) : std::nullopt;
    if (!i) {
      idle_.insert(g);
      return;
    }
    const Unit& u = plan_.units[*i];
    if (!deadline_guard_.fits(u.kind)) {
      pending_.push_front(*i);
      out_of_time_ = true;
      progress_->note("run: " + u.label() + " would not finish before the job's time limit; no new units (resumable)",
                      true);
      idle_.insert(g);
      return;
    }
    const int leader = pool_.leader_rank(g);
    const bool written = write_or_note([&] {
      store_.journal({.event = "started", .unit = u.id, .host = hosts_[g], .rank = leader});
      log_unit(u, "attempt " + std::to_string(attempts_[*i] + 1) + " assigned to group " + std::to_string(g) +
                      " (rank " + std::to_string(leader) + ", " + std::to_string(pool_.ranks_per_group()) +
                      (pool_.ranks_per_group() == 1 ? " rank)" : " ranks)"));
    });
    if (!written) {  // the disk is full: nothing new starts
      pending_.push_front(*i);
      idle_.insert(g);
      return;
    }
    running_[g] = *i;
    held_[g] = u.model;
    pool_.assign(g, *i);
    progress_->started();
  }

  // Appends to the unit's log; a log that cannot be written is reported, never fatal (it is a
  // diagnostic), unless the disk is full: DiskFullError reaches write_or_note.
  void log_unit(const Unit& unit, const std::string& line) {
    try {
      store_.append_unit_log(unit.id, line);
    } catch (const DiskFullError&) {
      throw;
    } catch (const StorageError& e) {
      progress_->note(std::string("run: ") + e.what(), true);
    }
  }

  // Runs `write` (journal lines, unit logs); a full disk is recorded instead of thrown, which
  // stops the dispatch. Returns false when the disk was full.
  bool write_or_note(const std::function<void()>& write) {
    try {
      write();
      return true;
    } catch (const DiskFullError& e) {
      note_disk_full(e.what());
      return false;
    }
  }

  void note_disk_full(const std::string& error) {
    if (!disk_full_.empty()) return;
    disk_full_ = disk_full_message(error);
    progress_->note(
        "run: the store's disk is full: no new units; waiting for the " + std::to_string(running_.size()) + " running",
        false);
  }

  // The grace period ran out with units still running: they are journaled as interrupted and
  // the pool ends them (workers cannot be stopped mid-collective); rerunning resumes.
  [[noreturn]] void abort_after_grace() {
    for (const auto& [g, i] : running_) {
      write_or_note([&] {
        store_.journal({.event = "interrupted", .unit = plan_.units[i].id});
        log_unit(plan_.units[i], "interrupted: the grace period ended while it ran");
      });
    }
    progress_->note(
        "run: grace period over with " + std::to_string(running_.size()) + " units running; aborting them (resumable)",
        true);
    progress_.reset();
    if (disk_full_.empty()) store_.rebuild_consolidated();
    pool_.abort(static_cast<int>(ExitCode::kInterrupted));
    std::abort();  // WorkerPool::abort does not return (GCC does not see that through the vtable)
  }

  const SweepSpec& spec_;
  const Plan& plan_;
  Store& store_;
  WorkerPool& pool_;
  const RunOptions& options_;
  DeadlineGuard deadline_guard_;  // the Slurm time limit (LINSWEEP_DEADLINE)
  std::unique_ptr<Progress> progress_;
  std::size_t already_ = 0;              // units committed before this run
  std::deque<std::size_t> pending_;      // plan indices, in plan order (retries at the front)
  std::set<std::string> done_, failed_;  // unit ids
  std::map<int, std::size_t> running_;   // group -> unit index
  std::map<int, std::string> held_;      // group -> model it last ran
  std::map<int, std::string> hosts_;     // group -> its leader's host
  std::map<std::size_t, std::int64_t> attempts_;
  std::set<int> idle_;             // groups waiting for a runnable unit
  Clock::time_point grace_end_{};  // set when a signal arrives
  bool out_of_time_ = false;       // a unit would not finish in time: dispatch stopped
  std::string disk_full_;          // the first disk-full error: dispatch stopped, exit 1
};

}  // namespace

int run_loop(const SweepSpec& spec, const Plan& plan, const std::vector<PlannedUnit>& status, Store& store,
             WorkerPool& pool, const RunOptions& options) {
  return Dispatcher(spec, plan, status, store, pool, options).run();
}

std::string disk_full_message(const std::string& error) {
  return error + " (disk full: free space, then rerun or `linsweep resume STORE`; committed units are kept)";
}

std::string user_message(const std::exception& e) {
  return dynamic_cast<const DiskFullError*>(&e) != nullptr ? disk_full_message(e.what()) : std::string(e.what());
}

}  // namespace linsweep
