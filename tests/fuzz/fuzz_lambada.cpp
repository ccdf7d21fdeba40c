// Fuzz target: LAMBADA JSONL (one {"text": ...} object per line) through read_token_stream.
#include "fuzz_targets.hpp"
#include "tokenizer_checks.hpp"

namespace linsweep {

int fuzz_lambada(const std::uint8_t* data, std::size_t size) {
  fuzz::check_corpus(data, size, "lambada.jsonl", CorpusFormat::kLambada);
  return 0;
}

}  // namespace linsweep

LINSWEEP_FUZZ_ENTRY(fuzz_lambada)
