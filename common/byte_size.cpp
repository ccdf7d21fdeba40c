// Byte sizes in text and back.
#include "common/byte_size.hpp"

#include <cstdio>
#include <utility>

namespace linsweep {
namespace {

constexpr std::pair<const char*, double> kUnits[] = {
    {"B", 1},     {"kB", 1e3},     {"KB", 1e3},        {"MB", 1e6},           {"GB", 1e9},
    {"TB", 1e12}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
};

}  // namespace

std::optional<double> parse_byte_size(const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  // Plain decimals only: no sign, exponent, hexadecimal, infinity or NaN.
  if (used == 0 || text.substr(0, used).find_first_not_of("0123456789.") != std::string::npos) return std::nullopt;
  std::string unit = text.substr(used);
  if (!unit.empty() && unit[0] == ' ') unit.erase(0, 1);
  if (unit.empty()) return value;
  for (const auto& [name, scale] : kUnits)
    if (unit == name) return value * scale;
  return std::nullopt;
}

std::string byte_size_text(double bytes) {
  static constexpr const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int k = 0;
  while (k < 4 && bytes >= 1024.0) bytes /= 1024.0, ++k;
  char buf[32];
  std::snprintf(buf, sizeof buf, k == 0 ? "%.0f %s" : "%.3g %s", bytes, kNames[k]);
  return buf;
}

}  // namespace linsweep
