// A sweep over MPI ranks: rank 0 runs the run loop over worker groups of the other ranks.
#include "orchestrator/run/mpi_run.hpp"

#include <mpi.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "common/errors.hpp"
#include "common/signal_recorder.hpp"
#include "engine/comm/communicator.hpp"
#include "engine/comm/mpi_check.hpp"
#include "engine/comm/rank_nodes.hpp"
#include "engine/runtime.hpp"
#include "orchestrator/run/group_backend.hpp"
#include "orchestrator/run/mpi_messages.hpp"
#include "orchestrator/run/run_loop.hpp"
#include "orchestrator/run/sweep_setup.hpp"
#include "orchestrator/run/worker_loop.hpp"

namespace linsweep {
namespace {

// Groups g = 0..groups−1 of `rpg` consecutive ranks starting at rank 1.
class MpiPool final : public WorkerPool {
 public:
  MpiPool(int groups, int rpg) : groups_(groups), rpg_(rpg) {}
  int groups() const override { return groups_; }
  int ranks_per_group() const override { return rpg_; }
  int leader_rank(int g) const override { return 1 + g * rpg_; }
  void assign(int g, std::size_t index) override {
    for (int r = 0; r < rpg_; ++r) send_assignment({.index = static_cast<std::int64_t>(index)}, leader_rank(g) + r);
  }
  std::optional<PoolEvent> next(const std::function<bool()>& give_up) override { return recv_event(give_up); }
  void stop(int code) override {
    for (int g = 0; g < groups_; ++g)
      for (int r = 0; r < rpg_; ++r) send_assignment({.index = -1, .code = code}, leader_rank(g) + r);
  }
  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::abort();  // MPI_Abort does not return
  }

 private:
  const int groups_, rpg_;
};

// Refuses a spec whose worker groups do not fit the job's ranks and nodes.
void check_layout(const SweepSpec& spec, const std::string& spec_path, int size, const RankNodes& nodes) {
  const auto rpg = spec.runtime.ranks_per_group;
  if ((size - 1) % rpg != 0)
    throw SpecError(spec_path + ": runtime.ranks_per_group " + std::to_string(rpg) + " does not divide the " +
                    std::to_string(size - 1) + " worker ranks");
  if (const std::string span = group_span_error(nodes, static_cast<int>(rpg));
      !span.empty() && !spec.runtime.groups_span_nodes)
    throw SpecError(spec_path + ": runtime.ranks_per_group " + std::to_string(rpg) + ": " + span +
                    " (ranks are placed by slot, and rank 0, the coordinator, takes one on the first node): use groups "
                    "of one rank across nodes, or set runtime.groups_span_nodes: true to let groups all-reduce across "
                    "nodes");
  if (const std::string why = communicator_unavailable(spec.runtime); !why.empty())
    throw SpecError(spec_path + ": " + why);
}

// Rank 0 sets the sweep up; the outcome (the plan, or the error every rank exits with) is what
// it broadcasts.
std::string setup_payload(const std::string& spec_path, const RunOptions& options, int size, const RankNodes& nodes,
                          std::unique_ptr<SweepSetup>* setup) {
  try {
    *setup = prepare_sweep(spec_path, options,
                           [&](const SweepSpec& spec, std::int64_t) { check_layout(spec, spec_path, size, nodes); });
    return nlohmann::json({{"ok", true}, {"plan", plan_to_json((*setup)->plan)}, {"stages", (*setup)->stages}}).dump();
  } catch (const Error& e) {
    return nlohmann::json({{"ok", false}, {"error", user_message(e)}, {"code", static_cast<int>(e.exit_code())}})
        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const std::exception& e) {  // every rank waits in the broadcast: never skip it
    return nlohmann::json({{"ok", false},
                           {"error", std::string("internal error: ") + e.what()},
                           {"code", static_cast<int>(ExitCode::kUnitsFailed)}})
        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
}

}  // namespace

int run_sweep_mpi(const std::string& spec_path, const RunOptions& options) {
  int rank = 0, size = 1;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  // Workers finish (or checkpoint) their unit; rank 0 decides.
  const SignalRecorder signals({SIGINT, SIGTERM, SIGUSR1});
  // Which node each rank is on (collective): worker groups must not span nodes unless allowed.
  RankNodes nodes;
  try {
    nodes = gather_rank_nodes();
  } catch (const std::exception& e) {
    abort_job(rank, e);
  }
  std::unique_ptr<SweepSetup> setup;
  std::string payload;
  if (rank == 0) payload = setup_payload(spec_path, options, size, nodes, &setup);
  bcast_string(&payload);
  const nlohmann::json head = nlohmann::json::parse(payload);
  if (!head["ok"].get<bool>()) {
    if (rank == 0) std::fprintf(stderr, "linsweep: %s\n", head["error"].get<std::string>().c_str());
    return head["code"].get<int>();
  }
  try {
    std::unique_ptr<SweepSpec> worker_spec;
    Plan worker_plan;
    if (rank != 0) {
      worker_spec = std::make_unique<SweepSpec>(load_spec(spec_path, options.store_override, options.overrides));
      worker_plan = plan_from_json(head["plan"]);
    }
    const SweepSpec& spec = rank == 0 ? setup->spec : *worker_spec;
    const int rpg = static_cast<int>(spec.runtime.ranks_per_group);
    configure_threads(options.threads > 0 ? options.threads : static_cast<int>(spec.runtime.threads));
    // Splitting is collective over every rank; the coordinator and groups that do not
    // all-reduce take MPI's, which needs no GPU context.
    const std::string backend = rank == 0 ? "" : group_backend(spec.runtime, rpg);
    auto group = make_group_communicator(rank == 0 ? (1 << 20) : (rank - 1) / rpg, backend.empty() ? "mpi" : backend);
    // A model split over stages: the consecutive ranks of each replica point to point (collective).
    const auto stages = head["stages"].get<std::int64_t>();
    // And the ranks of a group that hold the same stage, one in each replica (training's
    // gradient sums).
    std::unique_ptr<Communicator> replica, stage_peers;
    if (stages > 1) {
      const int s = static_cast<int>(stages);
      replica = make_group_communicator(rank == 0 ? (1 << 20) : (rank - 1) / s, backend.empty() ? "mpi" : backend);
      stage_peers = make_group_communicator(rank == 0 ? (1 << 20) : (rank - 1) / rpg * s + (rank - 1) % s,
                                            backend.empty() ? "mpi" : backend);
    }
    if (rank != 0)
      return run_worker_loop(spec, worker_plan, rank, rpg, backend.empty() ? nullptr : group.get(),
                             StageContext{stages, replica.get(), stage_peers.get()});
    MpiPool pool((size - 1) / rpg, rpg);
    return run_loop(setup->spec, setup->plan, setup->status, setup->store, pool, options);
  } catch (const std::exception& e) {
    abort_job(rank, e);
  }
}

}  // namespace linsweep
