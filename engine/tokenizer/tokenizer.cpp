// Which tokenizer a model directory has, and what a document gets around its text.
#include "engine/tokenizer/tokenizer.hpp"

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "engine/tokenizer/bpe_tokenizer.hpp"
#include "engine/tokenizer/sentencepiece_tokenizer.hpp"
#include "engine/tokenizer/tokenizer_config.hpp"

namespace linsweep {

std::vector<TokenId> Tokenizer::encode_document(std::string_view text, const std::string& what) const {
  std::vector<TokenId> ids = prefix_;
  const std::vector<TokenId> body = encode(text, false, what);
  ids.insert(ids.end(), body.begin(), body.end());
  ids.insert(ids.end(), suffix_.begin(), suffix_.end());
  return ids;
}

void Tokenizer::set_specials(const OwnSpecials& own, const TokenizerConfig& config,
                             const std::function<std::optional<TokenId>(const std::string&)>& find) {
  auto named = [&](const std::optional<std::string>& content, const char* key) -> std::optional<TokenId> {
    if (!content) return std::nullopt;
    const auto id = find(*content);
    if (!id)
      throw InputError(config.path + ": " + key + " '" + printable(*content) + "' is not in the vocabulary of " +
                       source_);
    return id;
  };
  eos_ = own.eos ? own.eos : named(config.eos_token, "eos_token");
  prefix_ = own.prefix;
  suffix_ = own.suffix;
  if (config.add_bos_token) {
    prefix_.clear();
    if (*config.add_bos_token) {
      std::optional<TokenId> bos = named(config.bos_token, "bos_token");
      if (!bos && own.prefix.size() == 1) bos = own.prefix[0];
      if (!bos) throw InputError(config.path + ": add_bos_token is true but no bos_token names the token");
      prefix_.push_back(*bos);
    }
  }
  if (config.add_eos_token) {
    suffix_.clear();
    if (*config.add_eos_token) {
      std::optional<TokenId> eos = named(config.eos_token, "eos_token");
      if (!eos) eos = eos_;
      if (!eos) throw InputError(config.path + ": add_eos_token is true but the tokenizer has no end-of-text token");
      suffix_.push_back(*eos);
    }
  }
}

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& dir) {
  const TokenizerConfig config = read_tokenizer_config(dir + "/tokenizer_config.json");
  if (is_regular_file(dir + "/tokenizer.json"))
    return std::make_unique<BpeTokenizer>(BpeTokenizer::from_tokenizer_json(dir + "/tokenizer.json", config));
  if (is_regular_file(dir + "/tokenizer.model"))
    return std::make_unique<SentencePieceTokenizer>(
        SentencePieceTokenizer::from_model_file(dir + "/tokenizer.model", config));
  if (is_regular_file(dir + "/vocab.json") && is_regular_file(dir + "/merges.txt"))
    return std::make_unique<BpeTokenizer>(
        BpeTokenizer::from_vocab_merges(dir + "/vocab.json", dir + "/merges.txt", config));
  throw InputError(dir + ": no tokenizer (tokenizer.json, tokenizer.model, or vocab.json + merges.txt)");
}

}  // namespace linsweep
