// BpeTokenizer::from_tokenizer_json: the model, added tokens and post-processor of an HF
// tokenizer.json (normalizer and pre-tokenizer: hf_normalizer.cpp, hf_pre_tokenizer.cpp).
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "engine/tokenizer/bpe_tokenizer.hpp"
#include "engine/tokenizer/hf_json.hpp"
#include "engine/tokenizer/hf_normalizer.hpp"
#include "engine/tokenizer/hf_pre_tokenizer.hpp"

namespace linsweep {
namespace {

constexpr std::size_t kMaxTokenizerJsonBytes = 256u << 20;

std::vector<std::pair<std::string, std::string>> read_json_merges(const nlohmann::json& model,
                                                                  const std::string& path) {
  std::vector<std::pair<std::string, std::string>> merges;
  if (!model.contains("merges") || model["merges"].is_null()) return merges;
  if (!model["merges"].is_array()) throw InputError(path + ": model: 'merges' is not an array");
  std::size_t k = 0;
  for (const auto& m : model["merges"]) {
    if (m.is_string()) {
      const auto s = m.get<std::string>();
      const std::size_t sp = s.find(' ');
      if (sp == 0 || sp == std::string::npos || sp + 1 >= s.size() || s.find(' ', sp + 1) != std::string::npos)
        throw InputError(path + ": merge " + std::to_string(k) + " is not two symbols separated by one space");
      merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else {
      throw InputError(path + ": merge " + std::to_string(k) + " is neither \"a b\" nor [\"a\", \"b\"]");
    }
    ++k;
  }
  return merges;
}

// Refuses model options that change the ids in ways this tokenizer does not implement.
void check_bpe_options(const nlohmann::json& model, const std::string& path) {
  if (model.contains("type") && model["type"] != "BPE") {
    const std::string type = model["type"].is_string() ? model["type"].get<std::string>() : model["type"].dump();
    throw InputError(path + ": model type '" + printable(type) + "' is not supported (BPE)");
  }
  if (model.contains("dropout") && !model["dropout"].is_null() &&
      !(model["dropout"].is_number() && model["dropout"].get<double>() == 0.0))
    throw InputError(path + ": model: 'dropout' is not supported (random merges)");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (model.contains(key) && !model[key].is_null() &&
        !(model[key].is_string() && model[key].get<std::string>().empty()))
      throw InputError(path + ": model: '" + key + "' is not supported");
  }
}

struct JsonAddedToken {
  AddedToken token;
  bool normalized = false;
  bool strips = false;  // lstrip, rstrip or single_word
};

std::vector<JsonAddedToken> read_added_tokens(const nlohmann::json& j, const std::string& path) {
  std::vector<JsonAddedToken> out;
  if (!j.contains("added_tokens") || j["added_tokens"].is_null()) return out;
  if (!j["added_tokens"].is_array()) throw InputError(path + ": 'added_tokens' is not an array");
  for (const auto& a : j["added_tokens"]) {
    if (!a.is_object() || !a.contains("id") || !a.contains("content") || !a["id"].is_number_integer() ||
        !a["content"].is_string())
      throw InputError(path + ": malformed entry in added_tokens");
    const auto id = a["id"].get<std::int64_t>();
    if (id < 0 || id >= (1 << 30)) throw InputError(path + ": added token id out of range");
    JsonAddedToken t;
    t.token = AddedToken{a["content"].get<std::string>(), static_cast<TokenId>(id),
                         hf_json::bool_or(a, "special", false, path, "added_tokens")};
    if (t.token.content.empty()) throw InputError(path + ": empty added token");
    t.normalized = hf_json::bool_or(a, "normalized", !t.token.special, path, "added_tokens");
    for (const char* key : {"lstrip", "rstrip", "single_word"}) {
      if (!hf_json::bool_or(a, key, false, path, "added_tokens")) continue;
      // A special token is matched only on request (--allow-special); an ordinary one always.
      if (!t.token.special)
        throw InputError(path + ": added token '" + printable(t.token.content) + "': '" + key + "' is not supported");
      t.strips = true;
    }
    out.push_back(std::move(t));
  }
  return out;
}

// The special tokens a TemplateProcessing puts before and after the text ($A).
void read_template(const nlohmann::json& p, const std::string& path, std::vector<TokenId>* prefix,
                   std::vector<TokenId>* suffix) {
  const std::string where = "post_processor TemplateProcessing";
  const auto& single = hf_json::array_at(p, "single", path, where);
  if (!p.contains("special_tokens") || !p["special_tokens"].is_object())
    throw InputError(path + ": " + where + ": 'special_tokens' is missing or not an object");
  bool seen_text = false;
  for (const auto& item : single) {
    if (item.is_object() && item.contains("Sequence")) {
      if (seen_text) throw InputError(path + ": " + where + ": 'single' holds more than one sequence");
      seen_text = true;
      continue;
    }
    if (!item.is_object() || !item.contains("SpecialToken") || !item["SpecialToken"].is_object())
      throw InputError(path + ": " + where + ": an item of 'single' is neither SpecialToken nor Sequence");
    const std::string name = hf_json::string_at(item["SpecialToken"], "id", path, where + " SpecialToken");
    const auto& specials = p["special_tokens"];
    if (!specials.contains(name) || !specials[name].is_object())
      throw InputError(path + ": " + where + ": special token '" + printable(name) + "' is not in 'special_tokens'");
    for (const auto& id : hf_json::array_at(specials[name], "ids", path, where + " special_tokens")) {
      if (!id.is_number_integer() || id.get<std::int64_t>() < 0 || id.get<std::int64_t>() >= (1 << 30))
        throw InputError(path + ": " + where + ": an id of '" + printable(name) + "' is not a valid id");
      (seen_text ? suffix : prefix)->push_back(static_cast<TokenId>(id.get<std::int64_t>()));
    }
  }
  if (!seen_text) throw InputError(path + ": " + where + ": 'single' has no sequence ($A)");
}

void read_post_processor(const nlohmann::json& p, const std::string& path, int depth, std::vector<TokenId>* prefix,
                         std::vector<TokenId>* suffix) {
  if (p.is_null()) return;
  if (depth > 8) throw InputError(path + ": post_processor: Sequence nested too deep");
  const std::string type = hf_json::type_of(p, path, "post_processor");
  if (type == "ByteLevel") return;  // offsets only
  if (type == "TemplateProcessing") {
    if (!prefix->empty() || !suffix->empty())
      throw InputError(path + ": post_processor: more than one TemplateProcessing");
    read_template(p, path, prefix, suffix);
  } else if (type == "Sequence") {
    for (const auto& step : hf_json::array_at(p, "processors", path, "post_processor Sequence"))
      read_post_processor(step, path, depth + 1, prefix, suffix);
  } else {
    throw InputError(path + ": post_processor type '" + printable(type) +
                     "' is not supported (ByteLevel, TemplateProcessing, Sequence)");
  }
}

}  // namespace

BpeTokenizer BpeTokenizer::from_tokenizer_json(const std::string& path, const TokenizerConfig& config) {
  const nlohmann::json j = read_json_file(path, kMaxTokenizerJsonBytes);
  if (!j.is_object() || !j.contains("model") || !j["model"].is_object()) throw InputError(path + ": no model object");
  const auto& model = j["model"];
  check_bpe_options(model, path);
  if (!model.contains("vocab")) throw InputError(path + ": model has no vocab");
  BpeTokenizer t;
  t.source_ = path;
  hf_json::read_vocab(model["vocab"], path, &t.token_to_id_);
  t.byte_fallback_ = hf_json::bool_or(model, "byte_fallback", false, path, "model");
  t.fuse_unk_ = hf_json::bool_or(model, "fuse_unk", false, path, "model");
  t.ignore_merges_ = hf_json::bool_or(model, "ignore_merges", false, path, "model");
  if (model.contains("unk_token") && !model["unk_token"].is_null()) {
    const std::string unk = hf_json::string_at(model, "unk_token", path, "model");
    auto it = t.token_to_id_.find(unk);
    if (it == t.token_to_id_.end())
      throw InputError(path + ": model: unk_token '" + printable(unk) + "' is not in the vocab");
    t.unk_ = it->second;
  }
  *t.normalizer_ = HfNormalizer::from_json(j.value("normalizer", nlohmann::json()), path);
  *t.pre_tokenizer_ = HfPreTokenizer::from_json(j.value("pre_tokenizer", nlohmann::json()), path);

  std::vector<AddedToken> raw, normalized;
  for (JsonAddedToken& a : read_added_tokens(j, path)) {
    if (a.strips) t.stripping_special_ = a.token.content;
    t.added_by_id_[a.token.id] = a.token.content;
    (a.normalized ? normalized : raw).push_back(std::move(a.token));
  }
  t.raw_added_ = AddedTokenMatcher(std::move(raw));
  t.normalized_added_ = AddedTokenMatcher(std::move(normalized));
  t.finish(path, path, read_json_merges(model, path));

  OwnSpecials own;
  read_post_processor(j.value("post_processor", nlohmann::json()), path, 0, &own.prefix, &own.suffix);
  for (TokenId id : own.prefix)
    if (t.id_to_token_.count(id) == 0)
      throw InputError(path + ": post_processor: id " + std::to_string(id) + " is not in the vocabulary");
  for (TokenId id : own.suffix)
    if (t.id_to_token_.count(id) == 0)
      throw InputError(path + ": post_processor: id " + std::to_string(id) + " is not in the vocabulary");
  for (const char* name : {"<|endoftext|>", "<|end_of_text|>", "</s>", "<eos>"}) {
    own.eos = t.find_token(name);
    if (own.eos) break;
  }
  t.set_specials(own, config, [&t](const std::string& content) { return t.find_token(content); });
  return t;
}

}  // namespace linsweep
