// Leftmost-longest matching of added tokens, tried only where a token's first byte occurs.
#include "engine/tokenizer/added_tokens.hpp"

#include <algorithm>

namespace linsweep {

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> tokens) : tokens_(std::move(tokens)) {
  std::stable_sort(tokens_.begin(), tokens_.end(),
                   [](const AddedToken& a, const AddedToken& b) { return a.content.size() > b.content.size(); });
  for (std::size_t i = 0; i < tokens_.size(); ++i)
    by_first_byte_[static_cast<unsigned char>(tokens_[i].content[0])].push_back(i);
}

void AddedTokenMatcher::split(std::string_view text, bool allow_special,
                              const std::function<void(std::string_view, std::size_t)>& text_piece,
                              const std::function<void(TokenId)>& token) const {
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size();) {
    const AddedToken* hit = nullptr;
    for (std::size_t k : by_first_byte_[static_cast<unsigned char>(text[i])]) {
      const AddedToken& t = tokens_[k];
      if ((allow_special || !t.special) && text.compare(i, t.content.size(), t.content) == 0) {
        hit = &t;
        break;
      }
    }
    if (hit == nullptr) {
      ++i;
      continue;
    }
    if (i > start) text_piece(text.substr(start, i - start), start);
    token(hit->id);
    i += hit->content.size();
    start = i;
  }
  if (start < text.size()) text_piece(text.substr(start), start);
}

}  // namespace linsweep
