// Activation shards: streamed writes in every dtype, range reads, half conversion.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <random>

#include "common/errors.hpp"
#include "storage/activation_shard.hpp"
#include "storage/half.hpp"
#include "storage/store.hpp"
#include "support/catch.hpp"
#include "support/test_support.hpp"

using namespace linsweep;
using Catch::Matchers::ContainsSubstring;
using linsweep::test::ScratchDir;

UnitResult sample_unit(const std::string& id, int seed);  // test_unit_file.cpp

TEST_CASE("half and bfloat16 conversions round to nearest even and keep specials") {
  struct Case {
    float in;
    std::uint16_t half;
  };
  const Case cases[] = {{0.0f, 0x0000},         {-0.0f, 0x8000},
                        {1.0f, 0x3C00},         {-2.0f, 0xC000},
                        {65504.0f, 0x7BFF},     {65520.0f, 0x7C00},
                        {1e-8f, 0x0000},        {5.960464477539063e-08f, 0x0001},
                        {0.333333343f, 0x3555}, {std::numeric_limits<float>::infinity(), 0x7C00}};
  for (const auto& c : cases) {
    INFO(c.in);
    CHECK(float_to_half(c.in) == c.half);
  }
  CHECK(std::isnan(half_to_float(float_to_half(std::nanf("")))));
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  for (int i = 0; i < 10000; ++i) {
    const float x = dist(rng);
    CHECK(std::abs(half_to_float(float_to_half(x)) - x) <= std::abs(x) * 4.9e-4f + 6e-8f);
    CHECK(std::abs(bfloat16_to_float(float_to_bfloat16(x)) - x) <= std::abs(x) * 3.9e-3f);
  }
  CHECK(float_to_bfloat16(1.0f) == 0x3F80);
  // The bulk (F16C where available) path agrees with the scalar one bit for bit.
  std::vector<float> v(4099);
  for (auto& f : v) f = dist(rng) * 1000.0f;
  v[0] = 65520.0f, v[1] = 1e-8f, v[2] = std::numeric_limits<float>::infinity(), v[3] = 5.960464477539063e-08f;
  std::vector<std::uint16_t> bulk(v.size());
  floats_to_halves(v.data(), bulk.data(), v.size());
  for (std::size_t i = 0; i < v.size(); ++i) REQUIRE(bulk[i] == float_to_half(v[i]));
}

TEST_CASE("good_: shards stream in appends and read back in row ranges, in every dtype") {
  const std::int64_t d = 24, rows = 1000;
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(rows * d), y(rows * d), delta(rows);
  std::vector<std::int32_t> ids(rows), next(rows), pos(rows);
  std::vector<std::int64_t> win(rows);
  for (auto& v : x) v = dist(rng);
  for (auto& v : y) v = dist(rng);
  for (std::int64_t i = 0; i < rows; ++i)
    delta[i] = dist(rng), ids[i] = static_cast<int>(i % 997), next[i] = static_cast<int>((i * 7) % 1009),
    win[i] = i / 31, pos[i] = static_cast<int>(i % 31);
  struct Variant {
    ActivationDType dtype;
    bool compress;
    float tol;
  };
  for (const Variant& v :
       {Variant{ActivationDType::kFloat16, false, 2e-3f}, Variant{ActivationDType::kFloat32, false, 0.0f},
        Variant{ActivationDType::kBFloat16, false, 1.6e-2f}, Variant{ActivationDType::kFloat16, true, 2e-3f}}) {
    INFO(activation_dtype_name(v.dtype) << (v.compress ? " compressed" : ""));
    ScratchDir dir;
    ActivationOptions opt;
    opt.dtype = v.dtype;
    opt.with_y = true;
    opt.with_delta = true;
    opt.compress = v.compress;
    opt.chunk_rows = 128;
    {
      ActivationWriter w(dir / "shard.h5", d, opt);
      for (std::int64_t b = 0; b < rows; b += 300) {
        const std::int64_t n = std::min<std::int64_t>(300, rows - b);
        w.append({.x = &x[b * d],
                  .y = &y[b * d],
                  .delta = &delta[b],
                  .token_ids = &ids[b],
                  .next_token_ids = &next[b],
                  .window = &win[b],
                  .position = &pos[b],
                  .rows = n});
      }
      CHECK(!std::filesystem::exists(dir / "shard.h5"));  // invisible until closed
      w.close();
    }
    ActivationReader r(dir / "shard.h5");
    CHECK(r.rows() == rows);
    CHECK(r.d() == d);
    CHECK(r.has_y());
    const auto xs = r.x(250, 500);
    for (std::int64_t i = 0; i < 500 * d; ++i)
      REQUIRE(std::abs(xs[i] - x[250 * d + i]) <= v.tol * (1 + std::abs(x[250 * d + i])));
    const auto ys = r.y(999, 1);
    CHECK(std::abs(ys[0] - y[999 * d]) <= v.tol * (1 + std::abs(y[999 * d])));
    CHECK(r.delta(0, 3) == std::vector<float>(delta.begin(), delta.begin() + 3));
    CHECK(r.token_ids(996, 4) == std::vector<std::int32_t>(ids.begin() + 996, ids.end()));
    CHECK(r.has_next_token_ids());
    CHECK(r.next_token_ids(500, 3) == std::vector<std::int32_t>(next.begin() + 500, next.begin() + 503));
    CHECK(r.window(31, 2) == std::vector<std::int64_t>{1, 1});
    CHECK(r.position(31, 2) == std::vector<std::int32_t>{0, 1});
    CHECK_THROWS_WITH(r.x(990, 20), ContainsSubstring("outside the shard's 1000"));
  }
}

