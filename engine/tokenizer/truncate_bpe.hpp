// GPT-2's byte-level BPE cut to its first K merges, with GPT-2's ids (the demo's small vocabulary).
#pragma once

#include <cstddef>
#include <string>

#include "engine/tokenizer/bpe_tokenizer.hpp"

namespace linsweep {

// What truncate_bpe wrote.
struct TruncatedBpe {
  std::size_t merges = 0;      // K
  std::size_t vocab_size = 0;  // 257 + K: bytes, merge results, <|endoftext|>
  TokenId eos_id = 0;          // 256 + K
};

// Reads `src_dir`/vocab.json + merges.txt (GPT-2's encoder.json + vocab.bpe) and writes
// `dest_dir` (created with its parents)/vocab.json + merges.txt holding the first `k` merges:
//  - vocab.json: the 256 byte tokens, the result of each of the first k merges, and
//    `<|endoftext|>` at id 256 + k, ordered by id; every other id is GPT-2's own;
//  - merges.txt: the source's `#version` line (or `#version: 0.2`) and the first k merges.
// Keeping GPT-2's ids only works because GPT-2 numbers its vocabulary in merge order; the
// source must show that: the byte tokens hold ids 0..255 and merge i (0-based) yields the
// token with id 256 + i, whose two parts have smaller ids. Any file that breaks this is
// refused rather than renumbered, since renumbered ids would no longer be GPT-2's.
// Throws InputError naming the file (and merges.txt line) on: a missing or oversized file
// (sizes checked before reading), invalid JSON or UTF-8, a malformed merge line, fewer than k
// merges, a broken numbering as above, or a destination directory it cannot create. Each file
// is written with atomic_write_text (common/atomic_file.hpp), so a reader never sees half a
// file; a failed write throws its DiskFullError or StorageError.
TruncatedBpe truncate_bpe(const std::string& src_dir, std::size_t k, const std::string& dest_dir);

}  // namespace linsweep
