// Per-unit peak resident memory from /proc.
#include "common/peak_memory.hpp"

#include <sys/resource.h>

#include <fstream>
#include <string>

namespace linsweep {

bool reset_peak_resident() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";  // 5: reset the peak resident set size to the current one (proc(5))
  out.flush();
  return static_cast<bool>(out);
}

double peak_resident_mib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;  // "VmHWM:  123456 kB"
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // kilobytes on Linux
}

}  // namespace linsweep
