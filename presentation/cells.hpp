// Formatting of summary-table cells, shared by every section.
#pragma once

#include <cstdint>
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

// For the report's opening sentences: "+1.23% (95% CI +0.50 to +2.10)" (a Δ% and its interval),
// "0.623 (95% CI 0.580 to 0.661)" (an AUC, three decimals); the interval is left out where it
// is not finite.
std::string pct_sentence(double d, double lo, double hi);
// The same with another unit after the value: signed_sentence(-0.5, -0.9, -0.1, " points").
std::string signed_sentence(double v, double lo, double hi, const std::string& unit);
std::string auc_sentence(double v, double lo, double hi);

// A correlation with its interval and n: "+0.42 [+0.10, +0.70], n = 12", without the interval
// where it is not finite (rows written before it), with " ‡" when `flagged` (undefined, or n
// below the minimum its experiment states).
std::string correlation_cell(double r, double lo, double hi, std::int64_t n, bool flagged);

// The footnote for the ‡ mark.
inline constexpr const char* kFewPairsNote =
    "‡ r undefined or over fewer pairs than its minimum n (docs/methods.md, \"Correlations\"): not read as a "
    "measurement";

// The footnote for the † mark (kept only on tables that use it).
inline constexpr const char* kZeroNote = "† the 95% bootstrap interval contains zero";

}  // namespace linsweep
