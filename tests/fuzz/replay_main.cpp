// fuzz_replay TARGET PATH...: runs fuzz target TARGET on every file under each PATH, as libFuzzer would.
//
// The regular (gcc) build's ctest replays the seeds and every saved crash (tests/fuzz/regressions/)
// through the same entry points as the fuzzers, so that a fixed crash stays fixed on machines
// without clang. A crash, a sanitizer report or an uncaught exception ends the process as it
// would end the fuzzer; the file being replayed is printed first so the failure names it.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_targets.hpp"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc < 3) {
    std::fprintf(stderr, "usage: fuzz_replay TARGET PATH...  (files, or directories replayed recursively)\n");
    return 2;
  }
  const std::string name = argv[1];
  const auto& targets = linsweep::fuzz_targets();
  const auto target = std::find_if(targets.begin(), targets.end(), [&](const auto& t) { return name == t.name; });
  if (target == targets.end()) {
    std::fprintf(stderr, "fuzz_replay: unknown target '%s'\n", name.c_str());
    return 2;
  }
  std::vector<fs::path> files;
  for (int i = 2; i < argc; ++i) {
    const fs::path p = argv[i];
    if (fs::is_directory(p)) {
      for (const auto& e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
    } else if (fs::is_regular_file(p)) {
      files.push_back(p);
    } else if (fs::exists(p)) {
      std::fprintf(stderr, "fuzz_replay: %s is neither a file nor a directory\n", p.c_str());
      return 2;
    }
    // A missing path is no error: a target without saved crashes has no regressions directory.
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {  // its seeds are missing: a wrong path, not a pass
    std::fprintf(stderr, "fuzz_replay: no inputs for '%s'\n", name.c_str());
    return 2;
  }
  for (const auto& f : files) {
    std::fprintf(stderr, "replay %s %s\n", name.c_str(), f.c_str());
    std::ifstream in(f, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    target->run(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("fuzz_replay %s: %zu inputs, no crash\n", name.c_str(), files.size());
  return 0;
}
