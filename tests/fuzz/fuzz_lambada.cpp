// Fuzz target: LAMBADA JSONL (one {"text": ...} object per line) through read_token_stream.
#include "corpus_tokenizer.hpp"
#include "fuzz_support.hpp"
#include "fuzz_targets.hpp"
#include "workers/corpus/corpus.hpp"

namespace linsweep {

int fuzz_lambada(const std::uint8_t* data, std::size_t size) {
  const BpeTokenizer& tokenizer = fuzz::corpus_tokenizer();
  const std::string path = fuzz::write_input("lambada.jsonl", fuzz::as_text(data, size));
  fuzz::expect_bad_input([&] {
    const auto stream = read_token_stream(path, CorpusFormat::kLambada, &tokenizer, tokenizer.eos_id());
    for (TokenId id : stream)
      if (id < 0 || id >= tokenizer.id_limit()) fuzz::fail("token " + std::to_string(id) + " outside the vocabulary");
  });
  return 0;
}

}  // namespace linsweep

LINSWEEP_FUZZ_ENTRY(fuzz_lambada)
