// Fuzz target: a tagged Brown Corpus file (word/tag tokens rebuilt as text) through read_token_stream.
#include "fuzz_targets.hpp"
#include "tokenizer_checks.hpp"

namespace linsweep {

int fuzz_brown(const std::uint8_t* data, std::size_t size) {
  fuzz::check_corpus(data, size, "ca01", CorpusFormat::kBrown);
  return 0;
}

}  // namespace linsweep

LINSWEEP_FUZZ_ENTRY(fuzz_brown)
