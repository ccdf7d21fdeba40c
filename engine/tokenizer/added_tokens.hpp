// Tokens that a tokenizer matches in the text before anything else (HF's "added_tokens").
#pragma once

#include <array>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/tokenizer.hpp"

namespace linsweep {

struct AddedToken {
  std::string content;
  TokenId id = 0;
  bool special = false;  // matched only when the caller allows special tokens
};

// Finds added tokens in text, leftmost first and the longest at a position, as HF tokenizers'
// added vocabulary does. Immutable after construction; split() is thread safe.
class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  // `tokens` with non-empty contents.
  explicit AddedTokenMatcher(std::vector<AddedToken> tokens);

  bool empty() const noexcept { return tokens_.empty(); }
  // Calls `text_piece(piece, begin)` for each stretch between tokens (non-empty; `begin` is its
  // offset in `text`) and `token(id)` for each token, in text order. Special tokens count only
  // when `allow_special`.
  void split(std::string_view text, bool allow_special,
             const std::function<void(std::string_view, std::size_t)>& text_piece,
             const std::function<void(TokenId)>& token) const;

 private:
  std::vector<AddedToken> tokens_;                           // longest first
  std::array<std::vector<std::size_t>, 256> by_first_byte_;  // indices into tokens_
};

}  // namespace linsweep
