// Loading and applying GPT-2 byte-level BPE.
#include "workers/tokenizer/bpe_tokenizer.hpp"

#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "workers/tokenizer/merges_file.hpp"
#include "workers/tokenizer/pretokenizer.hpp"

namespace linsweep {
namespace {

constexpr std::size_t kMaxTokenizerJsonBytes = 256u << 20;

void read_vocab(const nlohmann::json& vocab, const std::string& source, std::unordered_map<std::string, TokenId>* out) {
  if (!vocab.is_object()) throw InputError(source + ": vocab is not a JSON object");
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    if (!it.value().is_number_integer()) throw InputError(source + ": id of '" + it.key() + "' is not an integer");
    auto id = it.value().get<std::int64_t>();
    if (id < 0 || id >= (1 << 30)) throw InputError(source + ": id of '" + it.key() + "' is out of range");
    (*out)[it.key()] = static_cast<TokenId>(id);
  }
}

// The "type" of a tokenizer.json component, or `fallback` when it has none or it is not a string
// (json::value("type", ...) would throw nlohmann's type_error for {"type": 3}).
std::string component_type(const nlohmann::json& component, const std::string& fallback) {
  if (!component.is_object() || !component.contains("type") || !component["type"].is_string()) return fallback;
  return component["type"].get<std::string>();
}

}  // namespace

BpeTokenizer BpeTokenizer::from_directory(const std::string& dir) {
  if (is_regular_file(dir + "/tokenizer.json")) return from_tokenizer_json(dir + "/tokenizer.json");
  if (is_regular_file(dir + "/vocab.json") && is_regular_file(dir + "/merges.txt"))
    return from_vocab_merges(dir + "/vocab.json", dir + "/merges.txt");
  throw InputError(dir + ": no tokenizer.json, or vocab.json + merges.txt");
}

BpeTokenizer BpeTokenizer::from_vocab_merges(const std::string& vocab_path, const std::string& merges_path) {
  BpeTokenizer t;
  read_vocab(read_json_file(vocab_path, kMaxVocabBytes), vocab_path, &t.token_to_id_);
  const std::string text = read_file(merges_path, kMaxMergesBytes);
  require_utf8(text, merges_path);
  std::vector<std::pair<std::string, std::string>> merges;
  for (const MergeLine& m : parse_merges(text, merges_path).merges)
    merges.emplace_back(std::string(m.left), std::string(m.right));
  t.finish(vocab_path, merges_path, merges);
  return t;
}

