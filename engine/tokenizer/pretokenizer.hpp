// GPT-2's byte-level pre-tokenization: the split regex and the byte-to-unicode table.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace linsweep {

// Splits valid UTF-8 `text` exactly as GPT-2's pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// does, with Unicode letter, number and White_Space properties from ICU. Returns views into
// `text` (valid while `text` is). Precondition: `text` is valid UTF-8. Thread safe.
std::vector<std::string_view> gpt2_pretokenize(std::string_view text);

// GPT-2's reversible map from each byte to a printable code point, as UTF-8 strings
// (byte 0x20 -> "Ġ", ...). Thread safe (a constant built once).
const std::array<std::string, 256>& byte_to_unicode();

}  // namespace linsweep
