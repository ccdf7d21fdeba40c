// Fuzz target: an HF config.json through read_model_config, every registered architecture's parser.
#include "engine/model/architecture_registry.hpp"
#include "engine/model/model_config.hpp"
#include "fuzz_support.hpp"
#include "fuzz_targets.hpp"

namespace linsweep {

int fuzz_model_config(const std::uint8_t* data, std::size_t size) {
  fuzz::write_input("model/config.json", fuzz::as_text(data, size));
  fuzz::expect_bad_input([&] {
    const ModelConfig c = read_model_config(fuzz::scratch_dir() + "/model");
    // A loader counts the parameters of every accepted config before allocating any.
    const auto& arch = ArchitectureRegistry::instance().get(c.architecture, "config.json");
    if (arch.count_parameters(c) <= 0) fuzz::fail("accepted config has no parameters");
  });
  return 0;
}

}  // namespace linsweep

LINSWEEP_FUZZ_ENTRY(fuzz_model_config)
