// The process's one stop-signal flag and the recorder that installs its handler.
#include "common/signal_recorder.hpp"

#include <csignal>

namespace linsweep {
namespace {

volatile std::sig_atomic_t g_received = 0;  // written by the handler only
extern "C" void on_recorded_signal(int sig) {
  if (sig == SIGINT && g_received == SIGINT) {  // Ctrl-C twice: die of it now (both calls are signal-safe)
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
    return;
  }
  g_received = sig;
}

}  // namespace

SignalRecorder::SignalRecorder(std::initializer_list<int> signals) : signals_(signals), saved_(signals.size()) {
  g_received = 0;
  struct sigaction record {};
  record.sa_handler = on_recorded_signal;
  record.sa_flags = SA_RESTART;
  sigemptyset(&record.sa_mask);
  for (std::size_t i = 0; i < signals_.size(); ++i) ::sigaction(signals_[i], &record, &saved_[i]);
}

SignalRecorder::~SignalRecorder() {
  for (std::size_t i = 0; i < signals_.size(); ++i) ::sigaction(signals_[i], &saved_[i], nullptr);
}

int SignalRecorder::received() noexcept { return g_received; }

}  // namespace linsweep
