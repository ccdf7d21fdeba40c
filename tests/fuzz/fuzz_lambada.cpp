// Fuzz target: LAMBADA JSONL (one {"text": ...} object per line) through read_token_stream.
#include "fuzz_targets.hpp"
#include "tokenizer_checks.hpp"

LINSWEEP_CORPUS_FUZZ_TARGET(fuzz_lambada, "lambada.jsonl", CorpusFormat::kLambada)
