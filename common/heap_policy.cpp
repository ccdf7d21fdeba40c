// glibc's malloc settings for a process that runs models (see heap_policy.hpp).
#include "common/heap_policy.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace linsweep {

bool keep_large_blocks_in_heap() {
#if defined(__GLIBC__)
  // mallopt returns 1 when it takes a value; an allocator that replaces glibc's (a sanitizer's,
  // or one preloaded) answers 0 and keeps its own policy.
  const bool mmap_off = mallopt(M_MMAP_MAX, 0) == 1;
  return mallopt(M_TRIM_THRESHOLD, kHeapTrimBytes) == 1 && mmap_off;
#else
  return false;
#endif
}

}  // namespace linsweep
