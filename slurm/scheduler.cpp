// Slurm commands run with posix_spawn, their answers parsed.
#include "slurm/scheduler.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>

#include "common/errors.hpp"

extern char** environ;

namespace linsweep {
namespace {

std::string first_line(const std::string& s) {
  std::string t = s;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  const auto nl = t.rfind('\n');  // Slurm prints its error last
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

bool unreachable(const std::string& err) {
  return err.find("Unable to contact slurm controller") != std::string::npos ||
         err.find("Connection refused") != std::string::npos || err.find("Socket timed out") != std::string::npos ||
         err.find("Zero Bytes were transmitted") != std::string::npos;
}

[[noreturn]] void fail_command(const std::string& what, const ProgramOutput& r) {
  if (r.status == 127)
    throw SlurmError(what + ": not found on PATH (is Slurm installed on this machine?)", ExitCode::kBadInput);
  if (r.status == 124)
    throw SlurmError(what + ": no answer within the timeout (is slurmctld running?)", ExitCode::kBadInput);
  if (unreachable(r.err))
    throw SlurmError(what + ": cannot reach the Slurm controller: " + first_line(r.err), ExitCode::kBadInput);
  throw SlurmError(
      what + " failed (exit " + std::to_string(r.status) + "): " + first_line(r.err.empty() ? r.out : r.err),
      ExitCode::kBadInput);
}

// Slurm 22.05 keeps no record of an array task cancelled before it started: the task only
// leaves its array's list of pending tasks ("Job A_3 not found" while A is still known). A task
// that ran keeps a record of its own for MinJobAge.
bool cancelled_before_start(const std::string& id) {
  const auto us = id.find('_');
  return us != std::string::npos && run_program({"scontrol", "show", "job", "-o", id.substr(0, us)}, 60).status == 0;
}

}  // namespace

bool JobInfo::alive() const {
  // Slurm keeps a job whose afterok dependency failed pending forever (kill_invalid_depend is
  // not a default): it will never run its units.
  if (reason == "DependencyNeverSatisfied") return false;
  for (const char* s : {"PENDING", "RUNNING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "CONFIGURING", "COMPLETING",
                        "SUSPENDED", "RESIZING", "SIGNALING", "STAGE_OUT", "RESV_DEL_HOLD"})
    if (state == s) return true;
  return false;
}

ProgramOutput run_program(const std::vector<std::string>& argv, int timeout_seconds) {
  ProgramOutput r;
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0)
    throw SlurmError(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (rc != 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    r.status = rc == ENOENT ? 127 : 126;
    r.err = argv[0] + ": " + std::strerror(rc);
    return r;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open = 2;
  bool timed_out = false;
  while (open > 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    if (::poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000))) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof(buf));
      if (n > 0 && sinks[i]->size() < (1u << 24)) sinks[i]->append(buf, static_cast<std::size_t>(n));
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.status = timed_out ? 124 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

std::string submit_batch(const std::string& script, const std::string& workdir,
                         const std::vector<std::string>& dependencies) {
  std::vector<std::string> argv = {"sbatch", "--parsable", "--chdir=" + workdir};
  if (!dependencies.empty()) {
    std::string dep = "--dependency=";
    for (std::size_t i = 0; i < dependencies.size(); ++i) dep += (i ? "," : "") + dependencies[i];  // all must hold
    argv.push_back(dep);
  }
  argv.push_back(script);
  const ProgramOutput r = run_program(argv, 120);
  if (r.status != 0) fail_command("sbatch", r);
  std::string id = r.out.substr(0, r.out.find_first_of(";\n"));  // "<id>[;cluster]"
  if (id.empty() || id.find_first_not_of("0123456789_") != std::string::npos)
    throw SlurmError("sbatch: unexpected answer '" + first_line(r.out) + "' (expected a job id)", ExitCode::kBadInput);
  return id;
}

std::map<std::string, std::string> parse_scontrol_line(const std::string& line) {
  std::map<std::string, std::string> out;
  std::istringstream in(line);
  std::string tok;
  while (in >> tok) {
    const auto eq = tok.find('=');
    if (eq != std::string::npos && eq > 0) out[tok.substr(0, eq)] = tok.substr(eq + 1);
  }
  return out;
}

std::map<std::string, JobInfo> query_jobs(const std::vector<std::string>& ids) {
  std::map<std::string, JobInfo> out;
  if (ids.empty()) return out;
  std::string list;
  for (const auto& id : ids) list += (list.empty() ? "" : ",") + id;
  // squeue knows every job still in the queue; an id it has forgotten makes it fail, so it is
  // asked for all jobs and filtered here. -r lists each pending task of an array on its own
  // line ("A_3"), not as one "A_[3-5%2]".
  const ProgramOutput q = run_program({"squeue", "-h", "-a", "-r", "-o", "%i|%T|%r"}, 60);
  if (q.status != 0) fail_command("squeue", q);
  std::istringstream lines(q.out);
  std::string line;
  while (std::getline(lines, line)) {
    const auto a = line.find('|'), b = line.find('|', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    JobInfo j{line.substr(0, a), line.substr(a + 1, b - a - 1), line.substr(b + 1), 0, "squeue"};
    if (j.reason == "None") j.reason.clear();
    for (const auto& id : ids)
      if (id == j.id) out[id] = j;
  }
  for (const auto& id : ids) {
    JobInfo& j = out[id];
    j.id = id;
    // scontrol adds the restart count (a requeued job is PENDING with Restarts > 0) and knows
    // jobs that finished within MinJobAge.
    const ProgramOutput s = run_program({"scontrol", "show", "job", "-o", id}, 60);
    if (s.status == 0) {
      const auto kv = parse_scontrol_line(s.out);
      if (auto it = kv.find("Restarts"); it != kv.end()) j.restarts = std::atoll(it->second.c_str());
      if (j.source.empty()) {
        if (auto it = kv.find("JobState"); it != kv.end()) j.state = it->second;
        if (auto it = kv.find("Reason"); it != kv.end() && it->second != "None") j.reason = it->second;
        j.source = "scontrol";
      }
      if (j.state == "PENDING" && j.restarts > 0) j.state = "REQUEUED";
      continue;
    }
    if (!j.source.empty()) continue;
    const ProgramOutput a = run_program({"sacct", "-n", "-P", "-X", "-j", id, "-o", "JobID,State"}, 60);
    if (a.status == 0) {
      std::istringstream al(a.out);
      if (std::getline(al, line) && line.find('|') != std::string::npos) {
        j.state = line.substr(line.find('|') + 1);
        j.state = j.state.substr(0, j.state.find(' '));  // "CANCELLED by 0"
        j.source = "sacct";
        continue;
      }
    }
    if (cancelled_before_start(id)) {
      j.state = "CANCELLED";
      j.reason = "NeverStarted";
      j.source = "scontrol";
      continue;
    }
    j.state = "UNKNOWN";
  }
  return out;
}

}  // namespace linsweep
