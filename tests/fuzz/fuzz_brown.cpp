// Fuzz target: a tagged Brown Corpus file (word/tag tokens rebuilt as text) through read_token_stream.
#include "fuzz_targets.hpp"
#include "tokenizer_checks.hpp"

LINSWEEP_CORPUS_FUZZ_TARGET(fuzz_brown, "ca01", CorpusFormat::kBrown)
