// glibc's malloc settings for a process that runs models (see heap_policy.hpp).
#include "common/heap_policy.hpp"

#include <cstdlib>  // defines __GLIBC__ (through <features.h>) where the C library is glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace linsweep {

bool keep_large_blocks_in_heap() {
#if defined(__GLIBC__)
  // mallopt returns 1 when it takes a value; an allocator that replaces glibc's (a sanitizer's,
  // or one preloaded) answers 0 and keeps its own policy. Every setting is tried either way.
  const bool mmap_off = mallopt(M_MMAP_MAX, 0) == 1;
  const bool trim = mallopt(M_TRIM_THRESHOLD, kHeapTrimBytes) == 1;
  const bool pad = mallopt(M_TOP_PAD, kHeapTopPadBytes) == 1;
  return mmap_off && trim && pad;
#else
  return false;
#endif
}

}  // namespace linsweep
