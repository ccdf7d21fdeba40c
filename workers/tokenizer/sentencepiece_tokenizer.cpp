// SentencePiece through Debian's libsentencepiece; only this file sees its header.
#include "workers/tokenizer/sentencepiece_tokenizer.hpp"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <cstdio>

#include "common/errors.hpp"
#include "common/file_io.hpp"

namespace linsweep {

SentencePieceTokenizer::SentencePieceTokenizer() : sp_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {}
SentencePieceTokenizer::SentencePieceTokenizer(SentencePieceTokenizer&&) noexcept = default;
SentencePieceTokenizer& SentencePieceTokenizer::operator=(SentencePieceTokenizer&&) noexcept = default;
SentencePieceTokenizer::~SentencePieceTokenizer() = default;

SentencePieceTokenizer SentencePieceTokenizer::from_model_file(const std::string& path, const TokenizerConfig& config) {
  const std::string bytes = read_file(path, kMaxSentencePieceBytes);
  SentencePieceTokenizer t;
  t.source_ = path;
  const auto status = t.sp_->LoadFromSerializedProto(bytes);
  if (!status.ok()) throw InputError(path + ": not a SentencePiece model (" + printable(status.ToString()) + ")");
  const int n = t.sp_->GetPieceSize();
  if (n <= 0) throw InputError(path + ": not a SentencePiece model (no pieces)");
  for (int id = 0; id < n; ++id)
    if (t.sp_->IsControl(id) && !t.sp_->IdToPiece(id).empty()) t.controls_.emplace_back(t.sp_->IdToPiece(id), id);
  std::stable_sort(t.controls_.begin(), t.controls_.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  OwnSpecials own;
  if (t.sp_->bos_id() >= 0 && t.sp_->bos_id() < n) own.prefix.push_back(t.sp_->bos_id());
  if (t.sp_->eos_id() >= 0 && t.sp_->eos_id() < n) own.eos = t.sp_->eos_id();
  t.set_specials(own, config, [&t, n](const std::string& piece) -> std::optional<TokenId> {
    const int id = t.sp_->PieceToId(piece);
    // PieceToId answers unk_id for a piece it does not know.
    if (id < 0 || id >= n || (t.sp_->IsUnknown(id) && t.sp_->IdToPiece(id) != piece)) return std::nullopt;
    return id;
  });
  return t;
}

std::size_t SentencePieceTokenizer::vocab_size() const noexcept {
  return static_cast<std::size_t>(std::max(0, sp_->GetPieceSize()));
}

std::string SentencePieceTokenizer::describe() const {
  return source_ + ": SentencePiece, " + std::to_string(vocab_size()) + " pieces";
}

void SentencePieceTokenizer::encode_plain(std::string_view text, const std::string& what,
                                          std::vector<TokenId>* out) const {
  std::vector<int> ids;
  const auto status = sp_->Encode(text, &ids);
  if (!status.ok())
    throw InputError(what + ": SentencePiece could not encode it (" + printable(status.ToString()) + ")");
  out->insert(out->end(), ids.begin(), ids.end());
}

std::vector<TokenId> SentencePieceTokenizer::encode(std::string_view text, bool allow_special,
                                                    const std::string& what) const {
  require_utf8(text, what);
  std::vector<TokenId> out;
  if (!allow_special || controls_.empty()) {
    encode_plain(text, what, &out);
    return out;
  }
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size();) {
    const auto hit = std::find_if(controls_.begin(), controls_.end(),
                                  [&](const auto& c) { return text.compare(i, c.first.size(), c.first) == 0; });
    if (hit == controls_.end()) {
      ++i;
      continue;
    }
    if (i > start) encode_plain(text.substr(start, i - start), what, &out);
    out.push_back(hit->second);
    i += hit->first.size();
    start = i;
  }
  if (start < text.size()) encode_plain(text.substr(start), what, &out);
  return out;
}

std::string SentencePieceTokenizer::decode(const std::vector<TokenId>& ids) const {
  static const std::string kMark = "\xE2\x96\x81";  // ▁
  std::string out;
  const int n = sp_->GetPieceSize();
  for (TokenId id : ids) {
    if (id < 0 || id >= n) throw InputError("decode: id " + std::to_string(id) + " is not in the vocabulary");
    const std::string& piece = sp_->IdToPiece(id);
    unsigned b = 0;
    if (sp_->IsByte(id) && std::sscanf(piece.c_str(), "<0x%2X>", &b) == 1) {
      out.push_back(static_cast<char>(b));
      continue;
    }
    for (std::size_t k = 0; k < piece.size();) {
      if (piece.compare(k, kMark.size(), kMark) == 0) {
        out.push_back(' ');
        k += kMark.size();
      } else {
        out.push_back(piece[k++]);
      }
    }
  }
  return out;
}

}  // namespace linsweep
