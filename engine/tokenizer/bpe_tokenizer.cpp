// Applying BPE: the stages of HF tokenizers, and merges by rank with a priority queue.
#include "engine/tokenizer/bpe_tokenizer.hpp"

#include <unicode/utf8.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <queue>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "engine/tokenizer/hf_json.hpp"
#include "engine/tokenizer/hf_normalizer.hpp"
#include "engine/tokenizer/hf_pre_tokenizer.hpp"
#include "engine/tokenizer/merges_file.hpp"
#include "engine/tokenizer/pretokenizer.hpp"

namespace linsweep {

namespace {

// "<0xNN>", SentencePiece's name of a byte-fallback token.
std::string byte_fallback_name(unsigned char b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "<0x%02X>", b);
  return buf;
}

// One symbol of a word being merged: a token and its neighbours (-1 at the ends).
struct BpeSymbol {
  TokenId id;
  int prev, next;
  bool alive;
};

// A merge waiting in the queue: lowest rank first, then leftmost.
struct PendingMerge {
  std::int32_t rank;
  int pos;
  TokenId merged;
  bool operator>(const PendingMerge& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};

}  // namespace

BpeTokenizer::BpeTokenizer()
    : normalizer_(std::make_unique<HfNormalizer>()), pre_tokenizer_(std::make_unique<HfPreTokenizer>()) {}
BpeTokenizer::BpeTokenizer(BpeTokenizer&&) noexcept = default;
BpeTokenizer& BpeTokenizer::operator=(BpeTokenizer&&) noexcept = default;
BpeTokenizer::~BpeTokenizer() = default;

BpeTokenizer BpeTokenizer::from_vocab_merges(const std::string& vocab_path, const std::string& merges_path,
                                             const TokenizerConfig& config) {
  BpeTokenizer t;
  t.source_ = vocab_path;
  hf_json::read_vocab(read_json_file(vocab_path, kMaxVocabBytes), vocab_path, &t.token_to_id_);
  const std::string text = read_file(merges_path, kMaxMergesBytes);
  require_utf8(text, merges_path);
  std::vector<std::pair<std::string, std::string>> merges;
  for (const MergeLine& m : parse_merges(text, merges_path).merges)
    merges.emplace_back(std::string(m.left), std::string(m.right));
  *t.pre_tokenizer_ = HfPreTokenizer::from_json(nlohmann::json{{"type", "ByteLevel"}}, vocab_path);
  // GPT-2's vocab.json carries <|endoftext|> as an ordinary entry; it is still special.
  if (auto it = t.token_to_id_.find("<|endoftext|>"); it != t.token_to_id_.end()) {
    t.raw_added_ = AddedTokenMatcher({AddedToken{it->first, it->second, true}});
    t.added_by_id_[it->second] = it->first;
  }
  t.finish(vocab_path, merges_path, merges);
  OwnSpecials own;
  own.eos = t.find_token("<|endoftext|>");
  t.set_specials(own, config, [&t](const std::string& content) { return t.find_token(content); });
  return t;
}

void BpeTokenizer::finish(const std::string& vocab_source, const std::string& merges_source,
                          const std::vector<std::pair<std::string, std::string>>& merges) {
  byte_level_ = pre_tokenizer_->byte_level();
  space_marker_ =
      !pre_tokenizer_->space_marker().empty() ? pre_tokenizer_->space_marker() : normalizer_->space_marker();
  for (const auto& [tok, id] : token_to_id_) id_to_token_[id] = tok;
  for (const auto& [id, tok] : added_by_id_) id_to_token_.emplace(id, tok);
  for (const auto& [id, tok] : id_to_token_) id_limit_ = std::max(id_limit_, id + 1);
  if (byte_level_) {
    const auto& bytes = byte_to_unicode();
    for (int b = 0; b < 256; ++b) {
      auto it = token_to_id_.find(bytes[static_cast<std::size_t>(b)]);
      if (it == token_to_id_.end())
        throw InputError(vocab_source + ": vocab has no token for byte " + std::to_string(b) +
                         " (not byte-level BPE?)");
      byte_ids_[b] = it->second;
    }
  }
  if (merges.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    throw InputError(merges_source + ": too many merges");
  for (std::size_t r = 0; r < merges.size(); ++r) {
    const auto& [a, b] = merges[r];
    auto ia = token_to_id_.find(a), ib = token_to_id_.find(b), im = token_to_id_.find(a + b);
    if (ia == token_to_id_.end() || ib == token_to_id_.end() || im == token_to_id_.end())
      throw InputError(merges_source + ": merge " + std::to_string(r) + " ('" + printable(a) + " " + printable(b) +
                       "') uses or makes a token missing from the vocab");
    // The first of two equal merges wins, as in HF tokenizers.
    merges_.emplace(pair_key(ia->second, ib->second), Merge{static_cast<std::int32_t>(r), im->second});
  }
}

std::optional<TokenId> BpeTokenizer::find_token(const std::string& content) const {
  for (const auto& [id, tok] : added_by_id_)
    if (tok == content) return id;
  if (auto it = token_to_id_.find(content); it != token_to_id_.end()) return it->second;
  return std::nullopt;
}

std::string BpeTokenizer::describe() const {
  return source_ + ": " +
         (byte_level_      ? "byte-level BPE"
          : byte_fallback_ ? "BPE with byte fallback"
                           : "BPE") +
         ", " + std::to_string(vocab_size()) + " tokens, " + std::to_string(merges_.size()) + " merges";
}

void BpeTokenizer::initial_symbols(std::string_view word, const std::string& what, std::vector<TokenId>* sym) const {
  if (byte_level_) {
    for (unsigned char c : word) sym->push_back(byte_ids_[c]);
    return;
  }
  const auto* p = reinterpret_cast<const uint8_t*>(word.data());
  const auto n = static_cast<int32_t>(word.size());
  bool last_unk = false;
  for (int32_t i = 0; i < n;) {
    const int32_t start = i;
    UChar32 c;
    U8_NEXT(p, i, n, c);
    const std::string ch(word.substr(static_cast<std::size_t>(start), static_cast<std::size_t>(i - start)));
    if (auto it = token_to_id_.find(ch); it != token_to_id_.end()) {
      sym->push_back(it->second);
      last_unk = false;
      continue;
    }
    if (byte_fallback_) {
      std::vector<TokenId> bytes;
      for (unsigned char b : ch) {
        auto it = token_to_id_.find(byte_fallback_name(b));
        if (it == token_to_id_.end()) break;
        bytes.push_back(it->second);
      }
      if (bytes.size() == ch.size()) {
        sym->insert(sym->end(), bytes.begin(), bytes.end());
        last_unk = false;
        continue;
      }
    }
    if (!unk_) {
      char cp[16];
      std::snprintf(cp, sizeof cp, "U+%04X", static_cast<unsigned>(c));
      throw InputError(what + ": the character " + cp + " has no token in " + source_ +
                       " (no byte_fallback and no unk_token)");
    }
    if (!(fuse_unk_ && last_unk)) sym->push_back(*unk_);
    last_unk = true;
  }
}

void BpeTokenizer::bpe_word(std::string_view word, const std::string& what, std::vector<TokenId>* out) const {
  if (ignore_merges_) {
    std::string mapped;
    if (byte_level_) {
      const auto& bytes = byte_to_unicode();
      for (unsigned char c : word) mapped += bytes[c];
    } else {
      mapped.assign(word);
    }
    if (auto it = token_to_id_.find(mapped); it != token_to_id_.end()) {
      out->push_back(it->second);
      return;
    }
  }
  std::vector<TokenId> ids;
  ids.reserve(word.size());
  initial_symbols(word, what, &ids);
  const int n = static_cast<int>(ids.size());
  std::vector<BpeSymbol> sym(ids.size());
  for (int i = 0; i < n; ++i) sym[i] = BpeSymbol{ids[i], i - 1, i + 1 < n ? i + 1 : -1, true};
  std::priority_queue<PendingMerge, std::vector<PendingMerge>, std::greater<>> queue;
  auto push = [&](int pos) {
    if (pos < 0 || sym[pos].next < 0) return;
    auto it = merges_.find(pair_key(sym[pos].id, sym[sym[pos].next].id));
    if (it != merges_.end()) queue.push(PendingMerge{it->second.rank, pos, it->second.merged});
  };
  for (int i = 0; i + 1 < n; ++i) push(i);
  while (!queue.empty()) {
    const PendingMerge m = queue.top();
    queue.pop();
    BpeSymbol& left = sym[m.pos];
    if (!left.alive || left.next < 0) continue;
    // Skip a stale entry: its pair changed since it was queued.
    auto it = merges_.find(pair_key(left.id, sym[left.next].id));
    if (it == merges_.end() || it->second.rank != m.rank) continue;
    BpeSymbol& right = sym[left.next];
    left.id = m.merged;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) sym[right.next].prev = m.pos;
    push(left.prev);
    push(m.pos);
  }
  for (int i = n > 0 ? 0 : -1; i >= 0; i = sym[i].next) out->push_back(sym[i].id);
}

void BpeTokenizer::encode_segment(std::string_view segment, bool at_start, bool allow_special, const std::string& what,
                                  std::unordered_map<std::string, std::vector<TokenId>>& cache,
                                  std::vector<TokenId>* out) const {
  const std::string normalized = normalizer_->empty() ? std::string(segment) : normalizer_->apply(segment);
  std::vector<std::string> words;
  normalized_added_.split(
      normalized, allow_special,
      [&](std::string_view piece, std::size_t begin) {
        words.clear();
        pre_tokenizer_->split(piece, at_start && begin == 0, &words);
        for (const std::string& w : words) {
          auto it = cache.find(w);
          if (it == cache.end()) {
            std::vector<TokenId> ids;
            bpe_word(w, what, &ids);
            it = cache.emplace(w, std::move(ids)).first;
          }
          out->insert(out->end(), it->second.begin(), it->second.end());
        }
      },
      [&](TokenId id) { out->push_back(id); });
}

std::vector<TokenId> BpeTokenizer::encode(std::string_view text, bool allow_special, const std::string& what) const {
  require_utf8(text, what);
  if (allow_special && !stripping_special_.empty())
    throw InputError(
        source_ + ": special token '" + printable(stripping_special_) +
        "' strips whitespace (lstrip, rstrip or single_word), which matching special tokens does not implement");
  std::vector<TokenId> out;
  out.reserve(text.size() / 3 + 1);
  std::unordered_map<std::string, std::vector<TokenId>> cache;
  raw_added_.split(
      text, allow_special,
      [&](std::string_view piece, std::size_t begin) {
        encode_segment(piece, begin == 0, allow_special, what, cache, &out);
      },
      [&](TokenId id) { out.push_back(id); });
  return out;
}

std::string BpeTokenizer::decode(const std::vector<TokenId>& ids) const {
  // Invert the byte map once per call; decode is rare (inspection, tests).
  std::unordered_map<std::string, unsigned char> inv;
  if (byte_level_) {
    const auto& bytes = byte_to_unicode();
    for (int b = 0; b < 256; ++b) inv[bytes[static_cast<std::size_t>(b)]] = static_cast<unsigned char>(b);
  }
  std::string out;
  for (TokenId id : ids) {
    auto it = id_to_token_.find(id);
    if (it == id_to_token_.end()) throw InputError("decode: id " + std::to_string(id) + " is not in the vocabulary");
    if (added_by_id_.count(id) != 0) {
      out += added_by_id_.at(id);
      continue;
    }
    const std::string& tok = it->second;
    if (!byte_level_) {
      unsigned b = 0;
      if (byte_fallback_ && tok.size() == 6 && std::sscanf(tok.c_str(), "<0x%2X>", &b) == 1 &&
          tok == byte_fallback_name(static_cast<unsigned char>(b))) {
        out.push_back(static_cast<char>(b));
        continue;
      }
      for (std::size_t k = 0; k < tok.size();) {
        if (!space_marker_.empty() && tok.compare(k, space_marker_.size(), space_marker_) == 0) {
          out.push_back(' ');
          k += space_marker_.size();
        } else {
          out.push_back(tok[k++]);
        }
      }
      continue;
    }
    for (std::size_t k = 0; k < tok.size();) {
      const auto c = static_cast<unsigned char>(tok[k]);
      const std::size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
      auto b = inv.find(tok.substr(k, len));
      if (b == inv.end()) throw InputError("decode: token " + std::to_string(id) + " is not byte-level");
      out.push_back(static_cast<char>(b->second));
      k += len;
    }
  }
  return out;
}

}  // namespace linsweep
