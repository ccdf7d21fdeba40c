// SignalRecorder: signals become a flag while it lives; the previous dispositions come back.
#include <csignal>

#include "common/signal_recorder.hpp"
#include "support/catch.hpp"

using namespace linsweep;

namespace {
volatile std::sig_atomic_t g_previous = 0;
extern "C" void previous_handler(int sig) { g_previous = sig; }
}  // namespace

TEST_CASE("SignalRecorder records while alive and restores the previous handler", "[signal]") {
  std::signal(SIGUSR2, previous_handler);
  {
    const SignalRecorder r({SIGUSR2, SIGINT});
    CHECK(SignalRecorder::received() == 0);
    std::raise(SIGUSR2);
    CHECK(SignalRecorder::received() == SIGUSR2);
    CHECK(g_previous == 0);
  }
  std::raise(SIGUSR2);
  CHECK(g_previous == SIGUSR2);
  const SignalRecorder again({SIGUSR2});
  CHECK(SignalRecorder::received() == 0);  // a new recorder starts clear
  std::signal(SIGUSR2, SIG_DFL);
}
