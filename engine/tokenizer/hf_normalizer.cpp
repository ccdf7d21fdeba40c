// tokenizer.json normalizers, applied in order.
#include "engine/tokenizer/hf_normalizer.hpp"

#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "engine/tokenizer/hf_json.hpp"
#include "engine/tokenizer/regex_splitter.hpp"

namespace linsweep {
namespace {

std::string unicode_normalize(std::string_view text, const icu::Normalizer2* (*instance)(UErrorCode&)) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* n = instance(status);
  if (U_FAILURE(status)) throw InputError(std::string("ICU normalizer unavailable: ") + u_errorName(status));
  const icu::UnicodeString u =
      icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
  const icu::UnicodeString out = n->normalize(u, status);
  if (U_FAILURE(status)) throw InputError(std::string("Unicode normalization failed: ") + u_errorName(status));
  std::string s;
  out.toUTF8String(s);
  return s;
}

}  // namespace

HfNormalizer::HfNormalizer() = default;
HfNormalizer::~HfNormalizer() = default;
HfNormalizer::HfNormalizer(HfNormalizer&&) noexcept = default;
HfNormalizer& HfNormalizer::operator=(HfNormalizer&&) noexcept = default;

HfNormalizer HfNormalizer::from_json(const nlohmann::json& j, const std::string& path) {
  HfNormalizer n;
  if (!j.is_null()) n.add(j, path, 0);
  return n;
}

void HfNormalizer::add(const nlohmann::json& j, const std::string& path, int depth) {
  const std::string type = hf_json::type_of(j, path, "normalizer");
  if (depth > 8) throw InputError(path + ": normalizer: Sequence nested too deep");
  if (type == "Sequence") {
    for (const auto& step : hf_json::array_at(j, "normalizers", path, "normalizer")) add(step, path, depth + 1);
  } else if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    steps_.push_back(Step{type == "NFC"    ? Kind::kNfc
                          : type == "NFD"  ? Kind::kNfd
                          : type == "NFKC" ? Kind::kNfkc
                                           : Kind::kNfkd,
                          {},
                          {},
                          nullptr});
  } else if (type == "Prepend") {
    steps_.push_back(Step{Kind::kPrepend, hf_json::string_at(j, "prepend", path, "normalizer Prepend"), {}, nullptr});
  } else if (type == "Replace") {
    const hf_json::Pattern p = hf_json::pattern_at(j, path, "normalizer Replace");
    Step s{Kind::kReplace, p.text, hf_json::string_at(j, "content", path, "normalizer Replace"), nullptr};
    if (p.is_regex) s.regex = std::make_shared<const RegexSplitter>(p.text, false, path + ": normalizer Replace");
    if (!p.is_regex && p.text == " ") space_marker_ = s.content;
    steps_.push_back(std::move(s));
  } else {
    throw InputError(path + ": normalizer type '" + printable(type) +
                     "' is not supported (NFC, NFD, NFKC, NFKD, Prepend, Replace, Sequence)");
  }
}

std::string HfNormalizer::apply(std::string_view text) const {
  std::string s(text);
  for (const Step& step : steps_) {
    switch (step.kind) {
      case Kind::kNfc:
        s = unicode_normalize(s, icu::Normalizer2::getNFCInstance);
        break;
      case Kind::kNfd:
        s = unicode_normalize(s, icu::Normalizer2::getNFDInstance);
        break;
      case Kind::kNfkc:
        s = unicode_normalize(s, icu::Normalizer2::getNFKCInstance);
        break;
      case Kind::kNfkd:
        s = unicode_normalize(s, icu::Normalizer2::getNFKDInstance);
        break;
      case Kind::kPrepend:
        if (!s.empty()) s.insert(0, step.text);
        break;
      case Kind::kReplace: {
        std::vector<std::pair<std::size_t, std::size_t>> hits;
        if (step.regex) {
          hits = step.regex->find_all(s);
        } else if (!step.text.empty()) {
          for (std::size_t at = s.find(step.text); at != std::string::npos;
               at = s.find(step.text, at + step.text.size()))
            hits.emplace_back(at, at + step.text.size());
        }
        std::string out;
        out.reserve(s.size() + hits.size() * step.content.size());
        std::size_t prev = 0;
        for (const auto& [a, b] : hits) {
          out.append(s, prev, a - prev);
          out += step.content;
          prev = b;
        }
        out.append(s, prev, std::string::npos);
        s = std::move(out);
        break;
      }
    }
  }
  return s;
}

}  // namespace linsweep
