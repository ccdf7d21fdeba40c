// The heap policy takes effect: large blocks freed and allocated again, in the first thread and
// in another one, reuse their pages instead of faulting them in again.
#include <sys/resource.h>

#include <cstddef>
#include <cstdlib>
#include <thread>

#include "common/heap_policy.hpp"
#include "support/catch.hpp"

namespace {

// No Catch2 assertion here: the helpers also run on a thread of their own. -1: getrusage failed.
long thread_minor_faults() {
  rusage usage{};
  return ::getrusage(RUSAGE_THREAD, &usage) == 0 ? usage.ru_minflt : -1;
}

// Allocates `bytes`, writes one byte per page and frees them, `rounds` times in the calling
// thread; returns the minor page faults of every round but the first (which maps the pages),
// or -1 when malloc or getrusage failed.
long faults_after_first_round(std::size_t bytes, int rounds) {
  long faults = 0;
  for (int r = 0; r < rounds; ++r) {
    const long before = thread_minor_faults();
    auto* block = static_cast<volatile char*>(std::malloc(bytes));
    if (block == nullptr || before < 0) return -1;
    for (std::size_t i = 0; i < bytes; i += 4096) block[i] = 1;
    std::free(const_cast<char*>(block));
    const long after = thread_minor_faults();
    if (after < 0) return -1;
    if (r > 0) faults += after - before;
  }
  return faults;
}

}  // namespace

TEST_CASE("the heap policy keeps freed large blocks for reuse, in every thread") {
  const bool taken = linsweep::keep_large_blocks_in_heap();
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
  REQUIRE(taken);
#else
  if (!taken) {
    WARN("another allocator than glibc's keeps its own policy: nothing to check");
    return;
  }
#endif
  // 48 MiB: over glibc's 32 MiB mmap ceiling, and within one 64 MiB thread heap. Without the
  // policy, each round after the first faults all 12,288 pages in again.
  constexpr std::size_t kBytes = std::size_t{48} << 20;
  constexpr int kRounds = 5;
  constexpr long kPages = static_cast<long>(kBytes / 4096);
  const long first_thread = faults_after_first_round(kBytes, kRounds);
  long other_thread = -1;
  std::thread([&] { other_thread = faults_after_first_round(kBytes, kRounds); }).join();
  CHECK(first_thread >= 0);
  CHECK(first_thread < kPages / 4);
  CHECK(other_thread >= 0);
  CHECK(other_thread < kPages / 4);
}
