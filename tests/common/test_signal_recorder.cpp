// SignalRecorder: signals become a flag while it lives, taken on its own thread (never on one that
// computes); the previous dispositions and mask come back.
#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <thread>

#include "common/signal_recorder.hpp"
#include "support/catch.hpp"

using namespace linsweep;

namespace {
volatile std::sig_atomic_t g_previous = 0;
extern "C" void previous_handler(int sig) { g_previous = sig; }

bool blocked_here(int sig) {
  sigset_t mask;
  ::pthread_sigmask(SIG_SETMASK, nullptr, &mask);
  return sigismember(&mask, sig) == 1;
}

// received() once it is non-zero, or 0 after 10 s: the recorder's thread takes the signal.
int wait_received() {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (SignalRecorder::received() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return SignalRecorder::received();
}
}  // namespace

TEST_CASE("SignalRecorder records while alive and restores the previous handler", "[signal]") {
  std::signal(SIGUSR2, previous_handler);
  {
    const SignalRecorder r({SIGUSR2, SIGINT});
    CHECK(SignalRecorder::received() == 0);
    ::kill(::getpid(), SIGUSR2);  // process-directed, as from a terminal, Slurm or kill
    CHECK(wait_received() == SIGUSR2);
    CHECK(g_previous == 0);
  }
  std::raise(SIGUSR2);
  CHECK(g_previous == SIGUSR2);
  const SignalRecorder again({SIGUSR2});
  CHECK(SignalRecorder::received() == 0);  // a new recorder starts clear
  std::signal(SIGUSR2, SIG_DFL);
}

TEST_CASE("SignalRecorder keeps its signals off the threads that compute", "[signal]") {
  REQUIRE_FALSE(blocked_here(SIGUSR2));
  {
    const SignalRecorder r({SIGUSR2});
    CHECK(blocked_here(SIGUSR2));
    bool blocked_in_new_thread = false;
    std::thread([&] { blocked_in_new_thread = blocked_here(SIGUSR2); }).join();
    CHECK(blocked_in_new_thread);  // inherited: torch's pool and training threads start this way
    std::raise(SIGUSR2);           // at this thread: pending while the recorder lives
    CHECK(SignalRecorder::received() == 0);
  }
  CHECK(SignalRecorder::received() == SIGUSR2);  // recorded by the time the destructor returns
  CHECK_FALSE(blocked_here(SIGUSR2));
}
