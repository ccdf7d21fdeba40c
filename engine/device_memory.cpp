// Device memory peaks from torch's CUDA caching allocator (in CUDA builds of LibTorch only: the
// CPU package ships the header but not the library).
#include "engine/device_memory.hpp"

#include <cmath>

#if LINSWEEP_WITH_TORCH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#endif

namespace linsweep {
namespace {

// N of "cuda:N", or −1 for any other device.
int cuda_index(const std::string& device) {
  if (device.rfind("cuda:", 0) != 0) return -1;
  return std::stoi(device.substr(5));
}

}  // namespace

void reset_device_peak(const std::string& device) {
#if LINSWEEP_WITH_TORCH_CUDA
  if (const int index = cuda_index(device); index >= 0) c10::cuda::CUDACachingAllocator::resetPeakStats(index);
#else
  (void)cuda_index(device);
#endif
}

double device_peak_mib(const std::string& device) {
#if LINSWEEP_WITH_TORCH_CUDA
  if (const int index = cuda_index(device); index >= 0) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(index);
    const auto& bytes =
        stats.allocated_bytes[static_cast<std::size_t>(c10::cuda::CUDACachingAllocator::StatType::AGGREGATE)];
    return static_cast<double>(bytes.peak) / (1024.0 * 1024.0);
  }
#else
  (void)cuda_index(device);
#endif
  return std::nan("");
}

double device_free_bytes(const std::string& device) {
#if LINSWEEP_WITH_TORCH_CUDA
  if (const int index = cuda_index(device); index >= 0) {
    const c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(index));
    std::size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) == cudaSuccess) return static_cast<double>(free);
  }
#else
  (void)cuda_index(device);
#endif
  return 0;
}

}  // namespace linsweep
