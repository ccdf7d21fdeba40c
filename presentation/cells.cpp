// Cell formatting.
#include "presentation/cells.hpp"

#include <fmt/format.h>

#include <cmath>

namespace linsweep {

std::string num(double v, int digits) { return std::isfinite(v) ? fmt::format("{:.{}g}", v, digits) : "n/a"; }

std::string pct(double v) { return std::isfinite(v) ? fmt::format("{:.1f}", v) : "n/a"; }

std::string delta_cell(double d, double lo, double hi) {
  const bool zero = lo <= 0 && hi >= 0;
  return fmt::format("{:+.2f} [{:+.2f}, {:+.2f}]{}", d, lo, hi, zero ? " †" : "");
}

std::string signed_sentence(double v, double lo, double hi, const std::string& unit) {
  const std::string s = fmt::format("{:+.2f}", v) + unit;
  return std::isfinite(lo) && std::isfinite(hi) ? s + fmt::format(" (95% CI {:+.2f} to {:+.2f})", lo, hi) : s;
}

std::string pct_sentence(double d, double lo, double hi) { return signed_sentence(d, lo, hi, "%"); }

std::string auc_sentence(double v, double lo, double hi) {
  const std::string s = fmt::format("{:.3f}", v);
  return std::isfinite(lo) && std::isfinite(hi) ? s + fmt::format(" (95% CI {:.3f} to {:.3f})", lo, hi) : s;
}

std::string correlation_cell(double r, double lo, double hi, std::int64_t n, bool flagged) {
  const std::string value = std::isfinite(r) ? fmt::format("{:+.3f}", r) : "n/a";
  const std::string interval =
      std::isfinite(r) && std::isfinite(lo) && std::isfinite(hi) ? fmt::format(" [{:+.3f}, {:+.3f}]", lo, hi) : "";
  return value + interval + ", n = " + std::to_string(n) + (flagged ? " ‡" : "");
}

std::string signed2(double v) { return fmt::format("{:+.2f}", v); }

std::string count_si(double v) {
  if (!(v >= 0)) return "";
  static const char* const kSuffix[] = {"", "k", "M", "B", "T"};  // B: billions, as parameter counts are quoted
  int k = 0;
  while (v >= 999.5 && k < 4) v /= 1000, ++k;
  return fmt::format("{:.{}g}{}", v, 3, kSuffix[k]);
}

}  // namespace linsweep
