// Stop signals caught as a flag for the lifetime of a scope (Ctrl-C, SIGTERM, Slurm's SIGUSR1).
#pragma once

#include <signal.h>

#include <initializer_list>
#include <thread>
#include <vector>

namespace linsweep {

// While alive, each of `signals` sets a process-wide flag instead of its previous
// disposition (the handler restarts interrupted system calls, as std::signal's does); the
// constructor clears the flag and the destructor restores the previous dispositions. A
// handler can only write a lock-free atomic, so there is one flag per process: recorders must
// not overlap in time. received() is async-signal-safe and may be read from any thread.
// A second SIGINT while the flag holds SIGINT (Ctrl-C twice) ends the process by that signal,
// as if no recorder were installed: units already committed stay committed.
//
// The handler runs on a thread of the recorder's own that computes nothing. The constructing
// thread blocks `signals`, and so does every thread started from it while the recorder lives
// (a new thread inherits the mask: torch's OpenMP pool, the demo's training threads). Why: the
// kernel writes a signal's frame just below the stack pointer of the thread it interrupts, and
// oneDNN's JIT GEMM before 3.11 (jit_avx_gemm_f32, which its inner product runs when the ISA is
// AVX2; oneDNN issue 4845) points the stack pointer into a heap buffer while it computes, so a
// stop signal landing in a training step overwrote heap memory (docs/reliability.md). Threads
// started before the recorder (OpenBLAS's pool, MPI's) keep their masks; none of them runs oneDNN.
// So: a process-directed signal (kill, a terminal, Slurm) is recorded shortly after it
// arrives; one raised at the constructing thread itself (raise) waits for the destructor; once
// the destructor returns, every signal that reached the process while the recorder lived is in
// received(), which keeps it until the next recorder. A child spawned from the constructing
// thread inherits the blocked mask: give it its own (posix_spawnattr_setsigmask).
// Construct and destroy on the same thread.
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
  sigset_t set_{};            // signals_
  sigset_t previous_mask_{};  // the constructing thread's mask before
  std::jthread receiver_;     // unblocks signals_ and waits, until stopped
};

}  // namespace linsweep
