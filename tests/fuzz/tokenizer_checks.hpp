// The tokenizer the corpus fuzz targets encode with: tiny-gpt2's from tests/data, loaded once.
#pragma once

#include "fuzz_support.hpp"
#include "workers/tokenizer/bpe_tokenizer.hpp"

namespace linsweep::fuzz {

// A real byte-level BPE, so that a corpus reader's documents go on through pre-tokenization
// and merges exactly as read_token_stream sends them in a sweep.
inline const BpeTokenizer& corpus_tokenizer() {
  static const BpeTokenizer t = BpeTokenizer::from_directory(test_data_dir() + "/models/tiny-gpt2");
  return t;
}

}  // namespace linsweep::fuzz
