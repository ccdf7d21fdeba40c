// posix_spawn and waitpid for foreground children (the demo's mpirun).
#include "common/child_process.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string_view>

#include "common/errors.hpp"
#include "common/signal_recorder.hpp"

extern char** environ;

namespace linsweep {

ChildExit run_foreground(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
  if (argv.empty()) throw InputError("run_foreground: no program");
  std::vector<std::string> env_strings;
  std::set<std::string> replaced;
  for (const auto& [k, v] : env) {
    env_strings.push_back(k + "=" + v);
    replaced.insert(k);
  }
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string key = entry.substr(0, entry.find('='));
    if (!replaced.contains(key)) env_strings.push_back(entry);
  }
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args_copy = argv;
  std::vector<char*> args;
  for (auto& a : args_copy) args.push_back(a.data());
  args.push_back(nullptr);

  // The child gets default dispositions (handlers are reset by exec anyway; this is explicit),
  // and this thread's signal mask as it is before the recorder blocks the stop signals in it.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGQUIT);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  sigset_t mask;
  ::pthread_sigmask(SIG_SETMASK, nullptr, &mask);
  posix_spawnattr_setsigmask(&attr, &mask);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  int status = 0;
  {
    // Recorded rather than fatal while the child runs (see the header).
    const SignalRecorder record({SIGINT, SIGTERM, SIGQUIT});
    pid_t pid = -1;
    const int rc = ::posix_spawnp(&pid, args[0], nullptr, &attr, args.data(), envp.data());
    posix_spawnattr_destroy(&attr);
    if (rc != 0) throw InputError(argv[0] + ": cannot run: " + std::strerror(rc));
    while (::waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) throw InputError(argv[0] + ": waitpid failed: " + std::strerror(errno));
    }
  }
  ChildExit out;
  out.received = SignalRecorder::received();  // complete once the recorder is gone
  if (WIFEXITED(status)) out.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
  return out;
}

std::string self_executable() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) throw InputError(std::string("/proc/self/exe: cannot read: ") + std::strerror(errno));
  std::string path(buf, static_cast<std::size_t>(n));
  // A binary replaced while running (a rebuild) reads "<path> (deleted)": the path now names
  // the new build, which is what a child should run.
  constexpr std::string_view kDeleted = " (deleted)";
  if (path.size() > kDeleted.size() && path.compare(path.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0)
    path.resize(path.size() - kDeleted.size());
  return path;
}

std::string find_on_path(const std::string& program) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0 ? program : "";
  const char* path = std::getenv("PATH");
  std::string rest = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= rest.size()) {
    const std::size_t end = std::min(rest.find(':', start), rest.size());
    const std::string dir = end > start ? rest.substr(start, end - start) : ".";
    const std::string candidate = dir + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

}  // namespace linsweep