BpeTokenizer BpeTokenizer::from_tokenizer_json(const std::string& path) {
  const nlohmann::json j = read_json_file(path, kMaxTokenizerJsonBytes);
  if (!j.is_object() || !j.contains("model") || !j["model"].is_object()) throw InputError(path + ": no model object");
  const auto& model = j["model"];
  if (model.contains("type") && model["type"] != "BPE") throw InputError(path + ": model type is not BPE");
  if (!model.contains("vocab")) throw InputError(path + ": model has no vocab");
  BpeTokenizer t;
  read_vocab(model["vocab"], path, &t.token_to_id_);
  auto check_byte_level = [&](const nlohmann::json& pre) {
    if (pre.is_null()) return;
    if (!pre.is_object()) throw InputError(path + ": pre_tokenizer is not an object");
    if (component_type(pre, "") == "Sequence" && pre.contains("pretokenizers") && pre["pretokenizers"].is_array() &&
        pre["pretokenizers"].size() == 1) {
      return;  // a one-element sequence; inspected below through the element
    }
    if (component_type(pre, "") != "ByteLevel")
      throw InputError(path + ": pre_tokenizer '" + printable(component_type(pre, "?")) +
                       "' is not supported (ByteLevel only)");
    if (pre.contains("add_prefix_space") && pre["add_prefix_space"].is_boolean())
      t.add_prefix_space_ = pre["add_prefix_space"].get<bool>();
  };
  if (j.contains("pre_tokenizer")) {
    check_byte_level(j["pre_tokenizer"]);
    if (component_type(j["pre_tokenizer"], "") == "Sequence") check_byte_level(j["pre_tokenizer"]["pretokenizers"][0]);
  }
  if (j.contains("normalizer") && !j["normalizer"].is_null()) {
    const std::string type = component_type(j["normalizer"], "?");
    if (type != "NFC") throw InputError(path + ": normalizer '" + printable(type) + "' is not supported (none or NFC)");
    t.nfc_ = true;
  }
  std::vector<std::pair<std::string, std::string>> merges;
  if (model.contains("merges")) {
    if (!model["merges"].is_array()) throw InputError(path + ": merges is not an array");
    std::size_t k = 0;
    for (const auto& m : model["merges"]) {
      if (m.is_string()) {
        const auto s = m.get<std::string>();
        std::size_t sp = s.find(' ');
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
  }
  if (j.contains("added_tokens") && j["added_tokens"].is_array()) {
    for (const auto& a : j["added_tokens"]) {
      if (!a.is_object() || !a.contains("id") || !a.contains("content") || !a["id"].is_number_integer() ||
          !a["content"].is_string())
        throw InputError(path + ": malformed entry in added_tokens");
      auto id = a["id"].get<std::int64_t>();
      if (id < 0 || id >= (1 << 30)) throw InputError(path + ": added token id out of range");
      const auto content = a["content"].get<std::string>();
      if (content.empty()) throw InputError(path + ": empty added token");
      t.token_to_id_[content] = static_cast<TokenId>(id);
      t.specials_.emplace_back(content, static_cast<TokenId>(id));
    }
  }
  t.finish(path, path, merges);
  return t;
}

void BpeTokenizer::finish(const std::string& vocab_source, const std::string& merges_source,
                          const std::vector<std::pair<std::string, std::string>>& merges) {
  for (const auto& [tok, id] : token_to_id_) {
    id_to_token_[id] = tok;
    id_limit_ = std::max(id_limit_, id + 1);
  }
  const auto& bytes = byte_to_unicode();
  for (int b = 0; b < 256; ++b) {
    auto it = token_to_id_.find(bytes[static_cast<std::size_t>(b)]);
    if (it == token_to_id_.end())
      throw InputError(vocab_source + ": vocab has no token for byte " + std::to_string(b) + " (not byte-level BPE?)");
    byte_ids_[b] = it->second;
  }
  if (merges.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    throw InputError(merges_source + ": too many merges");
  for (std::size_t r = 0; r < merges.size(); ++r) {
    const auto& [a, b] = merges[r];
    auto ia = token_to_id_.find(a), ib = token_to_id_.find(b), im = token_to_id_.find(a + b);
    if (ia == token_to_id_.end() || ib == token_to_id_.end() || im == token_to_id_.end())
      throw InputError(merges_source + ": merge " + std::to_string(r) + " ('" + a + " " + b +
                       "') uses or makes a token missing from the vocab");
    merges_.emplace(pair_key(ia->second, ib->second), Merge{static_cast<std::int32_t>(r), im->second});
  }
  if (auto it = token_to_id_.find("<|endoftext|>"); it != token_to_id_.end()) {
    eos_ = it->second;
    // GPT-2's vocab.json carries <|endoftext|> as an ordinary entry; it is still special.
    bool listed = false;
    for (const auto& sp : specials_) listed = listed || sp.first == it->first;
    if (!listed) specials_.emplace_back(it->first, it->second);
  }
  // Longest special first so that one that is a prefix of another does not win.
  std::sort(specials_.begin(), specials_.end(),
            [](const auto& x, const auto& y) { return x.first.size() > y.first.size(); });
}

void BpeTokenizer::bpe_word(std::string_view word, std::vector<TokenId>* out) const {
  std::vector<TokenId> sym;
  sym.reserve(word.size());
  for (unsigned char c : word) sym.push_back(byte_ids_[c]);
  while (sym.size() > 1) {
    // GPT-2: find the lowest-ranked pair, then merge all its occurrences left to right.
    std::int32_t best_rank = std::numeric_limits<std::int32_t>::max();
    TokenId best_a = 0, best_b = 0, merged = 0;
    for (std::size_t i = 0; i + 1 < sym.size(); ++i) {
      auto it = merges_.find(pair_key(sym[i], sym[i + 1]));
      if (it != merges_.end() && it->second.rank < best_rank) {
        best_rank = it->second.rank;
        best_a = sym[i];
        best_b = sym[i + 1];
        merged = it->second.merged;
      }
    }
    if (best_rank == std::numeric_limits<std::int32_t>::max()) break;
    std::size_t w = 0;
    for (std::size_t i = 0; i < sym.size();) {
      if (i + 1 < sym.size() && sym[i] == best_a && sym[i + 1] == best_b) {
        sym[w++] = merged;
        i += 2;
      } else {
        sym[w++] = sym[i++];
      }
    }
    sym.resize(w);
  }
  out->insert(out->end(), sym.begin(), sym.end());
}

std::vector<TokenId> BpeTokenizer::encode(std::string_view text, bool allow_special, const std::string& what) const {
  require_utf8(text, what);
  std::string normalized;
  if (nfc_ || add_prefix_space_) {
    normalized.assign(text);
    if (nfc_) {
      UErrorCode status = U_ZERO_ERROR;
      const icu::Normalizer2* nfc = icu::Normalizer2::getNFCInstance(status);
      if (U_FAILURE(status)) throw InputError(what + ": ICU NFC normalizer unavailable");
      icu::UnicodeString u = icu::UnicodeString::fromUTF8(normalized);
      icu::UnicodeString n = nfc->normalize(u, status);
      if (U_FAILURE(status)) throw InputError(what + ": NFC normalization failed");
      normalized.clear();
      n.toUTF8String(normalized);
    }
    if (add_prefix_space_ && !normalized.empty() && normalized[0] != ' ') normalized.insert(0, 1, ' ');
    text = normalized;
  }
  std::vector<TokenId> out;
  out.reserve(text.size() / 3 + 1);
  std::unordered_map<std::string_view, std::vector<TokenId>> cache;
  auto encode_plain = [&](std::string_view piece) {
    for (std::string_view word : gpt2_pretokenize(piece)) {
      auto it = cache.find(word);
      if (it == cache.end()) {
        std::vector<TokenId> ids;
        bpe_word(word, &ids);
        it = cache.emplace(word, std::move(ids)).first;
      }
      out.insert(out.end(), it->second.begin(), it->second.end());
    }
  };
  if (!allow_special || specials_.empty()) {
    encode_plain(text);
    return out;
  }
  std::size_t start = 0, i = 0;
  while (i < text.size()) {
    bool hit = false;
    for (const auto& [s, id] : specials_) {
      if (text.compare(i, s.size(), s) == 0) {
        encode_plain(text.substr(start, i - start));
        out.push_back(id);
        i += s.size();
        start = i;
        hit = true;
        break;
      }
    }
    if (!hit) ++i;
  }
  encode_plain(text.substr(start));
  return out;
}

std::string BpeTokenizer::decode(const std::vector<TokenId>& ids) const {
  // Invert the byte map once per call; decode is rare (inspection, tests).
  std::unordered_map<std::string, unsigned char> inv;
  const auto& bytes = byte_to_unicode();
  for (int b = 0; b < 256; ++b) inv[bytes[static_cast<std::size_t>(b)]] = static_cast<unsigned char>(b);
  std::string out;
  for (TokenId id : ids) {
    auto it = id_to_token_.find(id);
    if (it == id_to_token_.end()) throw InputError("decode: id " + std::to_string(id) + " is not in the vocabulary");
    bool special = false;
    for (const auto& sp : specials_) special = special || sp.second == id;
    if (special) {
      out += it->second;
      continue;
    }
    const std::string& tok = it->second;
    for (std::size_t k = 0; k < tok.size();) {
      std::size_t len = 1;
      unsigned char c = static_cast<unsigned char>(tok[k]);
      if (c >= 0xF0)
        len = 4;
      else if (c >= 0xE0)
        len = 3;
      else if (c >= 0xC0)
        len = 2;
      auto b = inv.find(tok.substr(k, len));
      if (b == inv.end()) throw InputError("decode: token " + std::to_string(id) + " is not byte-level");
      out.push_back(static_cast<char>(b->second));
      k += len;
    }
  }
  return out;
}

}  // namespace linsweep
