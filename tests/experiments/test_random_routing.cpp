// Random routing at a gate's share: the same count per window, independent of batching, uniform.
#include <ATen/ATen.h>

#include <cmath>

#include "experiments/numerics/random_routing.hpp"
#include "support/catch.hpp"

using namespace linsweep;

namespace {

// A gate-like mask: window b routes its first (b · 3) % T positions, and position T−1 alternates.
at::Tensor staircase(std::int64_t windows, std::int64_t T) {
  at::Tensor m = at::zeros({windows, T}, at::kBool);
  for (std::int64_t b = 0; b < windows; ++b) {
    m[b].slice(0, 0, (b * 3) % T).fill_(true);
    m[b][T - 1] = b % 2 == 0;
  }
  return m;
}

}  // namespace

TEST_CASE("good_: random routing keeps each window's count of scored positions and its last position") {
  const std::int64_t T = 16;
  const at::Tensor gate = staircase(12, T);
  const at::Tensor r = random_routing_like(gate, 7, 0);
  REQUIRE(r.sizes() == gate.sizes());
  REQUIRE(r.scalar_type() == at::kBool);
  for (std::int64_t b = 0; b < 12; ++b) {
    INFO("window " << b);
    CHECK(r[b].slice(0, 0, T - 1).sum().item<std::int64_t>() == gate[b].slice(0, 0, T - 1).sum().item<std::int64_t>());
    CHECK(r[b][T - 1].item<bool>() == gate[b][T - 1].item<bool>());
  }
  // Not the gate's own positions: the staircase routes a prefix, the draw scatters it.
  CHECK_FALSE(at::equal(r, gate));
}

TEST_CASE("good_: a window's draw depends on its index and the seed, not on the batch it came in") {
  const at::Tensor gate = staircase(10, 12);
  const at::Tensor whole = random_routing_like(gate, 3, 100);
  const at::Tensor head = random_routing_like(gate.slice(0, 0, 4), 3, 100);
  const at::Tensor tail = random_routing_like(gate.slice(0, 4, 10), 3, 104);
  CHECK(at::equal(at::cat({head, tail}), whole));
  CHECK(at::equal(random_routing_like(gate, 3, 100), whole));  // deterministic
  CHECK_FALSE(at::equal(random_routing_like(gate, 4, 100), whole));
  CHECK_FALSE(at::equal(random_routing_like(gate, 3, 101), whole));
}

TEST_CASE("good_: every scored position is drawn equally often") {
  // 4000 windows of T = 9 routing 4 of the 8 scored positions: each position is routed in
  // half of them, binomial(4000, 1/2), standard deviation 31.6; 6 of them bound it.
  const std::int64_t W = 4000, T = 9;
  at::Tensor gate = at::zeros({W, T}, at::kBool);
  gate.slice(1, 0, 4).fill_(true);
  const at::Tensor counts = random_routing_like(gate, 11, 0).to(at::kLong).sum(0);
  for (std::int64_t t = 0; t < T - 1; ++t) {
    INFO("position " << t);
    CHECK(std::abs(counts[t].item<std::int64_t>() - W / 2) < 190);
  }
  CHECK(counts[T - 1].item<std::int64_t>() == 0);
}

TEST_CASE("bad_: random routing takes a bool [B, T] mask") {
  CHECK_THROWS_AS(random_routing_like(at::zeros({2, 3}, at::kFloat), 0, 0), c10::Error);
  CHECK_THROWS_AS(random_routing_like(at::zeros({6}, at::kBool), 0, 0), c10::Error);
}

TEST_CASE("good_: a gate against its random draws: mean, spread, paired interval, share beaten") {
  // Four windows of one scored position each, alike, so every bootstrap resample is the whole.
  const std::vector<double> base(4, 0.0), gate(4, 0.1);
  const std::vector<std::vector<double>> draws = {std::vector<double>(4, 0.2), std::vector<double>(4, 0.3),
                                                  std::vector<double>(4, 0.05)};
  const RandomComparison r = compare_with_random(base, gate, draws, 1, 200, 7);
  const double g = 100 * std::expm1(0.1), d[] = {100 * std::expm1(0.2), 100 * std::expm1(0.3), 100 * std::expm1(0.05)};
  const double mean = (d[0] + d[1] + d[2]) / 3;
  const double sd =
      std::sqrt(((d[0] - mean) * (d[0] - mean) + (d[1] - mean) * (d[1] - mean) + (d[2] - mean) * (d[2] - mean)) / 2);
  CHECK(r.mean_delta_pct == Catch::Approx(mean));
  CHECK(r.sd_pct == Catch::Approx(sd));
  CHECK(r.diff_pct == Catch::Approx(g - mean));
  CHECK(r.ci_low == Catch::Approx(g - mean));
  CHECK(r.ci_high == Catch::Approx(g - mean));
  CHECK(r.beaten == Catch::Approx(2.0 / 3.0));
  // One draw: no spread; a gate alike in every window but one: a paired interval that is not a point.
  CHECK(std::isnan(compare_with_random(base, gate, {draws[0]}, 1, 10, 7).sd_pct));
  const RandomComparison uneven = compare_with_random(base, {0.1, 0.1, 0.1, 0.9}, draws, 1, 400, 7);
  CHECK(uneven.ci_low < uneven.diff_pct);
  CHECK(uneven.ci_high > uneven.ci_low);
  CHECK(draw_seed(5, 0) == 5);
  CHECK(draw_seed(5, 1) != draw_seed(5, 2));
}
