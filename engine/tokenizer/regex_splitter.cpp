// ICU regex over UTF-8 through UText, so that match positions are byte offsets.
#include "engine/tokenizer/regex_splitter.hpp"

#include <unicode/regex.h>
#include <unicode/utext.h>

#include "common/errors.hpp"

namespace linsweep {
namespace {

// utext_close on scope exit.
struct UTextCloser {
  void operator()(UText* t) const noexcept { utext_close(t); }
};

}  // namespace

std::string white_space_as_property(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size() + 32);
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '\\' || i + 1 == pattern.size()) {
      out.push_back(pattern[i]);
      continue;
    }
    const char next = pattern[++i];
    if (next == 's')
      out += "\\p{White_Space}";
    else if (next == 'S')
      out += "\\P{White_Space}";
    else
      out.append({'\\', next});
  }
  return out;
}

RegexSplitter::RegexSplitter(const std::string& pattern, bool literal, const std::string& what) : what_(what) {
  UErrorCode status = U_ZERO_ERROR;
  UParseError parse_error{};
  const std::string source = literal ? pattern : white_space_as_property(pattern);
  pattern_.reset(icu::RegexPattern::compile(icu::UnicodeString::fromUTF8(source), literal ? UREGEX_LITERAL : 0,
                                            parse_error, status));
  if (U_FAILURE(status) || !pattern_)
    throw InputError(what + ": invalid regular expression (" + u_errorName(status) + " at character " +
                     std::to_string(parse_error.offset) + ")");
}

RegexSplitter::~RegexSplitter() = default;
RegexSplitter::RegexSplitter(RegexSplitter&&) noexcept = default;
RegexSplitter& RegexSplitter::operator=(RegexSplitter&&) noexcept = default;

std::vector<std::pair<std::size_t, std::size_t>> RegexSplitter::find_all(std::string_view text) const {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  UErrorCode status = U_ZERO_ERROR;
  std::unique_ptr<UText, UTextCloser> ut(
      utext_openUTF8(nullptr, text.data(), static_cast<int64_t>(text.size()), &status));
  if (U_FAILURE(status)) throw InputError(what_ + ": ICU could not read the text (" + u_errorName(status) + ")");
  std::unique_ptr<icu::RegexMatcher> m(pattern_->matcher(status));
  if (U_FAILURE(status) || !m) throw InputError(what_ + ": ICU matcher unavailable (" + u_errorName(status) + ")");
  m->reset(ut.get());
  // A pattern that backtracks without end (one from a damaged file) stops with
  // U_REGEX_TIME_OUT after roughly this many milliseconds of one match, instead of hanging.
  m->setTimeLimit(2000, status);
  while (m->find(status) && U_SUCCESS(status)) {
    const int64_t a = m->start64(status), b = m->end64(status);
    if (U_FAILURE(status)) break;
    if (b > a) out.emplace_back(static_cast<std::size_t>(a), static_cast<std::size_t>(b));
  }
  if (U_FAILURE(status))
    throw InputError(what_ + ": regular expression failed on the text (" + u_errorName(status) + ")");
  return out;
}

}  // namespace linsweep
