// Every fuzz target, one per input parser, by name (the fuzzer binaries are fuzz_<name>).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace linsweep {

// Each returns 0 (libFuzzer's convention); a malformed input ends in a bad-input project
// error, caught inside. Anything else (a sanitizer report, another exception, an abort from a
// broken invariant) is a bug in the parser. Not thread safe: each writes its own scratch file.
int fuzz_safetensors(const std::uint8_t* data, std::size_t size);
int fuzz_safetensors_index(const std::uint8_t* data, std::size_t size);
int fuzz_model_config(const std::uint8_t* data, std::size_t size);
int fuzz_vocab_merges(const std::uint8_t* data, std::size_t size);
int fuzz_tokenizer_json(const std::uint8_t* data, std::size_t size);
int fuzz_tokenizer_model(const std::uint8_t* data, std::size_t size);
int fuzz_tokenizer_config(const std::uint8_t* data, std::size_t size);
int fuzz_spec(const std::uint8_t* data, std::size_t size);
int fuzz_unit_file(const std::uint8_t* data, std::size_t size);
int fuzz_wikitext(const std::uint8_t* data, std::size_t size);
int fuzz_lambada(const std::uint8_t* data, std::size_t size);
int fuzz_brown(const std::uint8_t* data, std::size_t size);
int fuzz_npy(const std::uint8_t* data, std::size_t size);

struct FuzzTarget {
  const char* name;
  int (*run)(const std::uint8_t*, std::size_t);
};

// All of the above, in this order (the replay tool looks targets up here).
inline const std::vector<FuzzTarget>& fuzz_targets() {
  static const std::vector<FuzzTarget> targets = {
      {"safetensors", fuzz_safetensors},
      {"safetensors_index", fuzz_safetensors_index},
      {"model_config", fuzz_model_config},
      {"vocab_merges", fuzz_vocab_merges},
      {"tokenizer_json", fuzz_tokenizer_json},
      {"tokenizer_model", fuzz_tokenizer_model},
      {"tokenizer_config", fuzz_tokenizer_config},
      {"spec", fuzz_spec},
      {"unit_file", fuzz_unit_file},
      {"wikitext", fuzz_wikitext},
      {"lambada", fuzz_lambada},
      {"brown", fuzz_brown},
      {"npy", fuzz_npy},
  };
  return targets;
}

}  // namespace linsweep
