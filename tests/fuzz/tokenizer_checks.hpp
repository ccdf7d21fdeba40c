// What the tokenizer and corpus fuzz targets share: the tokenizer they encode with and the checks on its output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "engine/corpus/corpus.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "fuzz_support.hpp"

namespace linsweep::fuzz {

// A real byte-level BPE (tiny-gpt2's from tests/data, loaded once), so that a corpus reader's
// documents go on through pre-tokenization and merges exactly as read_token_stream sends them.
inline const Tokenizer& corpus_tokenizer() {
  static const std::unique_ptr<Tokenizer> t = load_tokenizer(test_data_dir() + "/models/tiny-gpt2");
  return *t;
}

// The corpus targets: the input written as `file_name`, read as `format` with corpus_tokenizer();
// a bad-input error passes, and every token must lie inside the vocabulary.
inline void check_corpus(const std::uint8_t* data, std::size_t size, const std::string& file_name,
                         CorpusFormat format) {
  const Tokenizer& tokenizer = corpus_tokenizer();
  const std::string path = write_input(file_name, as_text(data, size));
  expect_bad_input([&] {
    const auto stream = read_token_stream(path, format, &tokenizer, tokenizer.eos_id());
    for (TokenId id : stream)
      if (id < 0 || id >= tokenizer.id_limit()) fail("token " + std::to_string(id) + " outside the vocabulary");
  });
}

// Mixed scripts, digits, whitespace runs and the end-of-text marker: enough to send a loaded
// tokenizer through pre-tokenization, merges, specials and decoding.
inline constexpr std::string_view kTokenizerSample =
    "Hello, world!  It's 2024 -- naïve café 日本語 <|endoftext|> ok\n\tend";

// The tokenizer-loader targets, once a tokenizer loaded: it encodes kTokenizerSample to ids
// inside its vocabulary and decodes them back.
inline void check_tokenizer(const Tokenizer& t) {
  const auto ids = t.encode_document(kTokenizerSample, "sample");
  for (TokenId id : t.encode(kTokenizerSample, true))
    if (id < 0 || id >= t.id_limit()) fail("encode gave id " + std::to_string(id) + " outside the vocabulary");
  for (TokenId id : ids)
    if (id < 0 || id >= t.id_limit()) fail("encode gave id " + std::to_string(id) + " outside the vocabulary");
  (void)t.decode(ids);
}

}  // namespace linsweep::fuzz

// Defines the corpus fuzz target `target` (declared in fuzz_targets.hpp): check_corpus of the
// input written as `file_name` and read as `format`, and its libFuzzer entry.
#define LINSWEEP_CORPUS_FUZZ_TARGET(target, file_name, format) \
  namespace linsweep {                                         \
  int target(const std::uint8_t* data, std::size_t size) {     \
    fuzz::check_corpus(data, size, file_name, format);         \
    return 0;                                                  \
  }                                                            \
  }                                                            \
  LINSWEEP_FUZZ_ENTRY(target)
