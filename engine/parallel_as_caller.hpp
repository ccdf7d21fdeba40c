// ATen's parallel loop with its body in the calling thread's ATen state.
#pragma once

#include <ATen/Parallel.h>
#include <ATen/ThreadLocalState.h>

#include <cstdint>

namespace linsweep {

// at::parallel_for(begin, end, grain, f), each of torch's threads running f in the caller's
// thread-local ATen state (inference mode, grad mode, dispatch keys): OpenMP's threads keep
// their own otherwise, and writing an inference-mode tensor outside inference mode fails.
// Inside a parallel region it runs f(begin, end) on the calling thread, as at::parallel_for.
template <typename F>
void parallel_for_as_caller(std::int64_t begin, std::int64_t end, std::int64_t grain, const F& f) {
  const at::ThreadLocalState state;
  at::parallel_for(begin, end, grain, [&](std::int64_t first, std::int64_t last) {
    at::ThreadLocalStateGuard guard(state);
    f(first, last);
  });
}

}  // namespace linsweep
