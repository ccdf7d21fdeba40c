// A model directory's tokenizer, whatever files it has (docs/models.md, "Tokenizers").
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace linsweep {

struct TokenizerConfig;
using TokenId = std::int32_t;

// Text to token ids and back. Implementations: BpeTokenizer (tokenizer.json, or GPT-2's
// vocab.json + merges.txt) and SentencePieceTokenizer (tokenizer.model). Immutable after
// loading; every const member is thread safe.
class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // The ids of UTF-8 `text`, without the tokens a document gets around it (see
  // encode_document). Throws InputError("<what>: invalid UTF-8 at byte N") on invalid input.
  // With `allow_special`, special tokens written in the text (e.g. <|endoftext|>, <s>) become
  // their ids; otherwise they are encoded as ordinary text, as GPT-2's encoder does.
  virtual std::vector<TokenId> encode(std::string_view text, bool allow_special = false,
                                      const std::string& what = "text") const = 0;
  // The bytes the tokens stand for, concatenated: a byte-level token its bytes, a SentencePiece
  // piece its text with the word-boundary mark "▁" as a space (the leading space the model adds
  // included), a byte-fallback token <0xNN> its byte, a special token its own text.
  // Throws InputError on an id outside the vocabulary.
  virtual std::string decode(const std::vector<TokenId>& ids) const = 0;

  // Tokens in the vocabulary, and the largest id + 1 (ids may be sparse when a vocab is cut).
  virtual std::size_t vocab_size() const noexcept = 0;
  virtual TokenId id_limit() const noexcept = 0;
  // One line for `linsweep inspect`: the file and what it holds.
  virtual std::string describe() const = 0;

  // A document as the model reads it: document_prefix() (the BOS the model expects, if any),
  // encode(text), document_suffix() (an EOS, when the files ask for one).
  std::vector<TokenId> encode_document(std::string_view text, const std::string& what) const;
  const std::vector<TokenId>& document_prefix() const noexcept { return prefix_; }
  const std::vector<TokenId>& document_suffix() const noexcept { return suffix_; }
  // The end-of-text id that joins documents in a corpus stream, if the tokenizer has one.
  std::optional<TokenId> eos_id() const noexcept { return eos_; }
  // The file the tokenizer was read from (DIR/tokenizer.json, DIR/tokenizer.model, DIR/vocab.json).
  const std::string& source() const noexcept { return source_; }

 protected:
  // What the tokenizer file itself says a document gets, and its end-of-text id.
  struct OwnSpecials {
    std::vector<TokenId> prefix, suffix;
    std::optional<TokenId> eos;
  };
  // Sets prefix_, suffix_ and eos_ from `own`, overridden by tokenizer_config.json's
  // add_bos_token / add_eos_token (with bos_token / eos_token naming the token, looked up by
  // `find`); `config` fills in the EOS only where `own` has none. Throws InputError naming
  // tokenizer_config.json when a token it asks for is not in the vocabulary.
  void set_specials(const OwnSpecials& own, const TokenizerConfig& config,
                    const std::function<std::optional<TokenId>(const std::string&)>& find);

  std::vector<TokenId> prefix_, suffix_;
  std::optional<TokenId> eos_;
  std::string source_;
};

// The one place that decides which files of a model directory make its tokenizer:
// `tokenizer.json` first, then SentencePiece's `tokenizer.model`, then GPT-2's
// `vocab.json` + `merges.txt`; `tokenizer_config.json`, where present, may turn the BOS and EOS
// a document gets on or off (add_bos_token, add_eos_token) and name them (bos_token, eos_token).
// Throws InputError naming the file and the key on anything it cannot read or does not
// implement (never silently ignored), or naming `dir` when it holds no tokenizer.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& dir);

}  // namespace linsweep
