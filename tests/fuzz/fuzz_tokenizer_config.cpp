// Fuzz target: an HF tokenizer_config.json beside tiny-neox's tokenizer.json, through
// load_tokenizer (read_tokenizer_config, then the BOS/EOS choices it makes).
#include "engine/tokenizer/tokenizer.hpp"
#include "fuzz_support.hpp"
#include "fuzz_targets.hpp"
#include "tokenizer_checks.hpp"

namespace linsweep {

int fuzz_tokenizer_config(const std::uint8_t* data, std::size_t size) {
  fuzz::link_input("config_dir/tokenizer.json", fuzz::test_data_dir() + "/models/tiny-neox/tokenizer.json");
  const std::string path = fuzz::write_input("config_dir/tokenizer_config.json", fuzz::as_text(data, size));
  fuzz::expect_bad_input([&] {
    const auto tok = load_tokenizer(path.substr(0, path.size() - std::string("/tokenizer_config.json").size()));
    for (TokenId id : tok->encode_document("a b", "text"))
      if (id < 0 || id >= tok->id_limit()) fuzz::fail("token " + std::to_string(id) + " outside the vocabulary");
  });
  return 0;
}

}  // namespace linsweep

LINSWEEP_FUZZ_ENTRY(fuzz_tokenizer_config)
