// How the process heap treats the large, short-lived blocks of a forward pass.
#pragma once

namespace linsweep {

// Keeps freed large blocks in the process heap for reuse instead of returning each to the
// kernel. A forward pass allocates and frees blocks of tens to hundreds of MiB (attention
// scores, MLP activations, a chunk of logits) many times a second; glibc serves every block
// over its 32 MiB mmap ceiling with a fresh mmap, so each use paid a page fault and a page
// clear per 4 KiB (over a million faults for 4096 tokens of a d=512 GPT-2 shape,
// docs/benchmarks.md). Here blocks come from the heap, and the heap gives back only free
// space above `kHeapTrimBytes` at its top, so a steady loop reuses the same pages.
// Call once, early in main, before threads start. Where the C library is not glibc it does
// nothing. Throws std::runtime_error when glibc refuses a setting.
void keep_large_blocks_in_heap();

// Free space the heap keeps at its top before it returns memory to the kernel.
inline constexpr int kHeapTrimBytes = 256 << 20;

}  // namespace linsweep
