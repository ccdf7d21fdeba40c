// dlmopen of linsweep's SentencePiece module.
#include "engine/tokenizer/sentencepiece_loader.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "common/errors.hpp"

namespace linsweep {
namespace {

constexpr const char* kModuleName = "liblinsweep_sentencepiece.so";

// The executable's directory and its parents, nearest first: a build writes the module at its
// top (build/, build-asan/, build-fuzz/) and its executables there or in tests/ or bench/.
std::vector<std::string> module_candidates() {
  std::vector<std::string> out;
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  for (int up = 0; !ec && up < 3 && !dir.empty(); ++up, dir = dir.parent_path()) {
    out.push_back((dir / kModuleName).string());
    if (dir == dir.root_path()) break;
  }
  return out;
}

template <typename Fn>
Fn symbol(void* handle, const char* name, const std::string& path) {
  void* p = ::dlsym(handle, name);
  if (p == nullptr) throw Error(path + ": SentencePiece module lacks " + name, ExitCode::kUnitsFailed);
  return reinterpret_cast<Fn>(p);
}

SentencePieceModule load_module() {
  std::string tried;
  for (const std::string& path : module_candidates()) {
    if (!std::filesystem::exists(path)) {
      tried += (tried.empty() ? "" : "; ") + path + ": not found";
      continue;
    }
    // A namespace of its own: libsentencepiece's protobuf must not meet LibTorch's.
    void* handle = ::dlmopen(LM_ID_NEWLM, path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = ::dlerror();
      tried += (tried.empty() ? "" : "; ") + path + ": " + (why != nullptr ? why : "dlmopen failed");
      continue;
    }
    return {.load = symbol<LinsweepSpmLoadFn>(handle, "linsweep_spm_load", path),
            .free = symbol<LinsweepSpmFreeFn>(handle, "linsweep_spm_free", path),
            .piece_count = symbol<LinsweepSpmCountFn>(handle, "linsweep_spm_piece_count", path),
            .bos_id = symbol<LinsweepSpmCountFn>(handle, "linsweep_spm_bos_id", path),
            .eos_id = symbol<LinsweepSpmCountFn>(handle, "linsweep_spm_eos_id", path),
            .piece = symbol<LinsweepSpmPieceFn>(handle, "linsweep_spm_piece", path),
            .encode = symbol<LinsweepSpmEncodeFn>(handle, "linsweep_spm_encode", path)};
  }
  throw Error(
      "cannot load linsweep's SentencePiece module (" + tried + "); rebuild linsweep (target linsweep_sentencepiece)",
      ExitCode::kUnitsFailed);
}

}  // namespace

const SentencePieceModule& sentencepiece_module() {
  static const SentencePieceModule module = load_module();
  return module;
}

}  // namespace linsweep
