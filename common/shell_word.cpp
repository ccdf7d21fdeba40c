// Shell words for printed commands.
#include "common/shell_word.hpp"

namespace linsweep {

std::string shell_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string shell_word(std::string_view s) {
  const bool plain = !s.empty() && s.find_first_not_of(
                                       "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                       "0123456789_./-+=:,@%") == std::string_view::npos;
  return plain ? std::string(s) : shell_quote(s);
}

}  // namespace linsweep
