// The parts of HF's tokenizer_config.json that change what a document's tokens are.
#pragma once

#include <optional>
#include <string>

namespace linsweep {

// Unset fields leave the tokenizer file's own choice.
struct TokenizerConfig {
  std::string path;  // the file, for messages; empty when the directory has none
  std::optional<bool> add_bos_token, add_eos_token;
  std::optional<std::string> bos_token, eos_token;  // token contents
};

// Reads `path` (a missing file gives an empty config). bos_token and eos_token may be a string,
// null, or an object with a string "content" (how transformers writes an AddedToken).
// Throws InputError naming the file and the key when a present key has another type, or on
// invalid JSON.
TokenizerConfig read_tokenizer_config(const std::string& path);

}  // namespace linsweep
