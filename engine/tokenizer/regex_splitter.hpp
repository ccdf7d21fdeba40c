// A tokenizer.json split pattern (a Unicode regular expression) run over UTF-8 text with ICU.
#pragma once

#include <unicode/regex.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace linsweep {

// One compiled pattern. HF tokenizers compiles these patterns with Oniguruma, whose `\s` and `\S`
// are Unicode's White_Space and its complement; ICU's `\s` leaves out U+000B and U+0085, so both
// escapes are rewritten to the property before compiling. Everything else (\p{L}, \p{N}, (?i:…),
// lookahead, possessive and counted repeats) means the same in both engines.
// Immutable after construction; find_all() is thread safe (each call makes its own matcher).
class RegexSplitter {
 public:
  // Compiles `pattern` (a regex, or with `literal` a plain string). Throws InputError
  // "<what>: invalid regular expression (...)" when ICU rejects it.
  RegexSplitter(const std::string& pattern, bool literal, const std::string& what);
  ~RegexSplitter();
  RegexSplitter(RegexSplitter&&) noexcept;
  RegexSplitter& operator=(RegexSplitter&&) noexcept;

  // The byte ranges [begin, end) of the non-empty matches in valid UTF-8 `text`, left to right.
  std::vector<std::pair<std::size_t, std::size_t>> find_all(std::string_view text) const;

 private:
  std::unique_ptr<icu::RegexPattern> pattern_;
  std::string what_;
};

// `pattern` with `\s` and `\S` (outside `\\`) spelled as \p{White_Space} and \P{White_Space}.
std::string white_space_as_property(std::string_view pattern);

}  // namespace linsweep
