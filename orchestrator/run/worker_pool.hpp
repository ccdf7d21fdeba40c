// Where a sweep's units run, as the run loop (orchestrator/run/run_loop.hpp) sees it: groups of ranks that
// take one unit at a time and report its outcome. One process is one local group
// (local_pool.hpp); under MPI the groups are ranks 1..N−1 (orchestrator/run/mpi_run.cpp).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace linsweep {

// The outcome of one attempt of one unit, as the group's leader reports it.
struct UnitReport {
  std::size_t index = 0;     // the unit's index in the plan
  bool ok = false;           // computed and staged at `staged`
  bool interrupted = false;  // stopped on request after saving a checkpoint: resumable, not failed
  bool disk_full = false;    // the store's disk is full: no retry can succeed
  bool bad_input = false;    // failed on bad input (the exit-2 class): a retry fails the same way
  std::string error;         // for !ok
  std::string staged;        // for ok: the staged unit file (Store::stage)
  double duration = 0;       // seconds
  std::string host;          // where it ran
  int rank = 0;              // the leader's rank in MPI_COMM_WORLD (0 in one process)
  int threads = 0;           // torch's intra-op threads on that rank
  double peak_rss_mib = 0;   // that rank's peak resident memory
};

// What a group tells the run loop: that it is ready (first message), or how its unit ended.
struct PoolEvent {
  int group = 0;
  std::string host;                  // the group leader's host
  std::optional<UnitReport> report;  // empty: ready for a unit
};

// Not thread safe: the run loop calls it from one thread.
class WorkerPool {
 public:
  virtual ~WorkerPool() = default;
  virtual int groups() const = 0;
  virtual int ranks_per_group() const = 0;
  // The rank that leads group g (journaled with the units it starts).
  virtual int leader_rank(int group) const = 0;
  // Hands unit `index` of the plan to idle group g.
  virtual void assign(int group, std::size_t index) = 0;
  // The next event of any group; nullopt once `give_up` returns true (it is polled while
  // waiting). Called only while a unit is assigned or a group has not reported ready.
  virtual std::optional<PoolEvent> next(const std::function<bool()>& give_up) = 0;
  // Tells every group to end with exit code `code` (after its last report).
  virtual void stop(int code) = 0;
  // Ends everything now, units still running (the grace period is over); does not return.
  [[noreturn]] virtual void abort(int code) = 0;
};

}  // namespace linsweep
