// Fuzz target: an HF tokenizer.json through BpeTokenizer::from_tokenizer_json.
#include "engine/tokenizer/bpe_tokenizer.hpp"
#include "fuzz_support.hpp"
#include "fuzz_targets.hpp"
#include "tokenizer_checks.hpp"

namespace linsweep {

int fuzz_tokenizer_json(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write_input("tokenizer.json", fuzz::as_text(data, size));
  fuzz::expect_bad_input([&] { fuzz::check_tokenizer(BpeTokenizer::from_tokenizer_json(path)); });
  return 0;
}

}  // namespace linsweep

LINSWEEP_FUZZ_ENTRY(fuzz_tokenizer_json)
