// Running another program in the foreground: it shares this process's terminal and output.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace linsweep {

// What became of a child.
struct ChildExit {
  int code = 0;      // exit status when it exited
  int signal = 0;    // the signal that ended it, or 0
  int received = 0;  // SIGINT/SIGTERM/SIGQUIT that reached this process while it ran, or 0
};

// Runs argv[0] (looked up on PATH) with `argv`, this process's environment plus `env`
// (entries there replace inherited ones), stdin, stdout and stderr inherited, and waits for
// it. While it runs, SIGINT, SIGTERM and SIGQUIT do not stop this process: they are recorded
// in `received`, so that a Ctrl-C on the terminal, which reaches the child's process group
// too, stops the child and this process can tell an interrupt from a failure (mpirun exits 1
// when it is interrupted); the previous dispositions are restored afterwards.
// Throws InputError naming the program when it cannot be started (not found, not executable).
// Not thread safe (signal dispositions are process-wide).
ChildExit run_foreground(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {});

// The absolute path of the running executable (/proc/self/exe; without the " (deleted)" of a
// binary replaced since it started). Throws InputError when it cannot be read.
std::string self_executable();

// PATH lookup like a shell's: the full path of `program`, or "" when none is executable.
std::string find_on_path(const std::string& program);

}  // namespace linsweep
