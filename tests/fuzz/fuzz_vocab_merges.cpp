// Fuzz target: vocab.json + merges.txt (one input cut at its first NUL) through BpeTokenizer.
#include "engine/tokenizer/bpe_tokenizer.hpp"
#include "fuzz_support.hpp"
#include "fuzz_targets.hpp"
#include "tokenizer_checks.hpp"

namespace linsweep {

int fuzz_vocab_merges(const std::uint8_t* data, std::size_t size) {
  const auto [vocab, merges] = fuzz::split_input(fuzz::as_text(data, size));
  const std::string vocab_path = fuzz::write_input("vocab.json", vocab);
  const std::string merges_path = fuzz::write_input("merges.txt", merges);
  fuzz::expect_bad_input([&] { fuzz::check_tokenizer(BpeTokenizer::from_vocab_merges(vocab_path, merges_path)); });
  return 0;
}

}  // namespace linsweep

LINSWEEP_FUZZ_ENTRY(fuzz_vocab_merges)
