// The "normalizer" of an HF tokenizer.json: what the text becomes before it is split.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace linsweep {

class RegexSplitter;

// Implements the types today's models use: NFC, NFD, NFKC, NFKD (ICU), Prepend (Llama 2's
// "▁"), Replace (a String or Regex pattern with literal content, e.g. " " -> "▁"), and
// Sequence of those; JSON null is no normalizer. Immutable; apply() is thread safe.
class HfNormalizer {
 public:
  HfNormalizer();
  ~HfNormalizer();
  HfNormalizer(HfNormalizer&&) noexcept;
  HfNormalizer& operator=(HfNormalizer&&) noexcept;

  // Throws InputError "<path>: normalizer type 'X' is not supported (…)" for any other type,
  // and names the key for a missing or mistyped field.
  static HfNormalizer from_json(const nlohmann::json& j, const std::string& path);

  bool empty() const noexcept { return steps_.empty(); }
  // `text` (valid UTF-8) normalized.
  std::string apply(std::string_view text) const;
  // What a space becomes (the content of a Replace of " "), or "" when spaces stay.
  const std::string& space_marker() const noexcept { return space_marker_; }

 private:
  enum class Kind { kNfc, kNfd, kNfkc, kNfkd, kPrepend, kReplace };
  struct Step {
    Kind kind;
    std::string text;                            // Prepend: the prefix; Replace: the literal pattern
    std::string content;                         // Replace: what a match becomes
    std::shared_ptr<const RegexSplitter> regex;  // Replace with a Regex pattern
  };
  void add(const nlohmann::json& j, const std::string& path, int depth);

  std::vector<Step> steps_;
  std::string space_marker_;
};

}  // namespace linsweep
