// Single-process sweep execution: the run loop over one local worker group.
#include "orchestrator/run/local_run.hpp"

#include <csignal>

#include "common/errors.hpp"
#include "common/signal_recorder.hpp"
#include "engine/runtime.hpp"
#include "orchestrator/run/local_pool.hpp"
#include "orchestrator/run/run_loop.hpp"
#include "orchestrator/run/sweep_setup.hpp"

namespace linsweep {

int run_sweep_local(const std::string& spec_path, const RunOptions& options) {
  try {
    // The unit runs on this thread until it ends, so the handler says what Ctrl-C does.
    const SignalRecorder signals({SIGINT, SIGTERM, SIGUSR1},
                                 "\nrun: stopping after the running unit… (Ctrl-C again to abort)\n");
    const std::unique_ptr<SweepSetup> setup =
        prepare_sweep(spec_path, options, [&](const SweepSpec& spec, std::int64_t stages) {
          if (stages > 1)
            throw SpecError(
                spec_path + ": runtime.stages: " + std::to_string(stages) +
                " stages run over the ranks of a worker group: launch with mpirun (runtime.ranks_per_group " +
                std::to_string(spec.runtime.ranks_per_group) + " ranks a group, and rank 0)");
        });
    configure_threads(options.threads > 0 ? options.threads : static_cast<int>(setup->spec.runtime.threads));
    LocalPool pool(setup->spec, setup->plan, setup->store);
    return run_loop(setup->spec, setup->plan, setup->status, setup->store, pool, options);
  } catch (const DiskFullError& e) {
    throw DiskFullError(user_message(e));
  }
}

}  // namespace linsweep
