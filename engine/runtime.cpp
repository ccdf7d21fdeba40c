// Device, dtype and thread selection.
#include "engine/runtime.hpp"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <torch/version.h>

#include <cstdlib>
#include <exception>
#include <string>

#include "common/errors.hpp"
#include "engine/blas_threads.hpp"

namespace linsweep {
int default_thread_count() {
  int forced = env_int("LINSWEEP_THREADS", 0);
  if (forced > 0) return forced;
  int n = available_cpus() / std::max(1, local_size());
  return n > 0 ? n : 1;
}

void configure_threads(int threads) {
  const int n = threads > 0 ? threads : default_thread_count();
  at::set_num_threads(n);
  // Debian's LibTorch does not know it runs on OpenBLAS, whose own pool defaults to every
  // CPU in the affinity mask; float64 GEMMs (the fit statistics) would then round
  // differently from run to run depending on how mpirun binds ranks. Match it to torch's.
  set_blas_threads(n);
}

int configured_threads() { return at::get_num_threads(); }

namespace {

bool probe_onednn_bfloat16_gemm() {
  if (!at::hasMKLDNN()) return false;
  try {
    const at::Tensor a = at::ones({16, 16}, at::TensorOptions().dtype(at::kBFloat16)).to_mkldnn();
    return at::mkldnn_linear(a, a, c10::nullopt).to_dense().defined();
  } catch (const std::exception&) {  // dnnl::error from ideep, or c10::Error
    return false;                    // oneDNN has no bfloat16 kernel for the ISA it may use
  }
}

}  // namespace

bool onednn_bfloat16_gemm() {
  static const bool yes = probe_onednn_bfloat16_gemm();
  return yes;
}

void configure_cpu_bfloat16() {
  if (!onednn_bfloat16_gemm()) at::globalContext().setUserEnabledMkldnn(false);
}

std::string resolve_device(const std::string& requested) {
  const bool cuda = at::hasCUDA();
  if (requested == "auto") {
    if (!cuda) return "cpu";
    // Device count is only known through the CUDA hooks; local rank picks the GPU.
    int count = static_cast<int>(at::getNumGPUs());
    return count > 0 ? "cuda:" + std::to_string(local_rank() % count) : "cpu";
  }
  if (requested == "cpu") return requested;
  if (requested.rfind("cuda", 0) == 0) {
    if (!cuda) throw InputError("device '" + requested + "': this build or machine has no CUDA");
    if (requested == "cuda") return "cuda:" + std::to_string(local_rank() % static_cast<int>(at::getNumGPUs()));
    if (requested.size() > 5 && requested[4] == ':') {
      int idx = std::atoi(requested.c_str() + 5);
      if (idx >= 0 && static_cast<std::size_t>(idx) < at::getNumGPUs()) return requested;
    }
    throw InputError("device '" + requested + "': no such CUDA device");
  }
  throw InputError("device '" + requested + "': expected auto, cpu, cuda or cuda:N");
}

void check_dtype_name(const std::string& name) {
  if (name != "float32" && name != "bfloat16" && name != "float16")
    throw InputError("dtype '" + name + "': expected float32, bfloat16 or float16");
}

std::string torch_version() {
  return std::string("LibTorch ") + TORCH_VERSION + (at::hasCUDA() ? " (CUDA)" : " (CPU)");
}

}  // namespace linsweep
