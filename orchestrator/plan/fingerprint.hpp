// Content fingerprints of a unit's inputs: model weights, tokenizer, token stream. Each file's
// SHA-256 comes from `digests`, which hashes only files it has not seen unchanged.
#pragma once

#include <string>

#include "common/file_hash_cache.hpp"

namespace linsweep {

// SHA-256 over config.json and every weight file (single or sharded safetensors) of an HF
// directory: a change to any weight changes it. Throws ModelError/InputError naming the file.
std::string model_fingerprint(const std::string& dir, FileHashCache& digests);

// SHA-256 over the tokenizer files (tokenizer.json, or vocab.json + merges.txt); "" when the
// directory has none.
std::string tokenizer_fingerprint(const std::string& dir, FileHashCache& digests);

// SHA-256 over the corpus format, its bytes (a Brown directory: its Brown files in name
// order) and, for text formats, the tokenizer fingerprint: what the token stream depends on.
std::string stream_fingerprint(const std::string& corpus_path, const std::string& format,
                               const std::string& tokenizer_fp, FileHashCache& digests);

}  // namespace linsweep
