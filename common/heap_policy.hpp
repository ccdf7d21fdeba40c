// How the process heap treats the large, short-lived blocks of a forward pass.
#pragma once

namespace linsweep {

// Keeps freed large blocks in the process heap for reuse instead of returning each to the
// kernel. A forward pass allocates and frees blocks of tens to hundreds of MiB (attention
// scores, MLP activations, a chunk of logits) many times a second; glibc serves every block
// over its 32 MiB mmap ceiling with a fresh mmap, so each use would pay a page fault and a
// page clear per 4 KiB (measured in docs/benchmarks.md, `bench/eval_throughput.sh`). Here
// blocks come from the heap, and the heap gives back only free space above `kHeapTrimBytes`
// at its top, so a steady loop reuses the same pages. A thread other than the first allocates
// from an arena of its own, made of heaps of at most 64 MiB that glibc unmaps as soon as one
// is empty, whatever the trim threshold: a top pad of `kHeapTopPadBytes` keeps them (measured
// on the demo's training threads: docs/benchmarks.md, `linsweep demo`).
// Call once, early in main, before threads start. Returns whether the allocator took every
// setting: false where the C library is not glibc, or where another allocator stands in for
// glibc's (AddressSanitizer's, a preloaded one), which then keeps its own policy; the program
// is correct either way, only slower.
bool keep_large_blocks_in_heap();

// Free space the heap keeps at its top before it returns memory to the kernel.
inline constexpr int kHeapTrimBytes = 256 << 20;
// Space kept beyond each request when a heap grows, and at its top when it shrinks: a thread
// arena's whole heap (64 MiB on 64-bit glibc), so that none is unmapped between steps.
inline constexpr int kHeapTopPadBytes = 64 << 20;

}  // namespace linsweep
