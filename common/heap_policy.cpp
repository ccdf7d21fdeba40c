// glibc's malloc settings for a process that runs models (see heap_policy.hpp).
#include "common/heap_policy.hpp"

#include <stdexcept>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace linsweep {

void keep_large_blocks_in_heap() {
#if defined(__GLIBC__)
  // mallopt returns 1 on success and 0 on a value it refuses.
  if (mallopt(M_MMAP_MAX, 0) != 1) throw std::runtime_error("mallopt(M_MMAP_MAX, 0) refused");
  if (mallopt(M_TRIM_THRESHOLD, kHeapTrimBytes) != 1) throw std::runtime_error("mallopt(M_TRIM_THRESHOLD) refused");
#endif
}

}  // namespace linsweep
