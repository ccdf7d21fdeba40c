// Peak device memory over a stretch of work (a unit): what torch's caching allocator handed out
// on a CUDA device since the last reset. Without a CUDA build of LibTorch, or for the CPU, there
// is nothing to measure. Not thread safe against other threads resetting the same device.
#pragma once

#include <string>

namespace linsweep {

// Starts a new peak on `device` ("cuda:N"); does nothing for "cpu" or without CUDA.
void reset_device_peak(const std::string& device);

// The peak since the last reset on `device`, MiB; NaN for "cpu" or without CUDA.
double device_peak_mib(const std::string& device);

// Free memory on `device` now, bytes; 0 for "cpu" or without CUDA.
double device_free_bytes(const std::string& device);

}  // namespace linsweep
