// Point-to-point messages of the sweep over MPI, polled so that a waiting rank never spins.
#include "orchestrator/run/mpi_messages.hpp"

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "common/errors.hpp"
#include "engine/comm/mpi_check.hpp"
#include "orchestrator/run/run_loop.hpp"

namespace linsweep {
namespace {

// Waits for a message with `tag` from any rank. Polls MPI_Iprobe back to back for the first
// 200 us (a reply to a message just sent usually arrives within that), then with sleeps that
// grow from 20 us to 1 ms, and to 10 ms once the wait passes a second: short exchanges stay
// fast and a rank that waits long costs ~100 wakeups/s, never a busy core (a blocking MPI_Recv
// spins in OpenMPI). Returns false when `give_up` says so.
bool probe(int tag, MPI_Status* status, const std::function<bool()>& give_up) {
  const auto t0 = std::chrono::steady_clock::now();
  auto sleep = std::chrono::microseconds(20);
  for (;;) {
    int flag = 0;
    MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, status));
    if (flag) return true;
    if (give_up && give_up()) return false;
    const auto waited = std::chrono::steady_clock::now() - t0;
    if (waited < std::chrono::microseconds(200)) continue;
    std::this_thread::sleep_for(sleep);
    const bool long_wait = waited > std::chrono::seconds(1);
    sleep = std::min(sleep * 2, std::chrono::microseconds(long_wait ? 10000 : 1000));
  }
}

nlohmann::json report_to_json(const UnitReport& r) {
  return {
      {"index", r.index},         {"ok", r.ok},       {"interrupted", r.interrupted}, {"disk_full", r.disk_full},
      {"bad_input", r.bad_input}, {"error", r.error}, {"staged", r.staged},           {"duration", r.duration},
      {"host", r.host},           {"rank", r.rank},   {"threads", r.threads},         {"peak_rss_mib", r.peak_rss_mib}};
}

UnitReport report_from_json(const nlohmann::json& j) {
  UnitReport r;
  r.index = j.at("index").get<std::size_t>();
  r.ok = j.at("ok").get<bool>();
  r.interrupted = j.at("interrupted").get<bool>();
  r.disk_full = j.at("disk_full").get<bool>();
  r.bad_input = j.at("bad_input").get<bool>();
  r.error = j.at("error").get<std::string>();
  r.staged = j.at("staged").get<std::string>();
  r.duration = j.at("duration").get<double>();
  r.host = j.at("host").get<std::string>();
  r.rank = j.at("rank").get<int>();
  r.threads = j.at("threads").get<int>();
  r.peak_rss_mib = j.at("peak_rss_mib").get<double>();
  return r;
}

}  // namespace

void send_assignment(const Assignment& a, int dest) {
  const std::int64_t words[2] = {a.index, a.code};
  MPI_CHECK(MPI_Send(words, 2, MPI_INT64_T, dest, kTagAssign, MPI_COMM_WORLD));
}

Assignment recv_assignment() {
  MPI_Status status;
  probe(kTagAssign, &status, nullptr);
  std::int64_t words[2] = {-1, 0};
  MPI_CHECK(MPI_Recv(words, 2, MPI_INT64_T, status.MPI_SOURCE, kTagAssign, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  return {words[0], words[1]};
}

void send_event(const PoolEvent& event) {
  nlohmann::json j = {{"group", event.group}, {"host", event.host}};
  if (event.report) j["report"] = report_to_json(*event.report);
  // Error texts may hold any bytes: replace what is not UTF-8 rather than throw.
  const std::string s = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  MPI_CHECK(MPI_Send(s.data(), static_cast<int>(s.size()), MPI_CHAR, 0, kTagReport, MPI_COMM_WORLD));
}

std::optional<PoolEvent> recv_event(const std::function<bool()>& give_up) {
  MPI_Status status;
  if (!probe(kTagReport, &status, give_up)) return std::nullopt;
  int n = 0;
  MPI_CHECK(MPI_Get_count(&status, MPI_CHAR, &n));
  std::string s(static_cast<std::size_t>(n), '\0');
  MPI_CHECK(MPI_Recv(s.data(), n, MPI_CHAR, status.MPI_SOURCE, kTagReport, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  const nlohmann::json j = nlohmann::json::parse(s);
  PoolEvent event;
  event.group = j.at("group").get<int>();
  event.host = j.at("host").get<std::string>();
  if (j.contains("report")) event.report = report_from_json(j["report"]);
  return event;
}

void bcast_string(std::string* s) {
  long long n = static_cast<long long>(s->size());
  MPI_CHECK(MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
  s->resize(static_cast<std::size_t>(n));
  MPI_CHECK(MPI_Bcast(s->data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD));
}

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

}  // namespace linsweep
