// GPT-2 byte-level BPE tokenizer loaded from vocab.json + merges.txt or tokenizer.json.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace linsweep {

using TokenId = std::int32_t;

// The largest vocab.json and merges.txt any loader reads (GPT-2's are 1.0 MB and 456 KB).
inline constexpr std::size_t kMaxVocabBytes = 64u << 20;
inline constexpr std::size_t kMaxMergesBytes = 64u << 20;

// Byte-level BPE with GPT-2's pre-tokenization and merge order. Ids come from the vocab, so
// a tokenizer whose merges are a prefix of GPT-2's gives GPT-2's ids for every token it has.
// Immutable after loading; encode() and decode() are thread safe.
class BpeTokenizer {
 public:
  // Loads from a model directory: `tokenizer.json` if present, else `vocab.json` +
  // `merges.txt`. Throws InputError naming the file on anything malformed: sizes over the
  // limits, invalid JSON, a merge line that is not two symbols, a merge whose parts or
  // result are not in the vocab, a byte with no token, a non-BPE or non-byte-level model.
  static BpeTokenizer from_directory(const std::string& dir);
  static BpeTokenizer from_vocab_merges(const std::string& vocab_path, const std::string& merges_path);
  static BpeTokenizer from_tokenizer_json(const std::string& path);

  // Encodes UTF-8 text. Throws InputError("<what>: invalid UTF-8 at byte N") on invalid
  // input. With `allow_special`, occurrences of added special tokens (e.g. <|endoftext|>)
  // become their ids; otherwise they are encoded as ordinary text, as GPT-2's encoder does.
  std::vector<TokenId> encode(std::string_view text, bool allow_special = false,
                              const std::string& what = "text") const;
  // Concatenated bytes of the tokens; throws InputError on an id outside the vocabulary.
  std::string decode(const std::vector<TokenId>& ids) const;

  std::size_t vocab_size() const noexcept { return id_to_token_.size(); }
  std::size_t merge_count() const noexcept { return merges_.size(); }
  // The end-of-text id (`<|endoftext|>`), if the vocabulary or added tokens have one.
  std::optional<TokenId> eos_id() const noexcept { return eos_; }
  // Largest id + 1 (ids may be sparse when a vocab is cut).
  TokenId id_limit() const noexcept { return id_limit_; }

 private:
  struct Merge {
    std::int32_t rank;
    TokenId merged;
  };
  static std::uint64_t pair_key(TokenId a, TokenId b) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
  }
  // vocab_source / merges_source: the files named in messages (the same tokenizer.json, or
  // vocab.json and merges.txt).
  void finish(const std::string& vocab_source, const std::string& merges_source,
              const std::vector<std::pair<std::string, std::string>>& merges);
  void bpe_word(std::string_view word, std::vector<TokenId>* out) const;

  std::unordered_map<std::string, TokenId> token_to_id_;
  std::unordered_map<TokenId, std::string> id_to_token_;
  std::unordered_map<std::uint64_t, Merge> merges_;
  std::vector<std::pair<std::string, TokenId>> specials_;
  TokenId byte_ids_[256] = {};
  std::optional<TokenId> eos_;
  TokenId id_limit_ = 0;
  bool nfc_ = false;
  bool add_prefix_space_ = false;
};

}  // namespace linsweep
