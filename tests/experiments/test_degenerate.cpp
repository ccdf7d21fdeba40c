// The reasons a gates or nofly row is flagged (the empty routing list end to end:
// experiments/measure_test.sh, through the table, `linsweep tables` and `linsweep status`).
#include <cmath>

#include "experiments/numerics/degenerate.hpp"
#include "support/catch.hpp"

using namespace linsweep;
using Catch::Matchers::ContainsSubstring;

TEST_CASE("degenerate: a gate with one label class, no AUC, or routing none or all is flagged") {
  const std::vector<std::uint8_t> mixed = {0, 1, 1, 0}, ones = {1, 1, 1}, zeros = {0, 0};
  CHECK(gate_flag(mixed, 0.7, 42.0).empty());
  CHECK_THAT(gate_flag(ones, 0.7, 42.0), ContainsSubstring("constant labels"));
  CHECK_THAT(gate_flag(zeros, 0.7, 42.0), ContainsSubstring("constant labels"));
  CHECK(gate_flag(mixed, NAN, 42.0) == "AUC undefined: the hold-out has one label");
  CHECK(gate_flag(mixed, 0.7, 0.0) == "routes no position to the surrogate");
  CHECK(gate_flag(mixed, 0.7, 100.0) == "routes every position to the surrogate");
  CHECK(gate_flag(ones, NAN, 0.0) ==
        "constant labels: every training row on one side of the δ threshold; AUC undefined: the hold-out has one "
        "label; routes no position to the surrogate");
}

TEST_CASE("degenerate: an empty routing list says what emptied it; an undefined r says over how many") {
  NoflyCounts c{
      .min_count = 10, .eligible = 5, .listed = 2, .found = 2, .shared = 9, .pearson_r = 0.3, .pearson_r_listed = 1.0};
  CHECK(nofly_flag(c).empty());
  c.listed = 0, c.found = 0, c.pearson_r_listed = NAN;
  CHECK(nofly_flag(c) ==
        "empty list: none of the 5 tokens seen min_count times passes the mean δ; r over found undefined: 0 found "
        "(needs 2 with varying mean δ)");
  c.eligible = 0;
  CHECK_THAT(nofly_flag(c), ContainsSubstring("empty list: no source token seen min_count = 10 times"));
  c.pearson_r = NAN, c.shared = 1;
  CHECK_THAT(nofly_flag(c), ContainsSubstring("r over shared undefined: 1 shared"));
}
