// Fuzz target: a SentencePiece tokenizer.model through SentencePieceTokenizer::from_model_file.
#include "engine/tokenizer/sentencepiece_tokenizer.hpp"
#include "fuzz_support.hpp"
#include "fuzz_targets.hpp"
#include "tokenizer_checks.hpp"

namespace linsweep {

int fuzz_tokenizer_model(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write_input("tokenizer.model", std::string(reinterpret_cast<const char*>(data), size));
  fuzz::expect_bad_input([&] { fuzz::check_tokenizer(SentencePieceTokenizer::from_model_file(path)); });
  return 0;
}

}  // namespace linsweep

LINSWEEP_FUZZ_ENTRY(fuzz_tokenizer_model)
