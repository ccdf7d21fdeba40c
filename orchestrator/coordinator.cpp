// MPI coordinator and worker loops.
#include "orchestrator/coordinator.hpp"

#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "common/errors.hpp"
#include "orchestrator/plan.hpp"
#include "orchestrator/progress.hpp"
#include "orchestrator/unit_executor.hpp"
#include "storage/store.hpp"
#include "workers/comm/communicator.hpp"
#include "workers/comm/mpi_check.hpp"
#include "workers/runtime.hpp"

namespace linsweep {
namespace {

constexpr int kTagReport = 11;  // group leader -> rank 0: ready, with the last unit's outcome
constexpr int kTagAssign = 12;  // rank 0 -> group leader: {"index": i} or {"stop": true, "code": c}

volatile std::sig_atomic_t g_signal = 0;  // written by the handler only
extern "C" void on_signal(int sig) { g_signal = sig; }

// Ends the whole job for an error that escapes a rank once the plan is shared. Returning would
// leave the other ranks waiting for this one forever (rank 0 for a report, a worker for its
// assignment or an all-reduce, everyone in MPI_Finalize's fence), since nothing else tells them.
// Committed units stay; a rerun resumes.
[[noreturn]] void abort_job(int rank, const std::exception& e) {
  const auto* error = dynamic_cast<const Error*>(&e);
  const int code = error != nullptr ? static_cast<int>(error->exit_code()) : static_cast<int>(ExitCode::kUnitsFailed);
  std::string message = user_message(e);
  message = message.substr(0, message.find('\n'));
  std::fprintf(stderr, "linsweep: rank %d: %s; aborting the job (committed units are kept; rerun to resume)\n", rank,
               message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // MPI_Abort does not return
}

void send_json(const nlohmann::json& j, int dest, int tag) {
  const std::string s = j.dump();
  MPI_CHECK(MPI_Send(s.data(), static_cast<int>(s.size()), MPI_CHAR, dest, tag, MPI_COMM_WORLD));
}

// Receives one JSON message with `tag` from any rank. Polls MPI_Iprobe back to back for the
// first 200 us (a reply to a message just sent usually arrives within that), then with
// sleeps that grow from 20 us to 1 ms, and to 10 ms once the wait passes a second: short
// exchanges stay fast and a rank that waits long costs ~100 wakeups/s, never a busy core (a
// blocking MPI_Recv spins in OpenMPI). Returns false when `give_up` says so.
bool recv_json(int tag, nlohmann::json* out, int* from, const std::function<bool()>& give_up) {
  const auto t0 = std::chrono::steady_clock::now();
  auto sleep = std::chrono::microseconds(20);
  for (;;) {
    int flag = 0;
    MPI_Status st;
    MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &st));
    if (flag) {
      int n = 0;
      MPI_CHECK(MPI_Get_count(&st, MPI_CHAR, &n));
      std::string s(static_cast<std::size_t>(n), '\0');
      MPI_CHECK(MPI_Recv(s.data(), n, MPI_CHAR, st.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      *out = nlohmann::json::parse(s);
      *from = st.MPI_SOURCE;
      return true;
    }
    if (give_up && give_up()) return false;
    const auto waited = std::chrono::steady_clock::now() - t0;
    if (waited < std::chrono::microseconds(200)) continue;
    std::this_thread::sleep_for(sleep);
    const bool long_wait = waited > std::chrono::seconds(1);
    sleep = std::min(sleep * 2, std::chrono::microseconds(long_wait ? 10000 : 1000));
  }
}

void bcast_string(std::string* s) {
  long long n = static_cast<long long>(s->size());
  MPI_CHECK(MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
  s->resize(static_cast<std::size_t>(n));
  MPI_CHECK(MPI_Bcast(s->data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD));
}

// Rank 0's loop: hands ready units to idle groups, commits what they report, retries
// failures, and stops dispatching on a signal.
class Coordinator {
 public:
  // `status`: plan_status(plan, &store), computed before the store was written to.
  Coordinator(const SweepSpec& spec, const Plan& plan, std::vector<PlannedUnit> status, Store& store, int groups, int rpg,
              const RunOptions& options)
      : spec_(spec), plan_(plan), status_(std::move(status)), store_(store), groups_(groups), rpg_(rpg), options_(options) {}

  int run() {
    deadline_guard_ = std::make_unique<DeadlineGuard>(store_, plan_);
    const auto& status = status_;
    for (std::size_t i = 0; i < status.size(); ++i) {
      if (status[i].state == UnitState::kDone) done_.insert(plan_.units[i].id);
      else pending_.push_back(i);
    }
    const std::size_t total = plan_.units.size(), already = done_.size();
    progress_ = std::make_unique<Progress>(total, already, progress_options(options_));
    while (true) {
      if (running_.empty() && (g_signal != 0 || out_of_time_ || pending_.empty() || !disk_full_.empty())) break;
      if (running_.empty() && idle_.size() == static_cast<std::size_t>(groups_) && !pending_.empty()) {
        for (std::size_t i : pending_) failed_.insert(plan_.units[i].id);  // only units behind failures remain
        pending_.clear();
        break;
      }
      if (g_signal != 0 && deadline_ == std::chrono::steady_clock::time_point{}) {
        deadline_ = std::chrono::steady_clock::now() + std::chrono::seconds(spec_.runtime.grace_seconds);
        progress_->note("run: signal " + std::to_string(static_cast<int>(g_signal)) + ": no new units; " +
                            std::to_string(running_.size()) + " running get " + std::to_string(spec_.runtime.grace_seconds) + " s",
                        true);
      }
      nlohmann::json msg;
      int from = 0;
      const bool got = recv_json(kTagReport, &msg, &from, [&] {
        progress_->tick();
        return deadline_ != std::chrono::steady_clock::time_point{} && std::chrono::steady_clock::now() > deadline_;
      });
      if (!got) abort_after_grace();
      on_report(msg, from);
      // A commit may have made units runnable for groups that were waiting.
      for (auto it = idle_.begin(); it != idle_.end() && g_signal == 0 && !out_of_time_ && disk_full_.empty();) {
        const int w = *it;
        it = idle_.erase(it);
        dispatch(w);
        if (running_.count(w) == 0) break;  // back in idle_: nothing runnable now
      }
    }
    const bool interrupted = (g_signal != 0 || out_of_time_) && !pending_.empty() && disk_full_.empty();
    // A unit left out by --units because its dependency is missing did not run: not a success.
    int code = interrupted ? static_cast<int>(ExitCode::kInterrupted)
                           : (failed_.empty() && plan_.not_planned.empty() && disk_full_.empty() ? 0 : static_cast<int>(ExitCode::kUnitsFailed));
    for (int g = 0; g < groups_; ++g) send_json({{"stop", true}, {"code", code}}, leader(g), kTagAssign);
    // On a full disk store.h5 is left as it was (a rebuild needs room for a second copy); the
    // workers are stopping already, so an error here is reported, not thrown (no abort).
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
      std::fprintf(stderr, "run: %zu units: %zu already done, %zu run now, %zu failed%s; store %s\n", total, already,
                   done_.size() - already, failed_.size(), interrupted ? ", interrupted" : "", spec_.store.c_str());
    if (!error.empty()) std::fprintf(stderr, "linsweep: %s\n", error.c_str());
    return code;
  }

 private:
  int leader(int g) const { return 1 + g * rpg_; }

  void on_report(const nlohmann::json& msg, int from) {
    const int g = msg.at("group").get<int>();
    if (!msg.contains("index")) {  // a group's first report: ready
      dispatch(g);
      return;
    }
    const std::size_t i = msg["index"].get<std::size_t>();
    const Unit& u = plan_.units[i];
    running_.erase(g);
    const double seconds = msg.value("duration", 0.0);
    const std::string where = msg.value("host", std::string("?")) + " rank " + std::to_string(from);
    if (msg.value("interrupted", false) || msg.value("disk_full", false)) {
      // Stopped on request with a checkpoint, or the disk is full: back to pending (resumable),
      // not a failure, and no retry while the disk stays full.
      const std::string error = msg.value("error", std::string());
      if (msg.value("disk_full", false)) note_disk_full(error);
      write_or_note([&] {
        store_.journal({.event = msg.value("disk_full", false) ? "failed" : "interrupted", .unit = u.id, .rank = from, .error = error});
        log_unit(store_, *progress_, u, (msg.value("disk_full", false) ? "disk full on " : "interrupted on ") + where + ": " + error);
      });
      pending_.push_front(i);
      idle_.insert(g);
      return;
    }
    if (!msg.value("ok", false)) {
      record_failure(i, msg.value("error", std::string("unknown error")), seconds, from, where);
      dispatch(g);
      return;
    }
    deadline_guard_->record(u.kind, seconds);
    dispatch(g);  // the group computes its next unit while this one is committed
    try {
      store_.commit_staged(msg.at("staged").get<std::string>(), u.id, seconds, from, u.tokens());
    } catch (const DiskFullError& e) {
      note_disk_full(e.what());
      // The rename may have happened before the directory's fsync or the journal line failed:
      // then the unit is committed (unit files decide), otherwise it stays pending.
      if (!store_.is_committed(u.id)) {
        pending_.push_front(i);
        return;
      }
    } catch (const std::exception& e) {
      record_failure(i, std::string("commit failed: ") + e.what(), seconds, from, where);
      return;
    }
    done_.insert(u.id);
    write_or_note([&] { log_unit(store_, *progress_, u, committed_log(u, seconds, " on " + where, msg.value("peak_rss_mib", 0.0))); });
    progress_->finished(true, u.tokens(),
                        committed_line(u, progress_->done() + 1, plan_.units.size(), seconds) + " (group " + std::to_string(g) + ")");
  }

  void record_failure(std::size_t i, const std::string& error, double seconds, int rank, const std::string& where) {
    const Unit& u = plan_.units[i];
    const std::int64_t attempt = ++attempts_[i];
    write_or_note([&] {
      store_.journal({.event = "failed", .unit = u.id, .rank = rank, .duration = seconds, .error = error});
      log_unit(store_, *progress_, u, "attempt " + std::to_string(attempt) + " failed on " + where + ": " + error);
    });
    if (attempt <= spec_.runtime.retries) {
      pending_.push_front(i);
    } else {
      failed_.insert(u.id);
      fail_dependents();
    }
    progress_->finished(false, 0, failed_line(u, attempt, spec_.runtime.retries + 1, error));
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
      failed_.insert(plan_.units[*it].id);
      write_or_note([&] { skip_unit(store_, *progress_, plan_.units[*it]); });
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
    if (g_signal == 0 && !out_of_time_ && disk_full_.empty()) {
      if (auto i = next_for(g)) {
        const Unit& u = plan_.units[*i];
        if (!deadline_guard_->fits(u.kind)) {
          pending_.push_front(*i);
          out_of_time_ = true;
          progress_->note("run: " + u.label() + " would not finish before the job's time limit; no new units (resumable)", true);
          idle_.insert(g);
          return;
        }
        const bool written = write_or_note([&] {
          store_.journal({.event = "started", .unit = u.id, .rank = leader(g)});
          log_unit(store_, *progress_, u, "attempt " + std::to_string(attempts_[*i] + 1) + " assigned to group " + std::to_string(g) +
                                              " (rank " + std::to_string(leader(g)) + ", " + std::to_string(rpg_) + " ranks)");
        });
        if (!written) {  // the disk is full: nothing new starts
          pending_.push_front(*i);
          idle_.insert(g);
          return;
        }
        running_[g] = *i;
        held_[g] = u.model;
        send_json({{"index", *i}}, leader(g), kTagAssign);
        progress_->started();
        return;
      }
    }
    idle_.insert(g);
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
    progress_->note("run: the store's disk is full: no new units; waiting for the " + std::to_string(running_.size()) + " running", false);
  }

  // The grace period ran out with units still running: they are journaled as interrupted
  // and the job is aborted (workers cannot be stopped mid-collective); rerunning resumes.
  [[noreturn]] void abort_after_grace() {
    for (const auto& [g, i] : running_) {
      store_.journal({.event = "interrupted", .unit = plan_.units[i].id});
      log_unit(store_, *progress_, plan_.units[i], "interrupted: the grace period ended while it ran");
    }
    progress_->note("run: grace period over with " + std::to_string(running_.size()) + " units running; aborting them (resumable)", true);
    progress_.reset();
    store_.rebuild_consolidated();
    MPI_Abort(MPI_COMM_WORLD, static_cast<int>(ExitCode::kInterrupted));
    std::abort();  // MPI_Abort does not return
  }

  const SweepSpec& spec_;
  const Plan& plan_;
  const std::vector<PlannedUnit> status_;  // the plan's units as the store had them at the start
  Store& store_;
  const int groups_, rpg_;
  const RunOptions& options_;
  std::unique_ptr<Progress> progress_;
  std::deque<std::size_t> pending_;           // plan indices, in plan order (retries at the front)
  std::set<std::string> done_, failed_;       // unit ids
  std::map<int, std::size_t> running_;        // group -> unit index
  std::map<int, std::string> held_;           // group -> model it last ran
  std::map<std::size_t, std::int64_t> attempts_;
  std::set<int> idle_;                        // groups waiting for a runnable unit
  std::chrono::steady_clock::time_point deadline_{};
  std::unique_ptr<DeadlineGuard> deadline_guard_;  // the Slurm time limit (LINSWEEP_DEADLINE)
  bool out_of_time_ = false;                       // a unit would not finish in time: dispatch stopped
  std::string disk_full_;                          // the first disk-full error: dispatch stopped, exit 1
};

int work(const SweepSpec& spec, const Plan& plan, int rank, int rpg, Communicator& group) {
  const int g = (rank - 1) / rpg;
  const bool is_leader = group.rank() == 0;
  const Store store = Store::open_read(spec.store);
  UnitExecutor executor(spec);
  executor.set_stop_check([] { return g_signal != 0; });
  nlohmann::json report = {{"group", g}};
  char host_buf[256] = {};
  ::gethostname(host_buf, sizeof(host_buf) - 1);
  const std::string host = host_buf;
  for (;;) {
    double index_plus_one = 0;
    int code = 0;
    if (is_leader) {
      send_json(report, 0, kTagReport);
      nlohmann::json assign;
      int from = 0;
      recv_json(kTagAssign, &assign, &from, nullptr);
      if (assign.contains("index")) index_plus_one = assign["index"].get<double>() + 1;
      code = assign.value("code", 0);
    }
    std::vector<double> shared = {index_plus_one, static_cast<double>(code)};  // the leader's values reach the group
    group.allreduce_sum(shared);
    if (shared[0] == 0) return static_cast<int>(shared[1]);
    const std::size_t i = static_cast<std::size_t>(shared[0]) - 1;
    const Unit& u = plan.units[i];
    const auto t0 = std::chrono::steady_clock::now();
    report = {{"group", g}, {"index", i}};
    bool ran = false;  // the unit's collectives are over
    try {
      const UnitResult r = executor.run(u, store, rpg > 1 ? &group : nullptr);
      ran = true;
      if (is_leader) {
        report["staged"] = store.stage(r, rank);
      }
      report["ok"] = true;
    } catch (const DiskFullError& e) {
      // Staging runs on the leader after the group's collectives: the group goes on and rank 0
      // stops dispatching. Inside a group's run a rank may be mid-collective: abort as below.
      if (rpg > 1 && !ran) abort_job(rank, e);
      report["ok"] = false;
      report["disk_full"] = true;
      report["error"] = e.what();
    } catch (const InterruptedError& e) {
      // Every rank of the group agreed to stop at the same step and saved a checkpoint.
      report["ok"] = false;
      report["interrupted"] = true;
      report["error"] = e.what();
    } catch (const std::exception& e) {
      if (rpg > 1) {
        std::fprintf(stderr, "rank %d: unit %s failed inside a group of %d ranks: %s; aborting the job (resumable)\n", rank,
                     u.id.c_str(), rpg, e.what());
        MPI_Abort(MPI_COMM_WORLD, static_cast<int>(ExitCode::kUnitsFailed));
      }
      report["ok"] = false;
      report["error"] = e.what();
    }
    report["duration"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    report["host"] = host;
    report["peak_rss_mib"] = peak_rss_mib();
  }
}

}  // namespace

int run_sweep_mpi(const std::string& spec_path, const RunOptions& options) {
  int rank = 0, size = 1;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  g_signal = 0;
  for (int sig : {SIGINT, SIGTERM, SIGUSR1}) std::signal(sig, on_signal);  // workers finish their unit; rank 0 decides

  // Rank 0 plans; everyone learns the outcome (a bad spec ends every rank with exit 2).
  std::string payload;
  std::unique_ptr<Store> store;
  std::unique_ptr<SweepSpec> spec;
  Plan plan;
  std::vector<PlannedUnit> status;
  if (rank == 0) {
    try {
      spec = std::make_unique<SweepSpec>(load_spec(spec_path, options.store_override));
      if ((size - 1) % spec->runtime.ranks_per_group != 0)
        throw SpecError(spec_path + ": runtime.ranks_per_group " + std::to_string(spec->runtime.ranks_per_group) +
                        " does not divide the " + std::to_string(size - 1) + " worker ranks");
      plan = make_plan(*spec);
      const std::set<std::string> wanted = options.units_file.empty() ? std::set<std::string>{}
                                                                       : read_units_file(options.units_file, plan);
      store = std::make_unique<Store>(Store::open_write(spec->store, spec->text, !options.units_file.empty()));
      if (!options.units_file.empty()) restrict_plan(wanted, store->committed_units(), &plan);
      // A corrupt store (unit file, journal) is refused here, on every rank with exit 2, before
      // run.json is written; the coordinator reuses this status.
      status = plan_status(plan, store.get());
      for (const auto& e : plan.not_planned) std::fprintf(stderr, "run: skipped %s\n", e.c_str());
      record_run(*store, spec_path, options);
      payload = nlohmann::json({{"ok", true}, {"plan", plan_to_json(plan)}}).dump();
    } catch (const Error& e) {
      payload = nlohmann::json({{"ok", false}, {"error", user_message(e)}, {"code", static_cast<int>(e.exit_code())}}).dump();
    } catch (const std::exception& e) {  // every rank waits in the broadcast below: never skip it
      payload = nlohmann::json({{"ok", false}, {"error", std::string("internal error: ") + e.what()},
                                {"code", static_cast<int>(ExitCode::kUnitsFailed)}})
                    .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
  }
  bcast_string(&payload);
  const nlohmann::json head = nlohmann::json::parse(payload);
  if (!head["ok"].get<bool>()) {
    if (rank == 0) std::fprintf(stderr, "linsweep: %s\n", head["error"].get<std::string>().c_str());
    return head["code"].get<int>();
  }
  try {
    if (rank != 0) {
      spec = std::make_unique<SweepSpec>(load_spec(spec_path, options.store_override));
      plan = plan_from_json(head["plan"]);
    }
    const int rpg = static_cast<int>(spec->runtime.ranks_per_group);
    configure_threads(options.threads > 0 ? options.threads : static_cast<int>(spec->runtime.threads));
    // NCCL for groups of several ranks when GPUs are visible and the spec does not pin the CPU;
    // the coordinator and one-rank groups never all-reduce, so they take no GPU context.
    const bool nccl_ok = rank != 0 && rpg > 1 && spec->runtime.device != "cpu";
    auto group = make_group_communicator(rank == 0 ? (1 << 20) : (rank - 1) / rpg, nccl_ok ? "auto" : "mpi");
    if (rank == 0) return Coordinator(*spec, plan, std::move(status), *store, (size - 1) / rpg, rpg, options).run();
    return work(*spec, plan, rank, rpg, *group);
  } catch (const std::exception& e) {
    abort_job(rank, e);
  }
}

}  // namespace linsweep
