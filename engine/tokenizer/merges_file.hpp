// The lines of a GPT-2 merges file (merges.txt, vocab.bpe): one merge "left right" per line,
// after an optional "#version" first line.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace linsweep {

struct MergeLine {
  std::string_view text;  // "left right", without the line end
  std::string_view left, right;
  std::size_t line_no = 0;  // 1-based, for messages
};

struct MergesFile {
  std::string_view version;  // the "#version…" first line, or empty when the file has none
  std::vector<MergeLine> merges;
};

// The first `limit` merges of `text` (all by default), as views into `text`: empty lines are
// skipped and a '\r' before a line end is dropped. Throws InputError "<path>:<line>: a merge must
// be two symbols separated by one space". Reads no further than the limit-th merge, so a large
// file cut early costs only the lines read.
MergesFile parse_merges(std::string_view text, const std::string& path,
                        std::size_t limit = std::numeric_limits<std::size_t>::max());

}  // namespace linsweep
