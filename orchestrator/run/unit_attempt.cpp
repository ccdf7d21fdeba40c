// Compute, stage and report one unit, with every failure turned into the report.
#include "orchestrator/run/unit_attempt.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>

#include "common/errors.hpp"
#include "engine/comm/communicator.hpp"
#include "engine/runtime.hpp"
#include "orchestrator/build_info.hpp"
#include "orchestrator/run/unit_executor.hpp"
#include "storage/store.hpp"

namespace linsweep {
namespace {

double unix_now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

}  // namespace

AttemptOutcome attempt_unit(UnitExecutor& executor, const Unit& unit, std::size_t index, const Store& store,
                            const AttemptContext& context) {
  AttemptOutcome out;
  UnitReport& r = out.report;
  r.index = index;
  r.host = context.host;
  r.rank = context.rank;
  const auto t0 = std::chrono::steady_clock::now();
  const double started = unix_now();
  // Only a group of several ranks has other ranks that may wait in a collective.
  const bool shared = context.group != nullptr && context.group->size() > 1;
  bool computed = false;  // the unit's collectives are over
  try {
    UnitResult result = executor.run(unit, store, context.group);
    computed = true;
    UnitProvenance& p = result.provenance;  // the executor set the precision and memory
    p.version = linsweep_version();
    p.host = context.host;
    p.rank = context.rank;
    p.group_ranks = context.group != nullptr ? context.group->size() : 1;
    p.communicator = context.group != nullptr ? context.group->backend() : "none";
    p.started = started;
    p.finished = unix_now();
    if (context.leader) r.staged = store.stage(result, context.rank);
    r.ok = true;
  } catch (const InterruptedError& e) {
    // Every rank of a group agreed to stop at the same step and saved a checkpoint.
    r.interrupted = true;
    r.error = e.what();
  } catch (const DiskFullError& e) {
    // Staging runs on the leader after the group's collectives; inside the computation a rank
    // of a group may be mid-collective.
    r.disk_full = true;
    r.error = e.what();
    out.group_broken = shared && !computed;
  } catch (const Error& e) {
    r.error = e.what();
    r.bad_input = e.exit_code() == ExitCode::kBadInput;
    out.group_broken = shared;
  } catch (const std::exception& e) {
    r.error = e.what();
    out.group_broken = shared;
  }
  r.duration = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.threads = configured_threads();
  r.peak_rss_mib = peak_rss_mib();
  return out;
}

double peak_rss_mib() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // kilobytes on Linux
}

std::string this_host() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) return "?";
  return host;
}

}  // namespace linsweep
