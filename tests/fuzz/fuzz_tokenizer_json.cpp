// Fuzz target: an HF tokenizer.json through BpeTokenizer::from_tokenizer_json.
#include "fuzz_support.hpp"
#include "fuzz_targets.hpp"
#include "workers/tokenizer/bpe_tokenizer.hpp"

namespace linsweep {
namespace {

// As in fuzz_vocab_merges: scripts, digits, whitespace, an added token.
constexpr std::string_view kSample = "Hello, world!  It's 2024 -- naïve café 日本語 <|endoftext|> ok\n\tend";

}  // namespace

int fuzz_tokenizer_json(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write_input("tokenizer.json", fuzz::as_text(data, size));
  fuzz::expect_bad_input([&] {
    const BpeTokenizer t = BpeTokenizer::from_tokenizer_json(path);
    const auto ids = t.encode(kSample, true);
    for (TokenId id : ids)
      if (id < 0 || id >= t.id_limit()) fuzz::fail("encode gave id " + std::to_string(id) + " outside the vocabulary");
    (void)t.decode(ids);
  });
  return 0;
}

}  // namespace linsweep

LINSWEEP_FUZZ_ENTRY(fuzz_tokenizer_json)
