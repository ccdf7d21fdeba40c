// split_stages: contiguous stages in order, at least one layer each, the layers' parameters
// shared about evenly, refusals.
#include <cmath>
#include <cstdint>

#include "common/errors.hpp"
#include "engine/model/model_config.hpp"
#include "engine/model/model_stages.hpp"
#include "support/catch.hpp"

using namespace linsweep;

namespace {

ModelConfig llama_8b_shape() {
  return model_config(
      "llama",
      {.vocab_size = 128256, .d_model = 4096, .n_layers = 32, .n_heads = 32, .d_ff = 14336, .max_positions = 8192});
}

void check_cover(const std::vector<StageLayers>& s, std::int64_t layers) {
  REQUIRE_FALSE(s.empty());
  CHECK(s.front().first == 0);
  CHECK(s.back().end == layers);
  for (std::size_t i = 0; i < s.size(); ++i) {
    CHECK(s[i].end > s[i].first);
    if (i > 0) CHECK(s[i].first == s[i - 1].end);
  }
}

}  // namespace

TEST_CASE("split_stages shares equal layers evenly, whatever the vocabulary") {
  const ModelConfig c = llama_8b_shape();
  for (std::int64_t stages : {1, 2, 4, 8, 32}) {
    const auto s = split_stages(c, stages);
    REQUIRE(static_cast<std::int64_t>(s.size()) == stages);
    check_cover(s, 32);
    for (const auto& st : s) CHECK(st.end - st.first == 32 / stages);
  }
  const auto three = split_stages(c, 3);  // 32 layers over 3: 10 or 11 each
  check_cover(three, 32);
  for (const auto& st : three) CHECK(std::abs(static_cast<double>(st.end - st.first) - 32.0 / 3) < 1.0);
}

TEST_CASE("split_stages gives every stage a layer and refuses more stages than layers") {
  ModelConfig c = llama_8b_shape();
  c.n_layers = 3;
  check_cover(split_stages(c, 3), 3);
  CHECK_THROWS_AS(split_stages(c, 4), InputError);
  CHECK_THROWS_AS(split_stages(c, 0), InputError);
}
