// The process's one stop-signal flag and the recorder that installs its handler.
#include "common/signal_recorder.hpp"

#include <unistd.h>

#include <csignal>
#include <cstring>

namespace linsweep {
namespace {

volatile std::sig_atomic_t g_received = 0;  // written by the handler only
const char* g_note = nullptr;               // the recorder's first-SIGINT note, or null
std::size_t g_note_size = 0;
extern "C" void on_recorded_signal(int sig) {
  if (sig == SIGINT && g_received == SIGINT) {  // Ctrl-C twice: die of it now (both calls are signal-safe)
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
    return;
  }
  if (sig == SIGINT && g_note != nullptr)
    if (::write(STDERR_FILENO, g_note, g_note_size) < 0) g_note = nullptr;  // signal-safe
  g_received = sig;
}

}  // namespace

SignalRecorder::SignalRecorder(std::initializer_list<int> signals, const char* first_sigint_note)
    : signals_(signals), saved_(signals.size()) {
  g_received = 0;
  g_note = first_sigint_note;
  g_note_size = first_sigint_note != nullptr ? std::strlen(first_sigint_note) : 0;
  struct sigaction record {};
  record.sa_handler = on_recorded_signal;
  record.sa_flags = SA_RESTART;
  sigemptyset(&record.sa_mask);
  for (std::size_t i = 0; i < signals_.size(); ++i) ::sigaction(signals_[i], &record, &saved_[i]);
}

SignalRecorder::~SignalRecorder() {
  g_note = nullptr;
  for (std::size_t i = 0; i < signals_.size(); ++i) ::sigaction(signals_[i], &saved_[i], nullptr);
}

int SignalRecorder::received() noexcept { return g_received; }

}  // namespace linsweep
