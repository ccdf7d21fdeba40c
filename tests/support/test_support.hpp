// Helpers shared by the tests: fixture paths, golden values, scratch directories.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "common/cache_dir.hpp"
#include "support/test_paths.hpp"

namespace linsweep::test {

inline std::string data_dir() { return test_data_path(); }
inline std::string model_dir(const std::string& name) { return data_dir() + "/models/" + name; }
inline std::string tokens_file(const std::string& name) { return data_dir() + "/models/" + name + ".tokens.npy"; }

inline const nlohmann::json& golden() {
  static const nlohmann::json g = [] {
    std::ifstream in(data_dir() + "/golden.json");
    return nlohmann::json::parse(in);
  }();
  return g;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// A fresh directory under the system temp dir, removed with everything in it on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("linsweep-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string path() const { return path_.string(); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// GPT-2's vocab.json + merges.txt: $LINSWEEP_GPT2_TOKENIZER, else where
// scripts/fetch_gpt2_encoder.sh caches them (ctest runs it first as a fixture).
inline std::string gpt2_tokenizer_dir() {
  if (const char* d = std::getenv("LINSWEEP_GPT2_TOKENIZER")) return d;
  return cache_dir() + "/gpt2-tokenizer";
}

// Copies a fixture model directory into `dest` (created), for tests that then break it.
inline void copy_model(const std::string& name, const std::string& dest) {
  std::filesystem::create_directories(dest);
  for (const auto& e : std::filesystem::directory_iterator(model_dir(name)))
    std::filesystem::copy_file(e.path(), std::filesystem::path(dest) / e.path().filename(),
                               std::filesystem::copy_options::overwrite_existing);
}

}  // namespace linsweep::test
