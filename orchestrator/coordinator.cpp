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

void send_json(const nlohmann::json& j, int dest, int tag) {
  const std::string s = j.dump();
  MPI_CHECK(MPI_Send(s.data(), static_cast<int>(s.size()), MPI_CHAR, dest, tag, MPI_COMM_WORLD));
}

// Receives one JSON message with `tag` from any rank, polling with growing sleeps (up to
// 20 ms) so that a waiting rank does not burn a core. Returns false when `give_up` says so.
bool recv_json(int tag, nlohmann::json* out, int* from, const std::function<bool()>& give_up) {
  auto sleep = std::chrono::microseconds(50);
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
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, std::chrono::microseconds(20000));
  }
}

void bcast_string(std::string* s) {
  long long n = static_cast<long long>(s->size());
  MPI_CHECK(MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
  s->resize(static_cast<std::size_t>(n));
  MPI_CHECK(MPI_Bcast(s->data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD));
}

int coordinate(const SweepSpec& spec, const Plan& plan, Store& store, int groups, int rpg, const RunOptions& options) {
  const auto status = plan_status(plan, &store);
  std::deque<std::size_t> pending;
  std::set<std::string> done, failed;
  for (std::size_t i = 0; i < status.size(); ++i) {
    if (status[i].state == UnitState::kDone) done.insert(plan.units[i].id);
    else pending.push_back(i);
  }
  const std::size_t total = plan.units.size(), already = done.size();
  std::map<int, std::size_t> running;           // group -> unit index
  std::map<int, std::string> held;              // group -> model it last ran
  std::map<std::size_t, std::int64_t> attempts;
  std::map<std::size_t, std::chrono::steady_clock::time_point> started;
  std::set<int> idle, stopped;
  std::chrono::steady_clock::time_point deadline{};
  auto leader = [rpg](int g) { return 1 + g * rpg; };

  // Pops the next runnable unit for group g: dependencies committed, same model first.
  auto next_for = [&](int g) -> std::optional<std::size_t> {
    for (auto it = pending.begin(); it != pending.end();) {  // dependents of failed units fail
      bool blocked = false;
      for (const auto& d : plan.units[*it].deps) blocked = blocked || failed.count(d);
      if (blocked) {
        failed.insert(plan.units[*it].id);
        if (!options.quiet) std::fprintf(stderr, "%s skipped: a dependency failed\n", plan.units[*it].id.c_str());
        it = pending.erase(it);
      } else {
        ++it;
      }
    }
    std::optional<std::size_t> pick;
    for (auto it = pending.begin(); it != pending.end(); ++it) {
      bool ready = true;
      for (const auto& d : plan.units[*it].deps) ready = ready && done.count(d);
      if (!ready) continue;
      if (!pick) pick = *it;
      if (held.count(g) && plan.units[*it].model == held[g]) {
        pick = *it;
        break;
      }
    }
    if (pick) pending.erase(std::find(pending.begin(), pending.end(), *pick));
    return pick;
  };
  auto dispatch = [&](int g) {
    if (g_signal == 0) {
      if (auto i = next_for(g)) {
        const Unit& u = plan.units[*i];
        JournalEvent e;
        e.event = "started";
        e.unit = u.id;
        e.rank = leader(g);
        store.journal(e);
        running[g] = *i;
        held[g] = u.model;
        started[*i] = std::chrono::steady_clock::now();
        send_json({{"index", *i}}, leader(g), kTagAssign);
        return;
      }
    }
    idle.insert(g);
  };

  while (true) {
    if (running.empty() && (g_signal != 0 || pending.empty())) break;
    if (running.empty() && idle.size() + stopped.size() == static_cast<std::size_t>(groups) && !pending.empty()) {
      // Nothing runs and nothing is runnable: only units behind failures remain.
      for (std::size_t i : pending) failed.insert(plan.units[i].id);
      pending.clear();
      break;
    }
    if (g_signal != 0 && deadline == std::chrono::steady_clock::time_point{}) {
      deadline = std::chrono::steady_clock::now() + std::chrono::seconds(spec.runtime.grace_seconds);
      if (!options.quiet) std::fprintf(stderr, "run: signal %d: no new units; %zu running get %lld s\n", static_cast<int>(g_signal),
                                       running.size(), static_cast<long long>(spec.runtime.grace_seconds));
    }
    nlohmann::json msg;
    int from = 0;
    const bool got = recv_json(kTagReport, &msg, &from, [&] {
      return deadline != std::chrono::steady_clock::time_point{} && std::chrono::steady_clock::now() > deadline;
    });
    if (!got) {
      for (const auto& [g, i] : running) {
        JournalEvent e;
        e.event = "interrupted";
        e.unit = plan.units[i].id;
        store.journal(e);
      }
      std::fprintf(stderr, "run: grace period over with %zu units running; aborting them (resumable)\n", running.size());
      store.rebuild_consolidated();
      MPI_Abort(MPI_COMM_WORLD, static_cast<int>(ExitCode::kInterrupted));
    }
    const int g = msg.at("group").get<int>();
    if (msg.contains("index")) {
      const std::size_t i = msg["index"].get<std::size_t>();
      const Unit& u = plan.units[i];
      running.erase(g);
      const double seconds = msg.value("duration", 0.0);
      bool ok = msg.value("ok", false);
      std::string error = msg.value("error", "");
      if (ok) {
        try {
          store.commit_staged(msg.at("staged").get<std::string>(), u.id, seconds, from);
        } catch (const std::exception& e) {
          ok = false;
          error = std::string("commit failed: ") + e.what();
        }
      }
      if (ok) {
        done.insert(u.id);
        if (!options.quiet)
          std::fprintf(stderr, "[%zu/%zu] %s %s/%s committed in %.2f s (group %d)\n", done.size(), total, u.kind.c_str(),
                       u.model.c_str(), u.corpus.c_str(), seconds, g);
      } else {
        JournalEvent e;
        e.event = "failed";
        e.unit = u.id;
        e.rank = from;
        e.error = error;
        e.duration = seconds;
        store.journal(e);
        if (++attempts[i] <= spec.runtime.retries) {
          pending.push_front(i);
        } else {
          failed.insert(u.id);
        }
        if (!options.quiet) std::fprintf(stderr, "%s failed (attempt %lld): %s\n", u.id.c_str(),
                                         static_cast<long long>(attempts[i]), error.c_str());
      }
    }
    dispatch(g);
    // A completion may have made units runnable for groups that were waiting.
    for (auto it = idle.begin(); it != idle.end();) {
      const int w = *it;
      if (g_signal != 0) break;
      it = idle.erase(it);
      dispatch(w);
      if (running.count(w) == 0) break;  // re-inserted: nothing runnable now
    }
  }
  const bool interrupted = g_signal != 0 && !pending.empty();
  const int code = interrupted ? static_cast<int>(ExitCode::kInterrupted)
                               : (failed.empty() ? 0 : static_cast<int>(ExitCode::kUnitsFailed));
  for (int g = 0; g < groups; ++g) send_json({{"stop", true}, {"code", code}}, leader(g), kTagAssign);
  store.rebuild_consolidated();
  if (!options.quiet)
    std::fprintf(stderr, "run: %zu units: %zu already done, %zu run now, %zu failed%s; store %s\n", total, already,
                 done.size() - already, failed.size(), interrupted ? ", interrupted" : "", spec.store.c_str());
  return code;
}

int work(const SweepSpec& spec, const Plan& plan, int rank, int rpg, Communicator& group) {
  const int g = (rank - 1) / rpg;
  const bool is_leader = group.rank() == 0;
  const Store store = Store::open_read(spec.store);
  UnitExecutor executor(spec);
  nlohmann::json report = {{"group", g}};
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
    try {
      const UnitResult r = executor.run(u, store, rpg > 1 ? &group : nullptr);
      if (is_leader) {
        const std::string staged = store.staging_path(u.id, rank);
        write_unit_file(staged, r);
        report["staged"] = staged;
      }
      report["ok"] = true;
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
  if (rank == 0) {
    try {
      spec = std::make_unique<SweepSpec>(load_spec(spec_path, options.store_override));
      if ((size - 1) % spec->runtime.ranks_per_group != 0)
        throw SpecError(spec_path + ": runtime.ranks_per_group " + std::to_string(spec->runtime.ranks_per_group) +
                        " does not divide the " + std::to_string(size - 1) + " worker ranks");
      plan = make_plan(*spec);
      store = std::make_unique<Store>(Store::open_write(spec->store, spec->text));
      payload = nlohmann::json({{"ok", true}, {"plan", plan_to_json(plan)}}).dump();
    } catch (const Error& e) {
      payload = nlohmann::json({{"ok", false}, {"error", e.what()}, {"code", static_cast<int>(e.exit_code())}}).dump();
    }
  }
  bcast_string(&payload);
  const nlohmann::json head = nlohmann::json::parse(payload);
  if (!head["ok"].get<bool>()) {
    if (rank == 0) std::fprintf(stderr, "linsweep: %s\n", head["error"].get<std::string>().c_str());
    return head["code"].get<int>();
  }
  if (rank != 0) {
    spec = std::make_unique<SweepSpec>(load_spec(spec_path, options.store_override));
    plan = plan_from_json(head["plan"]);
  }
  const int rpg = static_cast<int>(spec->runtime.ranks_per_group);
  configure_threads(options.threads > 0 ? options.threads : static_cast<int>(spec->runtime.threads));
  auto group = make_group_communicator(rank == 0 ? (1 << 20) : (rank - 1) / rpg, "auto");
  if (rank == 0) return coordinate(*spec, plan, *store, (size - 1) / rpg, rpg, options);
  return work(*spec, plan, rank, rpg, *group);
}

}  // namespace linsweep
