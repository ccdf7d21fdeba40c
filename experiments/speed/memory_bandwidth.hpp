// The memory bandwidth this process sees, which bounds a decode step that reads weights: the
// bytes a step reads over it is the fastest the step can be (docs/methods.md, "Speed").
#pragma once

#include <c10/core/Device.h>

#include <cstdint>

namespace linsweep {

struct MemoryBandwidth {
  double read_gb_s = 0;  // a sum over the buffer (every byte read once)
  double copy_gb_s = 0;  // a copy of it (read once, written once: twice its bytes)
};

// The fastest of `repeats` reads and copies of a float32 buffer of `bytes` on `device` (after
// one untimed pass of each; on the CPU with torch's threads), each ended by reading a value
// back, which waits for a GPU. Choose `bytes` well past the last-level cache. Thread safe (its
// own buffers).
MemoryBandwidth measure_memory_bandwidth(std::int64_t bytes, int repeats, const c10::Device& device);

}  // namespace linsweep
