// Splits, windows and shards (docs/methods.md, "Token stream, splits and windows").
#include <numeric>

#include "common/errors.hpp"
#include "engine/corpus/windows.hpp"
#include "support/catch.hpp"

using namespace linsweep;
using Catch::Matchers::ContainsSubstring;

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

TEST_CASE("aligned shards hand out whole batches: every batch boundary of one process is kept") {
  for (std::int64_t count : {1, 7, 10, 33}) {
    for (int size : {1, 2, 3, 5}) {
      for (std::int64_t align : {1, 4, 8}) {
        std::int64_t next = 0;
        const std::int64_t blocks = (count + align - 1) / align;
        for (int r = 0; r < size; ++r) {
          const std::int64_t b = shard_begin(count, r, size, align), e = shard_begin(count, r + 1, size, align);
          CHECK(b == next);
          CHECK((b % align == 0 || b == count));
          const std::int64_t mine = (e - b + align - 1) / align;  // blocks, the last one may be short
          CHECK(mine >= blocks / size);
          CHECK(mine <= blocks / size + 1);
          next = e;
        }
        CHECK(next == count);
      }
    }
  }
  std::vector<TokenId> stream(200);
  for (std::size_t i = 0; i < stream.size(); ++i) stream[i] = static_cast<TokenId>(i);
  const Windows w = make_windows(stream, {0, 200}, 8, "c");  // 25 windows: batches of 8 → 8, 8, 8, 1
  CHECK(shard_windows(w, 0, 2, 8).count == 16);
  CHECK(shard_windows(w, 1, 2, 8).count == 9);
  CHECK(shard_windows(w, 1, 2, 8).ids.front() == 16 * 8);
  CHECK(shard_windows(w, 3, 4, 8).count == 1);
  CHECK(shard_windows(w, 2, 5, 8).count == 8);
  CHECK(shard_windows(w, 4, 5, 8).count == 0);  // more ranks than batches: some get none
}

TEST_CASE("bad_: splits past the end, empty splits and short contexts are refused") {
  std::vector<TokenId> stream(100, 1);
  CHECK_THROWS_WITH(make_windows(stream, {90, 20}, 8, "c.txt"),
                    ContainsSubstring("c.txt: split [90, 110) runs past the end of the stream (100 tokens)"));
  CHECK_THROWS_WITH(make_windows(stream, {0, 5}, 8, "c.txt"), ContainsSubstring("holds no window"));
  CHECK_THROWS_WITH(make_windows(stream, {-1, 5}, 8, "c.txt"), ContainsSubstring("start must be"));
  CHECK_THROWS_WITH(make_windows(stream, {0, 5}, 1, "c.txt"), ContainsSubstring("shorter than 2"));
  CHECK_THROWS_AS(shard_windows(make_windows(stream, {0, 16}, 8, "c"), 2, 2), InputError);
  CHECK_THROWS_AS(shard_windows(make_windows(stream, {0, 16}, 8, "c"), 0, 2, 0), InputError);
}
