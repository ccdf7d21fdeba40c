// Hand-written equivalent of GPT-2's split regex (no regex engine: it is the hot loop of tokenizing).
#include "engine/tokenizer/pretokenizer.hpp"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

namespace linsweep {
namespace {

enum class Cls { kLetter, kNumber, kSpace, kOther };

Cls classify(UChar32 c) {
  if (c < 0x80) {  // fast path for ASCII
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return Cls::kLetter;
    if (c >= '0' && c <= '9') return Cls::kNumber;
    if (c == ' ' || (c >= 0x09 && c <= 0x0D)) return Cls::kSpace;
    return Cls::kOther;
  }
  if (u_isUWhiteSpace(c)) return Cls::kSpace;
  switch (u_charType(c)) {
    case U_UPPERCASE_LETTER:
    case U_LOWERCASE_LETTER:
    case U_TITLECASE_LETTER:
    case U_MODIFIER_LETTER:
    case U_OTHER_LETTER:
      return Cls::kLetter;
    case U_DECIMAL_DIGIT_NUMBER:
    case U_LETTER_NUMBER:
    case U_OTHER_NUMBER:
      return Cls::kNumber;
    default:
      return Cls::kOther;
  }
}

// A decoded view of the text: code point classes and byte offsets.
struct Decoded {
  std::vector<Cls> cls;
  std::vector<UChar32> cp;
  std::vector<std::size_t> off;  // off[i] = byte offset of code point i; off[n] = size
};

Decoded decode(std::string_view s) {
  Decoded d;
  d.cls.reserve(s.size());
  d.cp.reserve(s.size());
  d.off.reserve(s.size() + 1);
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const int32_t n = static_cast<int32_t>(s.size());
  int32_t i = 0;
  while (i < n) {
    d.off.push_back(static_cast<std::size_t>(i));
    UChar32 c;
    U8_NEXT(p, i, n, c);
    if (c < 0) c = 0xFFFD;
    d.cp.push_back(c);
    d.cls.push_back(classify(c));
  }
  d.off.push_back(s.size());
  return d;
}

}  // namespace

std::vector<std::string_view> gpt2_pretokenize(std::string_view text) {
  const Decoded d = decode(text);
  const std::size_t n = d.cp.size();
  std::vector<std::string_view> out;
  auto emit = [&](std::size_t a, std::size_t b) { out.push_back(text.substr(d.off[a], d.off[b] - d.off[a])); };
  auto run_of = [&](std::size_t j, Cls c) {
    while (j < n && d.cls[j] == c) ++j;
    return j;
  };
  std::size_t i = 0;
  while (i < n) {
    // 's 't 're 've 'm 'll 'd
    if (d.cp[i] == '\'' && i + 1 < n) {
      UChar32 a = d.cp[i + 1];
      UChar32 b = i + 2 < n ? d.cp[i + 2] : 0;
      std::size_t len = 0;
      if (a == 's' || a == 't' || a == 'm' || a == 'd') len = 2;
      if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) len = 3;
      if (len != 0) {
        emit(i, i + len);
        i += len;
        continue;
      }
    }
    // ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+'
    std::size_t j = (d.cp[i] == ' ' && i + 1 < n) ? i + 1 : i;
    if (d.cls[j] != Cls::kSpace) {
      std::size_t e = run_of(j, d.cls[j]);
      emit(i, e);
      i = e;
      continue;
    }
    // '\s+(?!\S)' then '\s+'
    std::size_t e = run_of(i, Cls::kSpace);
    if (e < n && e - i > 1) e -= 1;  // leave the last space to prefix the next word
    emit(i, e);
    i = e;
  }
  return out;
}

const std::array<std::string, 256>& byte_to_unicode() {
  static const std::array<std::string, 256> table = [] {
    std::array<std::string, 256> t;
    int extra = 0;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      UChar32 cp = printable ? b : 256 + extra++;
      char buf[4];
      int32_t len = 0;
      U8_APPEND_UNSAFE(reinterpret_cast<uint8_t*>(buf), len, cp);
      t[static_cast<std::size_t>(b)] = std::string(buf, static_cast<std::size_t>(len));
    }
    return t;
  }();
  return table;
}

}  // namespace linsweep
