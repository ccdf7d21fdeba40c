// Corpus formats and their token streams (docs/methods.md: documents joined by end-of-text).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/enum_names.hpp"
#include "engine/tokenizer/tokenizer.hpp"

namespace linsweep {

enum class CorpusFormat { kText, kWikitext, kLambada, kBrown, kNpy };
inline constexpr EnumName<CorpusFormat> kCorpusFormats[] = {{CorpusFormat::kText, "text"},
                                                            {CorpusFormat::kWikitext, "wikitext"},
                                                            {CorpusFormat::kLambada, "lambada"},
                                                            {CorpusFormat::kBrown, "brown"},
                                                            {CorpusFormat::kNpy, "npy"}};

// A name of kCorpusFormats; InputError listing them otherwise.
CorpusFormat parse_corpus_format(const std::string& name);
inline const char* corpus_format_name(CorpusFormat f) noexcept { return enum_name(kCorpusFormats, f); }
// From the path: *.npy, *.jsonl (LAMBADA), wiki.*.raw / wiki.*.tokens, a directory (Brown),
// otherwise plain text.
CorpusFormat guess_corpus_format(const std::string& path);

// The documents of a text corpus, in file order. Invalid UTF-8 is rejected (InputError
// "<file>: invalid UTF-8 at byte N"), never silently replaced, so that a stream's
// fingerprint always means the same text.
//  - text: the whole file is one document;
//  - wikitext: an article starts at each ` = Title = ` line (one '=' each side) and runs to
//    the next; lines are kept verbatim;
//  - lambada: one JSON object {"text": ...} per non-blank line;
//  - brown: a tagged file, or a directory of them (files named like `ca01`, sorted); tags
//    after the last '/' are stripped and readable text rebuilt (quotes, punctuation spacing),
//    one document per file.
// Throws InputError naming the file (and line) on malformed input or an empty corpus.
std::vector<std::string> read_documents(const std::string& path, CorpusFormat format);

// True for a Brown file name, `c` + genre letter a-r + two digits (`ca01`): the files a
// Brown directory is read as; anything else in the directory is ignored.
bool is_brown_name(const std::string& name);

// The Brown reconstruction of one tagged file's contents (exposed for tests).
std::string brown_detag(const std::string& tagged);

// The same text with its words' tags: each word's byte range [begin, end) in `text` and the
// tag after its last '/' ("" for a word without one), in text order.
struct BrownWord {
  std::size_t begin = 0, end = 0;
  std::string tag;
};
struct BrownText {
  std::string text;  // brown_detag's text
  std::vector<BrownWord> words;
};
BrownText brown_detag_tagged(const std::string& tagged);

// read_documents(path, brown) with every document's tags: the same documents in the same
// order. Throws InputError as read_documents does.
std::vector<BrownText> read_brown_tagged(const std::string& path);

// The coarse part of speech of a Brown tag (either case; FW- prefixes, -TL/-HL/-NC suffixes and
// the second half of contractions like PPS+BEZ ignored): noun, verb, auxiliary, adjective,
// adverb, pronoun, determiner, preposition, conjunction, number, punctuation or other; "" for
// an empty tag.
std::string brown_coarse_pos(std::string_view tag);

// The token stream of a corpus: .npy as stored; text formats tokenized per document as the model
// reads one (Tokenizer::encode_document: the BOS the model expects, if any, then the text) and
// joined by `eos` between documents (not repeated where a document already ends with it).
// Throws InputError on an empty stream.
std::vector<TokenId> read_token_stream(const std::string& path, CorpusFormat format, const Tokenizer* tokenizer,
                                       std::optional<TokenId> eos);

// The token stream of a corpus for the model in `model_dir`: .npy as stored; a text format
// through the directory's tokenizer (load_tokenizer, read only for text), its documents joined
// by the tokenizer's end-of-text id, else by `config_eos` (config.json's eos_token_id).
// Throws InputError as read_token_stream and load_tokenizer do.
std::vector<TokenId> read_model_token_stream(const std::string& path, CorpusFormat format, const std::string& model_dir,
                                             std::optional<std::int64_t> config_eos);

}  // namespace linsweep
