// Fuzz target: vocab.json + merges.txt (one input cut at its first NUL) through BpeTokenizer.
#include "fuzz_support.hpp"
#include "fuzz_targets.hpp"
#include "workers/tokenizer/bpe_tokenizer.hpp"

namespace linsweep {
namespace {

// Mixed scripts, digits, whitespace runs and the end-of-text marker: enough to send a loaded
// tokenizer through pre-tokenization, merges, specials and decoding.
constexpr std::string_view kSample = "Hello, world!  It's 2024 -- naïve café 日本語 <|endoftext|> ok\n\tend";

}  // namespace

int fuzz_vocab_merges(const std::uint8_t* data, std::size_t size) {
  const auto [vocab, merges] = fuzz::split_input(fuzz::as_text(data, size));
  const std::string vocab_path = fuzz::write_input("vocab.json", vocab);
  const std::string merges_path = fuzz::write_input("merges.txt", merges);
  fuzz::expect_bad_input([&] {
    const BpeTokenizer t = BpeTokenizer::from_vocab_merges(vocab_path, merges_path);
    const auto ids = t.encode(kSample, true);
    for (TokenId id : ids)
      if (id < 0 || id >= t.id_limit()) fuzz::fail("encode gave id " + std::to_string(id) + " outside the vocabulary");
    (void)t.decode(ids);
  });
  return 0;
}

}  // namespace linsweep

LINSWEEP_FUZZ_ENTRY(fuzz_vocab_merges)
