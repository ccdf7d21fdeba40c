// The messages between rank 0 (the run loop) and the worker ranks, over MPI_COMM_WORLD.
// Every MPI call is checked (MPI_CHECK throws CommError).
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "orchestrator/run/worker_pool.hpp"

namespace linsweep {

inline constexpr int kTagReport = 11;  // group leader -> rank 0: ready, or its unit's outcome
inline constexpr int kTagAssign = 12;  // rank 0 -> every rank of a group: an Assignment

// What rank 0 sends each rank of a group: a unit to run, or the end of the sweep.
struct Assignment {
  std::int64_t index = -1;  // plan index; -1: stop
  std::int64_t code = 0;    // for stop: the exit code every rank returns
};

void send_assignment(const Assignment& a, int dest);
// Blocks (polling, see recv_json) until rank 0's next assignment arrives.
Assignment recv_assignment();

// A group leader's message: ready (no report) or an outcome, with its host.
void send_event(const PoolEvent& event);
// Receives the next leader message; nullopt once `give_up` returns true.
std::optional<PoolEvent> recv_event(const std::function<bool()>& give_up);

// Rank 0's string reaches every rank (collective).
void bcast_string(std::string* s);

// Ends the whole job for an error that escapes a rank once the plan is shared: returning would
// leave the other ranks waiting for this one forever. Prints one line, then MPI_Abort with the
// error's exit code. Committed units stay; a rerun resumes.
[[noreturn]] void abort_job(int rank, const std::exception& e);

}  // namespace linsweep
