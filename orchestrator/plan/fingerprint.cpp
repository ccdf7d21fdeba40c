// Fingerprints by hashing file contents (each file's digest through the cache).
#include "orchestrator/plan/fingerprint.hpp"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "common/errors.hpp"
#include "common/file_hash_cache.hpp"
#include "common/file_io.hpp"
#include "common/sha256.hpp"
#include "engine/model/hf_weights.hpp"

namespace linsweep {

std::string model_fingerprint(const std::string& dir, FileHashCache& digests) {
  Sha256 h;
  h.update("config.json:" + digests.sha256(dir + "/config.json") + "\n");
  const HfWeights ckpt(dir);  // validates, and names the weight files
  std::vector<std::string> files = ckpt.files();
  std::sort(files.begin(), files.end());
  for (const auto& f : files) h.update(std::filesystem::path(f).filename().string() + ":" + digests.sha256(f) + "\n");
  return h.hex();
}

std::string tokenizer_fingerprint(const std::string& dir, FileHashCache& digests) {
  Sha256 h;
  bool any = false;
  for (const char* name : {"tokenizer.json", "vocab.json", "merges.txt"}) {
    const std::string p = dir + "/" + name;
    if (!is_regular_file(p)) continue;
    h.update(std::string(name) + ":" + digests.sha256(p) + "\n");
    any = true;
  }
  return any ? h.hex() : "";
}

std::string stream_fingerprint(const std::string& corpus_path, const std::string& format,
                               const std::string& tokenizer_fp, FileHashCache& digests) {
  Sha256 h;
  h.update("format:" + format + "\n");
  if (is_directory(corpus_path)) {
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(corpus_path))
      if (e.is_regular_file()) files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) h.update(std::filesystem::path(f).filename().string() + ":" + digests.sha256(f) + "\n");
  } else {
    h.update("file:" + digests.sha256(corpus_path) + "\n");
  }
  if (format != "npy") h.update("tokenizer:" + tokenizer_fp + "\n");
  return h.hex();
}

}  // namespace linsweep
