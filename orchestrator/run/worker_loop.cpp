// Worker ranks: receive, run, stage, report.
#include "orchestrator/run/worker_loop.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>

#include "common/errors.hpp"
#include "common/signal_recorder.hpp"
#include "engine/comm/communicator.hpp"
#include "orchestrator/plan/plan.hpp"
#include "orchestrator/run/mpi_messages.hpp"
#include "orchestrator/run/run_loop.hpp"
#include "orchestrator/run/unit_attempt.hpp"
#include "orchestrator/run/unit_executor.hpp"
#include "storage/store.hpp"

namespace linsweep {
namespace {

[[noreturn]] void abort_broken_group(int rank, int rpg, const Unit& unit, const UnitReport& r) {
  const std::string error = r.disk_full ? disk_full_message(r.error) : r.error;
  std::fprintf(stderr, "rank %d: unit %s failed inside a group of %d ranks: %s; aborting the job (resumable)\n", rank,
               unit.id.c_str(), rpg, error.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, static_cast<int>(ExitCode::kUnitsFailed));
  std::abort();  // MPI_Abort does not return
}

}  // namespace

int run_worker_loop(const SweepSpec& spec, const Plan& plan, int rank, int rpg, Communicator* group,
                    StageContext stages) {
  const int g = (rank - 1) / rpg;
  const Store store = Store::open_read(spec.store);
  UnitExecutor executor(spec, stages);
  executor.set_stop_check([] { return SignalRecorder::received() != 0; });
  AttemptContext context;
  context.group = group;
  context.leader = (rank - 1) % rpg == 0;
  context.rank = rank;
  context.host = this_host();
  if (context.leader) send_event({.group = g, .host = context.host, .report = std::nullopt});
  for (;;) {
    const Assignment a = recv_assignment();
    if (a.index < 0) return static_cast<int>(a.code);
    const auto i = static_cast<std::size_t>(a.index);
    if (i >= plan.units.size()) throw CommError("rank 0 assigned unit " + std::to_string(i) + " of a smaller plan");
    const AttemptOutcome outcome = attempt_unit(executor, plan.units[i], i, store, context);
    if (outcome.group_broken) abort_broken_group(rank, rpg, plan.units[i], outcome.report);
    if (context.leader) send_event({.group = g, .host = context.host, .report = outcome.report});
  }
}

}  // namespace linsweep
