// The reasons a gates or nofly row is flagged (the empty routing list end to end:
// experiments/measure_test.sh, through the table, `linsweep tables` and `linsweep status`), and
// the correlations those and token_regression report with their n and interval.
#include <cmath>
#include <stdexcept>
#include <vector>

#include "experiments/numerics/correlation.hpp"
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

TEST_CASE("degenerate: an empty routing list says what emptied it; an r undefined or over few tokens, its n") {
  const Correlation ten{0.3, 12, 0.1, 0.5}, two{-1.0, 2, -1.0, -1.0}, none{NAN, 0, NAN, NAN};
  NoflyCounts c{.min_count = 10, .eligible = 5, .listed = 2, .listed_r = ten, .shared_r = ten};
  CHECK(nofly_flag(c).empty());
  // r over two listed tokens is ±1 by construction: flagged, with its n.
  c.listed_r = two;
  CHECK(nofly_flag(c) == "r over found: only 2 found, under the minimum n = 10 (±1 by construction)");
  c.listed_r = {0.8, 9, 0.2, 0.95};
  CHECK(nofly_flag(c) == "r over found: only 9 found, under the minimum n = 10");
  c.listed = 0, c.listed_r = none;
  CHECK(nofly_flag(c) ==
        "empty list: none of the 5 tokens seen min_count times passes the mean δ; r over found undefined: 0 found "
        "(needs 2 with varying mean δ)");
  c.eligible = 0;
  CHECK_THAT(nofly_flag(c), ContainsSubstring("empty list: no source token seen min_count = 10 times"));
  c.shared_r = {NAN, 1, NAN, NAN};
  CHECK_THAT(nofly_flag(c), ContainsSubstring("r over shared undefined: 1 shared"));
}

TEST_CASE("correlate: r as numpy.corrcoef, n, a bootstrap interval over groups, NaN where undefined") {
  const std::vector<double> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, y = {2, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11};
  const Correlation c = correlate(x, y, {}, 500, 0);
  CHECK(c.n == 12);
  CHECK(c.r == Catch::Approx(0.958041958).epsilon(1e-9));
  CHECK(c.ci_low <= c.r);
  CHECK(c.r <= c.ci_high);
  CHECK(c.ci_high <= 1.0);
  CHECK(correlate(x, y, {}, 500, 0).ci_low == c.ci_low);  // seeded
  // Groups: pairs of one group are drawn together; one group alone leaves every draw the sample.
  const Correlation one = correlate(x, y, std::vector<std::int64_t>(12, 7), 50, 0);
  CHECK(one.ci_low == Catch::Approx(c.r).epsilon(1e-12));
  CHECK(one.ci_high == Catch::Approx(c.r).epsilon(1e-12));
  const Correlation flat = correlate({1, 2, 3}, {4, 4, 4}, {}, 50, 0);
  CHECK(std::isnan(flat.r));
  CHECK(std::isnan(flat.ci_low));
  CHECK(correlation_flag("r", flat, "positions", "values") == "r undefined: 3 positions (needs 2 with varying values)");
  CHECK(correlation_flag("r", c, "positions", "values").empty());
  CHECK_THROWS_AS(correlate({1, 2}, {1}, {}, 10, 0), std::invalid_argument);
}
