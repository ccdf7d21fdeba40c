// Escaping, text widths and number formats for SVG.
#include "presentation/svg_text.hpp"

#include <fmt/format.h>

#include <cmath>

namespace linsweep {

std::string xml_escape(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

double text_width(const std::string& s, double font_size) {
  std::size_t code_points = 0;
  for (unsigned char c : s) code_points += (c & 0xC0) != 0x80;  // count lead bytes, not continuation bytes
  return static_cast<double>(code_points) * font_size * 0.62;
}

std::string tick_text(double v, bool log_axis) {
  if (!log_axis) return fmt::format("{:g}", v);
  static const char* const kSuffix[] = {"", "k", "M", "B", "T"};  // B: billions, as parameter counts are quoted
  double scaled = v;
  int k = 0;
  while (std::abs(scaled) >= 1000 && k < 4) scaled /= 1000, ++k;
  return fmt::format("{:g}{}", scaled, kSuffix[k]);
}

std::string exact_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{}", v);
}

}  // namespace linsweep
