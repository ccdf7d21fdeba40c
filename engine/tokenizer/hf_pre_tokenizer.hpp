// The "pre_tokenizer" of an HF tokenizer.json: how normalized text is cut into words.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace linsweep {

class RegexSplitter;

// Implements Split (a Regex or String pattern; behavior Isolated, Removed, MergedWithPrevious,
// MergedWithNext or Contiguous; invert), ByteLevel (GPT-2's split when use_regex, which is the
// default; add_prefix_space), Metaspace (replacement, prepend_scheme always/first/never or the
// older add_prefix_space, split) and Sequence of those, ByteLevel last; JSON null cuts nothing.
// These cover GPT-2, Pythia, Llama 3, Qwen2 and HF's Llama 2 / Mistral / Gemma files.
// Immutable; split() is thread safe.
class HfPreTokenizer {
 public:
  HfPreTokenizer();
  ~HfPreTokenizer();
  HfPreTokenizer(HfPreTokenizer&&) noexcept;
  HfPreTokenizer& operator=(HfPreTokenizer&&) noexcept;

  // Throws InputError "<path>: pre_tokenizer type 'X' is not supported (…)" for other types,
  // naming the key for unsupported or mistyped fields.
  static HfPreTokenizer from_json(const nlohmann::json& j, const std::string& path);

  // Appends the words of one normalized segment (valid UTF-8) to `out`, in order. `at_start`:
  // the segment begins the whole text (Metaspace's prepend_scheme "first" asks).
  void split(std::string_view segment, bool at_start, std::vector<std::string>* out) const;
  // True when the last step is ByteLevel: words are bytes, and the model's symbols byte tokens.
  bool byte_level() const noexcept { return byte_level_; }
  // Metaspace's replacement for a space ("▁"), or "" without Metaspace.
  const std::string& space_marker() const noexcept { return space_marker_; }

 private:
  enum class Kind { kSplit, kByteLevel, kMetaspace };
  enum class Behavior { kIsolated, kRemoved, kMergedWithPrevious, kMergedWithNext, kContiguous };
  enum class Prepend { kAlways, kFirst, kNever };
  struct Step {
    Kind kind;
    std::shared_ptr<const RegexSplitter> regex;  // Split
    Behavior behavior = Behavior::kIsolated;     // Split
    bool invert = false;                         // Split
    bool add_prefix_space = false;               // ByteLevel
    bool use_regex = true;                       // ByteLevel
    std::string replacement;                     // Metaspace
    Prepend prepend = Prepend::kAlways;          // Metaspace
    bool split = true;                           // Metaspace
  };
  struct Word {
    std::string text;
    bool at_start;
  };
  void add(const nlohmann::json& j, const std::string& path, int depth);
  static void apply(const Step& step, std::vector<Word>& words);

  std::vector<Step> steps_;
  bool byte_level_ = false;
  std::string space_marker_;
};

}  // namespace linsweep
