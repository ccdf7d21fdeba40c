// Fuzz target: WikiText (articles from ` = Title = ` lines) through read_token_stream.
#include "fuzz_targets.hpp"
#include "tokenizer_checks.hpp"

LINSWEEP_CORPUS_FUZZ_TARGET(fuzz_wikitext, "wiki.fuzz.raw", CorpusFormat::kWikitext)
