// Corpus formats and their token streams (DESIGN §4: documents joined by end-of-text).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "workers/tokenizer/bpe_tokenizer.hpp"

namespace linsweep {

enum class CorpusFormat { kText, kWikitext, kLambada, kBrown, kNpy };

// "text" | "wikitext" | "lambada" | "brown" | "npy"; InputError listing them otherwise.
CorpusFormat parse_corpus_format(const std::string& name);
const char* corpus_format_name(CorpusFormat f) noexcept;
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

// The token stream of a corpus: .npy as stored; text formats tokenized per document and
// joined by `eos` between documents. Throws InputError on an empty stream.
std::vector<TokenId> read_token_stream(const std::string& path, CorpusFormat format, const BpeTokenizer* tokenizer,
                                       std::optional<TokenId> eos);

}  // namespace linsweep
