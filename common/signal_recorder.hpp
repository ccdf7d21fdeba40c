// Stop signals caught as a flag for the lifetime of a scope (Ctrl-C, SIGTERM, Slurm's SIGUSR1).
#pragma once

#include <signal.h>

#include <initializer_list>
#include <vector>

namespace linsweep {

// While alive, each of `signals` sets a process-wide flag instead of its previous
// disposition (the handler restarts interrupted system calls, as std::signal's does); the
// constructor clears the flag and the destructor restores the previous dispositions. A
// handler can only write a sig_atomic_t, so there is one flag per process: recorders must
// not overlap in time. received() is async-signal-safe and may be read from any thread.
// A second SIGINT while the flag holds SIGINT (Ctrl-C twice) ends the process by that signal,
// as if no recorder were installed: units already committed stay committed.
class SignalRecorder {
 public:
  // `first_sigint_note` (a string that outlives the recorder, or null): written to stderr by the
  // handler itself when the first SIGINT arrives, for a process whose one thread is busy then.
  explicit SignalRecorder(std::initializer_list<int> signals, const char* first_sigint_note = nullptr);
  ~SignalRecorder();
  SignalRecorder(const SignalRecorder&) = delete;
  SignalRecorder& operator=(const SignalRecorder&) = delete;

  // The last of the signals that arrived since construction, or 0.
  static int received() noexcept;

 private:
  std::vector<int> signals_;
  std::vector<struct sigaction> saved_;
};

}  // namespace linsweep
