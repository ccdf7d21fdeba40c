// Running the real `linsweep` binary from a Catch2 test: exit code, stdout, stderr.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "support/test_support.hpp"

namespace linsweep::test {

struct CliRun {
  int code = -1;
  bool crashed = false;  // a signal, or `timeout` ended it
  std::string out, err;
};

// `linsweep ARGS` (a shell command line, quoted by the caller) with stdin closed, at most
// `seconds` long.
inline CliRun run_cli(const std::string& args, int seconds = 120) {
  ScratchDir io;
  const std::string cmd = "timeout " + std::to_string(seconds) + " " + std::string(linsweep_binary()) + " " + args +
                          " >" + (io / "out") + " 2>" + (io / "err") + " </dev/null";
  const int status = std::system(cmd.c_str());
  CliRun r;
  r.crashed = WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) >= 124);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_text(io / "out");
  r.err = read_text(io / "err");
  return r;
}

// 'text' for the shell.
inline std::string quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace linsweep::test
