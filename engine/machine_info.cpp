// The processor from /proc/cpuinfo, the kernels from LibTorch's configuration and OpenBLAS.
#include "engine/machine_info.hpp"

#include <ATen/Parallel.h>
#include <ATen/Version.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/blas_kernels.hpp"
#include "common/launch_env.hpp"
#include "engine/runtime.hpp"

namespace linsweep {
namespace {

// The text after "key:" on the first line of `text` that contains `key`, trimmed; empty when none.
std::string value_after(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto at = line.find(key);
    if (at == std::string::npos) continue;
    const auto colon = line.find(':', at + key.size());
    if (colon == std::string::npos) continue;
    const auto begin = line.find_first_not_of(" \t", colon + 1);
    return begin == std::string::npos ? "" : line.substr(begin, line.find_last_not_of(" \t\r") + 1 - begin);
  }
  return "";
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return value_after(line, "model name");
  return "unknown CPU";
}

}  // namespace

MachineInfo machine_info(const std::string& device) {
  MachineInfo m;
  m.machine = cpu_model() + ", " + std::to_string(available_cpus()) + " CPUs";
  if (device != "cpu") m.machine += "; " + device;
  const std::string config = at::show_config();
  m.kernels = torch_version();
  if (const std::string cap = value_after(config, "CPU capability usage"); !cap.empty())
    m.kernels += "; ATen CPU capability " + cap;
  if (const auto at = config.find("MKL-DNN v"); at != std::string::npos)
    m.kernels += "; oneDNN " + config.substr(at + 8, config.find_first_of(" \n", at + 8) - (at + 8));
  if (const auto core = linked_openblas_core()) m.kernels += "; OpenBLAS " + *core;
  m.kernels += "; " + std::to_string(at::get_num_threads()) + " threads";
  for (const char* var : {"ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "OPENBLAS_CORETYPE"})
    if (const char* v = std::getenv(var); v != nullptr && *v != '\0') m.kernels += std::string("; ") + var + "=" + v;
  return m;
}

}  // namespace linsweep
