// The process's one stop-signal flag and the recorder that installs its handler.
#include "common/signal_recorder.hpp"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <mutex>
#include <stop_token>

namespace linsweep {
namespace {

// Written by the handler, which may run on any thread that does not block the signals: lock-free
// atomics are async-signal-safe and visible to the threads that poll received().
std::atomic<int> g_received{0};
std::atomic<const char*> g_note{nullptr};  // the recorder's first-SIGINT note, or null
std::atomic<std::size_t> g_note_size{0};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<const char*>::is_always_lock_free &&
              std::atomic<std::size_t>::is_always_lock_free);

extern "C" void on_recorded_signal(int sig) {
  if (sig == SIGINT && g_received.load() == SIGINT) {  // Ctrl-C twice: die of it now (both calls are signal-safe)
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);  // pending until the handler returns, then fatal
    return;
  }
  const char* note = g_note.load();
  if (sig == SIGINT && note != nullptr)
    if (::write(STDERR_FILENO, note, g_note_size.load()) < 0) g_note.store(nullptr);  // signal-safe
  g_received.store(sig);
}

// The receiving thread: `signals` unblocked here only, and nothing to do but wait for them.
void receive_until_stopped(std::stop_token stop, sigset_t signals) {
  ::pthread_sigmask(SIG_UNBLOCK, &signals, nullptr);
  std::mutex mutex;
  std::condition_variable_any stopped;
  std::unique_lock<std::mutex> lock(mutex);
  stopped.wait(lock, stop, [] { return false; });
}

sigset_t signal_set(const std::vector<int>& signals) {
  sigset_t set;
  sigemptyset(&set);
  for (int s : signals) sigaddset(&set, s);
  return set;
}

}  // namespace

SignalRecorder::SignalRecorder(std::initializer_list<int> signals, const char* first_sigint_note)
    : signals_(signals), saved_(signals.size()), set_(signal_set(signals_)), receiver_(receive_until_stopped, set_) {
  g_received.store(0);
  g_note_size.store(first_sigint_note != nullptr ? std::strlen(first_sigint_note) : 0);
  g_note.store(first_sigint_note);
  struct sigaction record {};
  record.sa_handler = on_recorded_signal;
  record.sa_flags = SA_RESTART;
  sigemptyset(&record.sa_mask);
  for (std::size_t i = 0; i < signals_.size(); ++i) ::sigaction(signals_[i], &record, &saved_[i]);
  // After the handler is in place: a signal before this line runs it here, outside any kernel.
  ::pthread_sigmask(SIG_BLOCK, &set_, &previous_mask_);
}

SignalRecorder::~SignalRecorder() {
  // Unblocked here first: a signal still pending runs the handler on this thread (which is in no
  // kernel now) before the call returns; one the receiver took is recorded once it has stopped.
  ::pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
  receiver_.request_stop();
  receiver_.join();
  g_note.store(nullptr);
  for (std::size_t i = 0; i < signals_.size(); ++i) ::sigaction(signals_[i], &saved_[i], nullptr);
}

int SignalRecorder::received() noexcept { return g_received.load(); }

}  // namespace linsweep
