// A SentencePiece model file (tokenizer.model: Llama 2, Mistral, Gemma) through libsentencepiece.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/tokenizer.hpp"
#include "engine/tokenizer/tokenizer_config.hpp"

struct LinsweepSpmModel;

namespace linsweep {

// The largest tokenizer.model any loader reads (Llama 2's is 500 KB, Gemma's 4.2 MB).
inline constexpr std::size_t kMaxSentencePieceBytes = 64u << 20;

// Encodes exactly as the model file says (its own normalizer, the "▁" word-boundary mark, BPE or
// unigram, byte fallback), through the library SentencePiece itself ships, loaded as linsweep's
// SentencePiece module (sentencepiece_loader.hpp). A document gets the
// model's BOS (SentencePiece's bos_id; Llama 2, Mistral and Gemma prepend it) unless
// tokenizer_config.json turns it off; the end-of-text id is the model's eos_id. Immutable after
// loading; encode() and decode() are thread safe.
class SentencePieceTokenizer final : public Tokenizer {
 public:
  // Throws InputError "<path>: not a SentencePiece model (…)" when the library refuses the file,
  // and naming the file on a size over kMaxSentencePieceBytes or a tokenizer_config.json token
  // the model lacks; Error (exit 1) when the module cannot be loaded.
  static SentencePieceTokenizer from_model_file(const std::string& path, const TokenizerConfig& config = {});

  SentencePieceTokenizer(SentencePieceTokenizer&&) noexcept;
  SentencePieceTokenizer& operator=(SentencePieceTokenizer&&) noexcept;
  ~SentencePieceTokenizer() override;

  // With `allow_special`, control pieces written in the text (<s>, </s>, Gemma's
  // <start_of_turn>, …) become their ids and the text between them is encoded piece by piece;
  // otherwise SentencePiece encodes them as text, as it always does.
  std::vector<TokenId> encode(std::string_view text, bool allow_special = false,
                              const std::string& what = "text") const override;
  std::string decode(const std::vector<TokenId>& ids) const override;
  std::size_t vocab_size() const noexcept override;
  TokenId id_limit() const noexcept override { return static_cast<TokenId>(vocab_size()); }
  std::string describe() const override;

 private:
  struct ModelDeleter {
    void operator()(LinsweepSpmModel* m) const noexcept;
  };
  SentencePieceTokenizer() = default;
  void encode_plain(std::string_view text, const std::string& what, std::vector<TokenId>* out) const;

  std::unique_ptr<LinsweepSpmModel, ModelDeleter> sp_;     // owned by the module's allocator
  std::vector<std::string> pieces_;                        // by id, copied at load
  std::vector<int> flags_;                                 // kLinsweepSpm* by id
  std::vector<std::pair<std::string, TokenId>> controls_;  // control pieces, longest first
};

}  // namespace linsweep
