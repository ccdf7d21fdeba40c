// BPE tokenizers: HF tokenizer.json (byte-level like GPT-2, Pythia, Llama 3 and Qwen2, or over
// characters with byte fallback like HF's Llama 2, Mistral and Gemma files) and GPT-2's
// vocab.json + merges.txt.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/tokenizer/added_tokens.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "engine/tokenizer/tokenizer_config.hpp"

namespace linsweep {

class HfNormalizer;
class HfPreTokenizer;

// The largest vocab.json and merges.txt any loader reads (GPT-2's are 1.0 MB and 456 KB).
inline constexpr std::size_t kMaxVocabBytes = 64u << 20;
inline constexpr std::size_t kMaxMergesBytes = 64u << 20;

// Text goes through HF's stages in HF's order: added tokens are cut out of the raw text, each
// stretch between them normalized, normalized added tokens cut out, the rest pre-tokenized into
// words, and each word merged by BPE (lowest merge rank first). Ids come from the vocab, so a
// tokenizer whose merges are a prefix of GPT-2's gives GPT-2's ids for every token it has.
// Immutable after loading; encode() and decode() are thread safe.
class BpeTokenizer final : public Tokenizer {
 public:
  // GPT-2's files: byte-level BPE with GPT-2's split, <|endoftext|> the end-of-text token.
  // Throws InputError naming the file on anything malformed: sizes over the limits, invalid
  // JSON, a merge line that is not two symbols, a merge whose parts or result are not in the
  // vocab, a byte with no token.
  static BpeTokenizer from_vocab_merges(const std::string& vocab_path, const std::string& merges_path,
                                        const TokenizerConfig& config = {});
  // An HF tokenizer.json with a "BPE" model (tokenizer_config.json's choices in `config`).
  // Reads model (vocab; merges as "a b" strings or ["a", "b"] pairs; byte_fallback, fuse_unk,
  // unk_token, ignore_merges), normalizer, pre_tokenizer, added_tokens and post_processor
  // (null, ByteLevel, TemplateProcessing or a Sequence of those: its special tokens before $A
  // are the document prefix, those after it the suffix). Throws InputError naming the file and
  // the key on malformed input and on every type or option it does not implement (another
  // model type, dropout, a continuing_subword_prefix, an unknown normalizer, pre-tokenizer or
  // post-processor, an added token with lstrip, rstrip or single_word).
  static BpeTokenizer from_tokenizer_json(const std::string& path, const TokenizerConfig& config = {});

  BpeTokenizer(BpeTokenizer&&) noexcept;
  BpeTokenizer& operator=(BpeTokenizer&&) noexcept;
  ~BpeTokenizer() override;

  // Throws InputError naming `what` as Tokenizer::encode does, and for a character that has no
  // token when the model has neither byte fallback nor an unknown token.
  std::vector<TokenId> encode(std::string_view text, bool allow_special = false,
                              const std::string& what = "text") const override;
  std::string decode(const std::vector<TokenId>& ids) const override;
  std::size_t vocab_size() const noexcept override { return id_to_token_.size(); }
  TokenId id_limit() const noexcept override { return id_limit_; }
  std::string describe() const override;
  std::size_t merge_count() const noexcept { return merges_.size(); }

 private:
  struct Merge {
    std::int32_t rank;
    TokenId merged;
  };
  static std::uint64_t pair_key(TokenId a, TokenId b) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
  }
  BpeTokenizer();
  // vocab_source / merges_source: the files named in messages.
  void finish(const std::string& vocab_source, const std::string& merges_source,
              const std::vector<std::pair<std::string, std::string>>& merges);
  void encode_segment(std::string_view segment, bool at_start, bool allow_special, const std::string& what,
                      std::unordered_map<std::string, std::vector<TokenId>>& cache, std::vector<TokenId>* out) const;
  void initial_symbols(std::string_view word, const std::string& what, std::vector<TokenId>* sym) const;
  void bpe_word(std::string_view word, const std::string& what, std::vector<TokenId>* out) const;
  std::optional<TokenId> find_token(const std::string& content) const;

  std::unordered_map<std::string, TokenId> token_to_id_;  // the model's vocab
  std::unordered_map<TokenId, std::string> id_to_token_;  // vocab and added tokens
  std::unordered_map<TokenId, std::string> added_by_id_;  // added tokens: decoded as written
  std::unordered_map<std::uint64_t, Merge> merges_;
  std::unique_ptr<HfNormalizer> normalizer_;
  std::unique_ptr<HfPreTokenizer> pre_tokenizer_;
  AddedTokenMatcher raw_added_, normalized_added_;
  TokenId byte_ids_[256] = {};  // byte-level: the token of each byte
  bool byte_level_ = true;
  bool byte_fallback_ = false, fuse_unk_ = false, ignore_merges_ = false;
  std::optional<TokenId> unk_;
  std::string stripping_special_;  // a special token with lstrip/rstrip/single_word, if any
  std::string space_marker_;       // what a space became ("▁"), decoded back to a space
  TokenId id_limit_ = 0;
};

}  // namespace linsweep
