// tokenizer.json pre-tokenizers, each applied to every word the previous one made.
#include "engine/tokenizer/hf_pre_tokenizer.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "engine/tokenizer/hf_json.hpp"
#include "engine/tokenizer/pretokenizer.hpp"
#include "engine/tokenizer/regex_splitter.hpp"

namespace linsweep {
namespace {

struct SplitSegment {
  std::size_t begin, end;
  bool is_match;
};

// The pieces of `s` between and at `matches`, covering all of it.
std::vector<SplitSegment> split_segments(std::size_t size,
                                         const std::vector<std::pair<std::size_t, std::size_t>>& matches, bool invert) {
  std::vector<SplitSegment> out;
  std::size_t prev = 0;
  for (const auto& [a, b] : matches) {
    if (a > prev) out.push_back({prev, a, invert});
    out.push_back({a, b, !invert});
    prev = b;
  }
  if (prev < size) out.push_back({prev, size, invert});
  return out;
}

}  // namespace

HfPreTokenizer::HfPreTokenizer() = default;
HfPreTokenizer::~HfPreTokenizer() = default;
HfPreTokenizer::HfPreTokenizer(HfPreTokenizer&&) noexcept = default;
HfPreTokenizer& HfPreTokenizer::operator=(HfPreTokenizer&&) noexcept = default;

HfPreTokenizer HfPreTokenizer::from_json(const nlohmann::json& j, const std::string& path) {
  HfPreTokenizer p;
  if (!j.is_null()) p.add(j, path, 0);
  for (std::size_t i = 0; i + 1 < p.steps_.size(); ++i)
    if (p.steps_[i].kind == Kind::kByteLevel)
      throw InputError(path + ": pre_tokenizer: ByteLevel before another pre-tokenizer is not supported");
  p.byte_level_ = !p.steps_.empty() && p.steps_.back().kind == Kind::kByteLevel;
  return p;
}

void HfPreTokenizer::add(const nlohmann::json& j, const std::string& path, int depth) {
  const std::string type = hf_json::type_of(j, path, "pre_tokenizer");
  if (depth > 8) throw InputError(path + ": pre_tokenizer: Sequence nested too deep");
  const std::string where = "pre_tokenizer " + type;
  Step s{};
  if (type == "Sequence") {
    for (const auto& step : hf_json::array_at(j, "pretokenizers", path, where)) add(step, path, depth + 1);
    return;
  } else if (type == "Split") {
    s.kind = Kind::kSplit;
    const hf_json::Pattern p = hf_json::pattern_at(j, path, where);
    s.regex = std::make_shared<const RegexSplitter>(p.text, !p.is_regex, path + ": " + where + " pattern");
    const std::string behavior = hf_json::string_at(j, "behavior", path, where);
    const std::pair<const char*, Behavior> known[] = {{"Isolated", Behavior::kIsolated},
                                                      {"Removed", Behavior::kRemoved},
                                                      {"MergedWithPrevious", Behavior::kMergedWithPrevious},
                                                      {"MergedWithNext", Behavior::kMergedWithNext},
                                                      {"Contiguous", Behavior::kContiguous}};
    bool found = false;
    for (const auto& [name, b] : known) {
      if (behavior == name) {
        s.behavior = b;
        found = true;
      }
    }
    if (!found) throw InputError(path + ": " + where + ": behavior '" + printable(behavior) + "' is not supported");
    s.invert = hf_json::bool_or(j, "invert", false, path, where);
  } else if (type == "ByteLevel") {
    s.kind = Kind::kByteLevel;
    s.add_prefix_space = hf_json::bool_or(j, "add_prefix_space", false, path, where);
    s.use_regex = hf_json::bool_or(j, "use_regex", true, path, where);
  } else if (type == "Metaspace") {
    s.kind = Kind::kMetaspace;
    s.replacement = hf_json::string_at(j, "replacement", path, where);
    if (s.replacement.empty()) throw InputError(path + ": " + where + ": 'replacement' is empty");
    s.split = hf_json::bool_or(j, "split", true, path, where);
    if (j.contains("prepend_scheme") && !j["prepend_scheme"].is_null()) {
      const std::string scheme = hf_json::string_at(j, "prepend_scheme", path, where);
      if (scheme == "always")
        s.prepend = Prepend::kAlways;
      else if (scheme == "first")
        s.prepend = Prepend::kFirst;
      else if (scheme == "never")
        s.prepend = Prepend::kNever;
      else
        throw InputError(path + ": " + where + ": prepend_scheme '" + printable(scheme) +
                         "' is not always, first or never");
    } else {
      s.prepend = hf_json::bool_or(j, "add_prefix_space", true, path, where) ? Prepend::kAlways : Prepend::kNever;
    }
    space_marker_ = s.replacement;
  } else {
    throw InputError(path + ": pre_tokenizer type '" + printable(type) +
                     "' is not supported (Split, ByteLevel, Metaspace, Sequence)");
  }
  steps_.push_back(std::move(s));
}

void HfPreTokenizer::split(std::string_view segment, bool at_start, std::vector<std::string>* out) const {
  std::vector<Word> words{Word{std::string(segment), at_start}};
  for (const Step& step : steps_) apply(step, words);
  for (Word& w : words)
    if (!w.text.empty()) out->push_back(std::move(w.text));
}

void HfPreTokenizer::apply(const Step& step, std::vector<Word>& words) {
  std::vector<Word> next;
  next.reserve(words.size());
  auto emit = [&](const Word& w, std::size_t a, std::size_t b) {
    if (b > a) next.push_back(Word{w.text.substr(a, b - a), w.at_start && a == 0});
  };
  for (Word& w : words) {
    switch (step.kind) {
      case Kind::kByteLevel: {
        if (step.add_prefix_space && (w.text.empty() || w.text[0] != ' ')) w.text.insert(0, 1, ' ');
        if (!step.use_regex) {
          next.push_back(std::move(w));
          break;
        }
        for (std::string_view piece : gpt2_pretokenize(w.text)) {
          const auto a = static_cast<std::size_t>(piece.data() - w.text.data());
          emit(w, a, a + piece.size());
        }
        break;
      }
      case Kind::kMetaspace: {
        std::string s;
        s.reserve(w.text.size() + step.replacement.size());
        for (char c : w.text) {
          if (c == ' ')
            s += step.replacement;
          else
            s.push_back(c);
        }
        const bool starts = s.compare(0, step.replacement.size(), step.replacement) == 0;
        if (!starts && (step.prepend == Prepend::kAlways || (step.prepend == Prepend::kFirst && w.at_start)))
          s.insert(0, step.replacement);
        const Word m{std::move(s), w.at_start};
        if (!step.split) {
          next.push_back(m);
          break;
        }
        std::vector<std::pair<std::size_t, std::size_t>> hits;
        for (std::size_t at = m.text.find(step.replacement); at != std::string::npos;
             at = m.text.find(step.replacement, at + step.replacement.size()))
          hits.emplace_back(at, at + step.replacement.size());
        std::vector<SplitSegment> segs = split_segments(m.text.size(), hits, false);
        // MergedWithNext: a mark joins the word after it.
        std::vector<SplitSegment> merged;
        bool previous_match = false;
        for (auto it = segs.rbegin(); it != segs.rend(); ++it) {
          if (it->is_match && !previous_match && !merged.empty())
            merged.back().begin = it->begin;
          else
            merged.push_back(*it);
          previous_match = it->is_match;
        }
        for (auto it = merged.rbegin(); it != merged.rend(); ++it) emit(m, it->begin, it->end);
        break;
      }
      case Kind::kSplit: {
        const std::vector<SplitSegment> segs = split_segments(w.text.size(), step.regex->find_all(w.text), step.invert);
        std::vector<SplitSegment> kept;
        bool previous_match = false;
        switch (step.behavior) {
          case Behavior::kIsolated:
            kept = segs;
            break;
          case Behavior::kRemoved:
            for (const SplitSegment& s : segs)
              if (!s.is_match) kept.push_back(s);
            break;
          case Behavior::kMergedWithPrevious:
            for (const SplitSegment& s : segs) {
              if (s.is_match && !previous_match && !kept.empty())
                kept.back().end = s.end;
              else
                kept.push_back(s);
              previous_match = s.is_match;
            }
            break;
          case Behavior::kMergedWithNext:
            for (auto it = segs.rbegin(); it != segs.rend(); ++it) {
              if (it->is_match && !previous_match && !kept.empty())
                kept.back().begin = it->begin;
              else
                kept.push_back(*it);
              previous_match = it->is_match;
            }
            std::reverse(kept.begin(), kept.end());
            break;
          case Behavior::kContiguous:
            for (std::size_t i = 0; i < segs.size(); ++i) {
              if (i > 0 && segs[i].is_match == previous_match)
                kept.back().end = segs[i].end;
              else
                kept.push_back(segs[i]);
              previous_match = segs[i].is_match;
            }
            break;
        }
        for (const SplitSegment& s : kept) emit(w, s.begin, s.end);
        break;
      }
    }
  }
  words = std::move(next);
}

}  // namespace linsweep
