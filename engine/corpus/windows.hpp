// Splits of a token stream cut into fixed-length windows (docs/methods.md, "Token stream, splits and windows").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/tokenizer/tokenizer.hpp"

namespace linsweep {

// The stream slice [start, start + tokens).
struct Split {
  std::int64_t start = 0;
  std::int64_t tokens = 0;
};

// `count` consecutive windows of `context` tokens, row-major in `ids`.
struct Windows {
  std::int64_t context = 0;
  std::int64_t count = 0;
  std::vector<TokenId> ids;  // count * context
  std::string source;        // the corpus the windows were cut from, for messages (may be empty)
  // Windows [first, first + n) as a new Windows (for batching and sharding).
  Windows slice(std::int64_t first, std::int64_t n) const;
};

// Cuts split of `stream` into non-overlapping windows of `context` tokens; a remainder shorter
// than `context` is dropped. Throws InputError("<what>: ...") when the split is negative,
// runs past the end of the stream, or holds no complete window, or context < 2.
Windows make_windows(const std::vector<TokenId>& stream, const Split& split, std::int64_t context,
                     const std::string& what);

// The contiguous block of windows that rank `rank` of `size` evaluates. The windows are cut
// into blocks of `align` (the last may be shorter) and each rank takes floor(blocks/size) or
// one more whole blocks, lower ranks first, so a rank may get none. With `align` equal to the
// batch size every batch a rank runs is a batch a single process would run, with the same
// windows: the rank layout then cannot change any window's forward pass (docs/numerics.md).
// Throws InputError on a bad rank, size or align.
Windows shard_windows(const Windows& w, int rank, int size, std::int64_t align = 1);
// First window index of `rank`'s shard (shard_begin(count, size, size, align) == count).
std::int64_t shard_begin(std::int64_t count, int rank, int size, std::int64_t align = 1);

}  // namespace linsweep