TEST_CASE("bad_: an abandoned writer leaves nothing; broken shards are refused") {
  ScratchDir dir;
  {
    ActivationWriter w(dir / "a.h5", 4, {});
    std::vector<float> x(4, 1.0f);
    std::int32_t id = 1, p = 0;
    std::int64_t win = 0;
    w.append({.x = x.data(), .token_ids = &id, .window = &win, .position = &p, .rows = 1});
  }  // no close(): e.g. an exception in the worker
  CHECK(std::filesystem::is_empty(dir.path()));
  test::write_text(dir / "bad.h5", "nope");
  CHECK_THROWS_WITH(ActivationReader(dir / "bad.h5"), ContainsSubstring("bad.h5: not an HDF5 file"));
  CHECK_THROWS_AS(parse_activation_dtype("int8"), StorageError);
}

// Writes a sample store and shard for the h5py/h5dump check (tests/storage/check_h5py.py).
TEST_CASE("[sample] write a sample store for external readers", "[.sample]") {
  const char* out = std::getenv("LINSWEEP_SAMPLE_STORE");
  REQUIRE(out != nullptr);
  std::filesystem::remove_all(out);
  std::filesystem::create_directories(out);
  ActivationOptions opt;
  opt.with_y = true;
  opt.with_delta = true;
  std::filesystem::create_directories(std::string(out) + "/store/activations/model-1");
  ActivationWriter w(std::string(out) + "/store/activations/model-1/layer1-gate.h5", 8, opt);
  std::vector<float> x(16), y(16), delta = {0.5f, -0.25f};  // h5py checks these exact values
  for (int i = 0; i < 16; ++i) x[i] = 0.5f * i, y[i] = -1.0f * i;
  std::vector<std::int32_t> ids = {5, 7}, pos = {0, 1};
  std::vector<std::int64_t> win = {0, 0};
  const std::vector<std::int32_t> next = {7, 9};
  w.append({.x = x.data(),
            .y = y.data(),
            .delta = delta.data(),
            .token_ids = ids.data(),
            .next_token_ids = next.data(),
            .window = win.data(),
            .position = pos.data(),
            .rows = 2});
  w.close();
  Store s = Store::open_write(std::string(out) + "/store", "context: 32\n");
  s.commit(sample_unit("unit-1", 1));
  s.commit(sample_unit("unit-2", 2));
  CHECK(s.rebuild_consolidated() == 2);
}
