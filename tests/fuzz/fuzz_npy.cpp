// Fuzz target: a .npy token array through check_npy_tokens and read_token_stream.
#include "engine/corpus/corpus.hpp"
#include "engine/corpus/npy.hpp"
#include "fuzz_support.hpp"
#include "fuzz_targets.hpp"

namespace linsweep {

int fuzz_npy(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write_input("tokens.npy", fuzz::as_text(data, size));
  bool header_ok = false;
  fuzz::expect_bad_input([&] {
    check_npy_tokens(path);  // what a spec checks before any work
    header_ok = true;
  });
  fuzz::expect_bad_input([&] {
    const auto stream = read_token_stream(path, CorpusFormat::kNpy, nullptr, std::nullopt);
    // The two share their header checks: a stream read from a header the check refused would
    // mean a spec can pass a file its units then fail on in a different way.
    if (!header_ok) fuzz::fail("read_token_stream accepted a file check_npy_tokens refused");
    for (TokenId id : stream)
      if (id < 0) fuzz::fail("negative token id " + std::to_string(id));
  });
  return 0;
}

}  // namespace linsweep

LINSWEEP_FUZZ_ENTRY(fuzz_npy)
