// Split and window arithmetic.
#include "engine/corpus/windows.hpp"

#include "common/errors.hpp"

namespace linsweep {

Windows Windows::slice(std::int64_t first, std::int64_t n) const {
  Windows w;
  w.context = context;
  w.count = n;
  w.source = source;
  w.ids.assign(ids.begin() + first * context, ids.begin() + (first + n) * context);
  return w;
}

Windows make_windows(const std::vector<TokenId>& stream, const Split& split, std::int64_t context,
                     const std::string& what) {
  const auto size = static_cast<std::int64_t>(stream.size());
  if (context < 2) throw InputError(what + ": context " + std::to_string(context) + " is shorter than 2 tokens");
  if (split.start < 0 || split.tokens <= 0) throw InputError(what + ": split start must be >= 0 and tokens > 0");
  if (split.start > size || split.tokens > size - split.start)
    throw InputError(what + ": split [" + std::to_string(split.start) + ", " +
                     std::to_string(split.start + split.tokens) + ") runs past the end of the stream (" +
                     std::to_string(size) + " tokens)");
  Windows w;
  w.context = context;
  w.count = split.tokens / context;
  if (w.count == 0)
    throw InputError(what + ": split of " + std::to_string(split.tokens) + " tokens holds no window of " +
                     std::to_string(context));
  w.ids.assign(stream.begin() + split.start, stream.begin() + split.start + w.count * context);
  w.source = what;
  return w;
}

std::int64_t shard_begin(std::int64_t count, int rank, int size, std::int64_t align) {
  if (size < 1 || rank < 0 || rank > size || align < 1)
    throw InputError("shard: rank " + std::to_string(rank) + " of " + std::to_string(size) + ", blocks of " +
                     std::to_string(align));
  const std::int64_t blocks = (count + align - 1) / align;
  const std::int64_t base = blocks / size, extra = blocks % size;
  return std::min(count, (rank * base + std::min<std::int64_t>(rank, extra)) * align);
}

Windows shard_windows(const Windows& w, int rank, int size, std::int64_t align) {
  if (rank >= size) throw InputError("shard: rank " + std::to_string(rank) + " of " + std::to_string(size));
  const std::int64_t b = shard_begin(w.count, rank, size, align), e = shard_begin(w.count, rank + 1, size, align);
  return w.slice(b, e - b);
}

}  // namespace linsweep
