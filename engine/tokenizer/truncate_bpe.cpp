// Writing GPT-2's BPE cut to its first K merges, after checking that GPT-2's ids survive the cut.
#include "engine/tokenizer/truncate_bpe.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <vector>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "engine/tokenizer/merges_file.hpp"
#include "engine/tokenizer/pretokenizer.hpp"

namespace linsweep {
namespace {

constexpr std::string_view kEos = "<|endoftext|>";

// The cut's vocab.json: ids 0..limit-1 in order, as GPT-2's own file is, so that it reads like a
// prefix of it, then the end-of-text token. Written entry by entry: ordered_json finds each key
// by a linear search, which makes a cut near GPT-2's 50,257 tokens quadratic.
std::string vocab_json(const std::vector<const std::string*>& token_of) {
  std::string out = "{";
  for (std::size_t id = 0; id < token_of.size(); ++id)
    (((out += nlohmann::json(*token_of[id]).dump()) += ':') += std::to_string(id)) += ',';
  return ((out += nlohmann::json(kEos).dump()) += ':') += std::to_string(token_of.size()) + "}";
}

}  // namespace

TruncatedBpe truncate_bpe(const std::string& src_dir, std::size_t k, const std::string& dest_dir) {
  const std::string vocab_path = src_dir + "/vocab.json";
  const std::string merges_path = src_dir + "/merges.txt";
  if (!is_regular_file(vocab_path)) throw InputError(vocab_path + ": no such file (GPT-2's encoder.json)");
  if (!is_regular_file(merges_path)) throw InputError(merges_path + ": no such file (GPT-2's vocab.bpe)");

  const nlohmann::json vocab = read_json_file(vocab_path, kMaxVocabBytes);
  if (!vocab.is_object()) throw InputError(vocab_path + ": not a JSON object");
  const std::string text = read_file(merges_path, kMaxMergesBytes);
  require_utf8(text, merges_path);

  // Only the first k merges are read: k is only trusted once the file has k of them.
  const MergesFile file = parse_merges(text, merges_path, k);
  const std::vector<MergeLine>& merges = file.merges;
  if (merges.size() < k)
    throw InputError(merges_path + ": has " + std::to_string(merges.size()) + " merges, fewer than the " +
                     std::to_string(k) + " asked for");

  // Ids below 256 + k must name one token each, or "the token with id N" is ambiguous.
  const std::size_t limit = 256 + k;
  std::vector<const std::string*> token_of(limit, nullptr);
  std::unordered_map<std::string_view, std::int64_t> id_of;
  id_of.reserve(vocab.size());
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    if (!it.value().is_number_integer()) throw InputError(vocab_path + ": id of '" + it.key() + "' is not an integer");
    const auto id = it.value().get<std::int64_t>();
    if (id < 0) throw InputError(vocab_path + ": id of '" + it.key() + "' is negative");
    id_of.emplace(it.key(), id);
    if (static_cast<std::uint64_t>(id) < limit) {
      auto& slot = token_of[static_cast<std::size_t>(id)];
      if (slot != nullptr)
        throw InputError(vocab_path + ": '" + *slot + "' and '" + it.key() + "' share id " + std::to_string(id));
      slot = &it.key();
    }
  }
  auto id_in_vocab = [&](std::string_view token) -> std::int64_t {
    auto it = id_of.find(token);
    return it == id_of.end() ? -1 : it->second;
  };

  const auto& bytes = byte_to_unicode();
  for (int b = 0; b < 256; ++b) {
    const std::string& tok = bytes[static_cast<std::size_t>(b)];
    const std::int64_t id = id_in_vocab(tok);
    if (id < 0) throw InputError(vocab_path + ": no token for byte " + std::to_string(b));
    if (id >= 256)
      throw InputError(vocab_path + ": byte token '" + tok + "' has id " + std::to_string(id) +
                       ", not one of 0..255 (ids would not stay GPT-2's)");
  }
  // 256 byte tokens with distinct ids below 256 fill 0..255 exactly.

  for (std::size_t i = 0; i < k; ++i) {
    const auto& [line, a, b, line_no] = merges[i];
    const std::string where =
        merges_path + ":" + std::to_string(line_no) + ": merge " + std::to_string(i) + " '" + std::string(line) + "'";
    const auto want = static_cast<std::int64_t>(256 + i);
    for (std::string_view part : {a, b}) {
      const std::int64_t id = id_in_vocab(part);
      if (id < 0 || id >= want)
        throw InputError(where + ": part '" + std::string(part) + "' is not a byte or an earlier merge's result in " +
                         vocab_path);
    }
    const std::string merged = std::string(a) + std::string(b);
    const std::int64_t id = id_in_vocab(merged);
    if (id != want)
      throw InputError(where + ": result '" + merged + "' has id " +
                       (id < 0 ? std::string("none") : std::to_string(id)) + " in " + vocab_path + ", not " +
                       std::to_string(want) + " (ids would not stay GPT-2's)");
    if (merged == kEos) throw InputError(where + ": yields " + std::string(kEos) + ", which must follow the merges");
  }

  std::string merges_out = (file.version.empty() ? "#version: 0.2" : std::string(file.version)) + "\n";
  for (std::size_t i = 0; i < k; ++i) (merges_out += merges[i].text) += '\n';

  std::error_code ec;
  std::filesystem::create_directories(dest_dir, ec);
  if (ec || !is_directory(dest_dir)) throw InputError(dest_dir + ": cannot create the directory");
  // Every slot of token_of is filled: the byte tokens are 0..255, merge i's result is 256 + i,
  // and none is the end-of-text token.
  atomic_write_text(dest_dir + "/vocab.json", vocab_json(token_of));
  atomic_write_text(dest_dir + "/merges.txt", merges_out);
  return TruncatedBpe{k, limit + 1, static_cast<TokenId>(limit)};
}

}  // namespace linsweep
