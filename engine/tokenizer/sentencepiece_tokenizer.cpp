// SentencePiece through linsweep's SentencePiece module (Debian's libsentencepiece inside).
#include "engine/tokenizer/sentencepiece_tokenizer.hpp"

#include <algorithm>
#include <array>
#include <cstdio>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "engine/tokenizer/sentencepiece_loader.hpp"

namespace linsweep {

void SentencePieceTokenizer::ModelDeleter::operator()(LinsweepSpmModel* m) const noexcept {
  if (m != nullptr) sentencepiece_module().free(m);
}

SentencePieceTokenizer::SentencePieceTokenizer(SentencePieceTokenizer&&) noexcept = default;
SentencePieceTokenizer& SentencePieceTokenizer::operator=(SentencePieceTokenizer&&) noexcept = default;
SentencePieceTokenizer::~SentencePieceTokenizer() = default;

SentencePieceTokenizer SentencePieceTokenizer::from_model_file(const std::string& path, const TokenizerConfig& config) {
  const std::string bytes = read_file(path, kMaxSentencePieceBytes);
  const SentencePieceModule& spm = sentencepiece_module();
  std::array<char, 512> err{};
  SentencePieceTokenizer t;
  t.source_ = path;
  t.sp_.reset(spm.load(bytes.data(), bytes.size(), err.data(), err.size()));
  if (!t.sp_) throw InputError(path + ": not a SentencePiece model (" + printable(err.data()) + ")");
  const int n = spm.piece_count(t.sp_.get());
  if (n <= 0) throw InputError(path + ": not a SentencePiece model (no pieces)");
  t.pieces_.reserve(static_cast<std::size_t>(n));
  for (int id = 0; id < n; ++id) {
    const char* text = nullptr;
    std::size_t size = 0;
    int flags = 0;
    spm.piece(t.sp_.get(), id, &text, &size, &flags);
    t.pieces_.emplace_back(text, size);
    t.flags_.push_back(flags);
    if ((flags & kLinsweepSpmControl) != 0 && size > 0) t.controls_.emplace_back(t.pieces_.back(), id);
  }
  std::stable_sort(t.controls_.begin(), t.controls_.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  OwnSpecials own;
  const int bos = spm.bos_id(t.sp_.get()), eos = spm.eos_id(t.sp_.get());
  if (bos >= 0 && bos < n) own.prefix.push_back(bos);
  if (eos >= 0 && eos < n) own.eos = eos;
  t.set_specials(own, config, [&t](const std::string& piece) -> std::optional<TokenId> {
    const auto it = std::find(t.pieces_.begin(), t.pieces_.end(), piece);
    if (it == t.pieces_.end()) return std::nullopt;
    return static_cast<TokenId>(it - t.pieces_.begin());
  });
  return t;
}

std::size_t SentencePieceTokenizer::vocab_size() const noexcept { return pieces_.size(); }

std::string SentencePieceTokenizer::describe() const {
  return source_ + ": SentencePiece, " + std::to_string(vocab_size()) + " pieces";
}

void SentencePieceTokenizer::encode_plain(std::string_view text, const std::string& what,
                                          std::vector<TokenId>* out) const {
  // Room for one id per byte and a word-boundary mark first; asked again when that is short.
  std::vector<int> ids(text.size() + 2);
  std::array<char, 512> err{};
  for (;;) {
    std::size_t count = 0;
    if (sentencepiece_module().encode(sp_.get(), text.data(), text.size(), ids.data(), ids.size(), &count, err.data(),
                                      err.size()) != 0)
      throw InputError(what + ": SentencePiece could not encode it (" + printable(err.data()) + ")");
    if (count <= ids.size()) {
      out->insert(out->end(), ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(count));
      return;
    }
    ids.resize(count);
  }
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
  for (TokenId id : ids) {
    if (id < 0 || static_cast<std::size_t>(id) >= pieces_.size())
      throw InputError("decode: id " + std::to_string(id) + " is not in the vocabulary");
    const std::string& piece = pieces_[static_cast<std::size_t>(id)];
    unsigned b = 0;
    if ((flags_[static_cast<std::size_t>(id)] & kLinsweepSpmByte) != 0 &&
        std::sscanf(piece.c_str(), "<0x%2X>", &b) == 1) {
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
