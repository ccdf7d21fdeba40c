// Formatting of summary-table cells, shared by every section.
#pragma once

#include <string>

namespace linsweep {

// Up to `digits` significant digits; "n/a" for NaN or infinity.
std::string num(double v, int digits = 4);
// One decimal ("12.3"); "n/a" for non-finite values.
std::string pct(double v);
// "+1.23 [0.50, 2.10]" with " †" when the interval contains zero.
std::string delta_cell(double d, double lo, double hi);
// "+1.23"
std::string signed2(double v);
// A count with a suffix and three significant digits: "812", "12.3k", "345M", "1.01B";
// "" for a count below zero (unknown).
std::string count_si(double v);

// The footnote for the † mark (kept only on tables that use it).
inline constexpr const char* kZeroNote = "† the 95% bootstrap interval contains zero";

}  // namespace linsweep
