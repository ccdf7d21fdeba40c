// Fuzz target: WikiText (articles from ` = Title = ` lines) through read_token_stream.
#include "fuzz_targets.hpp"
#include "tokenizer_checks.hpp"

namespace linsweep {

int fuzz_wikitext(const std::uint8_t* data, std::size_t size) {
  fuzz::check_corpus(data, size, "wiki.fuzz.raw", CorpusFormat::kWikitext);
  return 0;
}

}  // namespace linsweep

LINSWEEP_FUZZ_ENTRY(fuzz_wikitext)
