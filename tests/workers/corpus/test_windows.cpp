// Splits, windows and shards (DESIGN §4).
#include <catch2/catch.hpp>

#include <numeric>

#include "common/errors.hpp"
#include "workers/corpus/windows.hpp"

using namespace linsweep;

TEST_CASE("windows are consecutive, non-overlapping, and drop the remainder") {
  std::vector<TokenId> stream(100);
  std::iota(stream.begin(), stream.end(), 0);
  const Windows w = make_windows(stream, {10, 35}, 8, "s");
  CHECK(w.count == 4);
  CHECK(w.ids.size() == 32);
  CHECK(w.ids.front() == 10);
  CHECK(w.ids.back() == 41);
  const Windows s = w.slice(1, 2);
  CHECK(s.ids.front() == 18);
  CHECK(s.count == 2);
}

TEST_CASE("shards cover every window once, in order, lower ranks taking the extra") {
  for (std::int64_t count : {1, 7, 10}) {
    for (int size : {1, 2, 3, 4}) {
      std::int64_t next = 0;
      for (int r = 0; r < size; ++r) {
        const std::int64_t b = shard_begin(count, r, size), e = shard_begin(count, r + 1, size);
        CHECK(b == next);
        CHECK(e - b >= count / size);
        CHECK(e - b <= count / size + 1);
        next = e;
      }
      CHECK(next == count);
    }
  }
}

TEST_CASE("bad_: splits past the end, empty splits and short contexts are refused") {
  std::vector<TokenId> stream(100, 1);
  CHECK_THROWS_WITH(make_windows(stream, {90, 20}, 8, "c.txt"), Catch::Contains("c.txt: split [90, 110) runs past the end of the stream (100 tokens)"));
  CHECK_THROWS_WITH(make_windows(stream, {0, 5}, 8, "c.txt"), Catch::Contains("holds no window"));
  CHECK_THROWS_WITH(make_windows(stream, {-1, 5}, 8, "c.txt"), Catch::Contains("start must be"));
  CHECK_THROWS_WITH(make_windows(stream, {0, 5}, 1, "c.txt"), Catch::Contains("shorter than 2"));
  CHECK_THROWS_AS(shard_windows(make_windows(stream, {0, 16}, 8, "c"), 2, 2), InputError);
}
