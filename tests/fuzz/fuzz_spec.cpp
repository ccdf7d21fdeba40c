// Fuzz target: a sweep spec (YAML) through load_spec, beside a view of the repository's fixtures.
#include "fuzz_support.hpp"
#include "fuzz_targets.hpp"
#include "orchestrator/spec/spec.hpp"

namespace linsweep {

int fuzz_spec(const std::uint8_t* data, std::size_t size) {
  fuzz::register_spec_experiments();
  // examples/*.yaml name their models and corpora as ../tests/data/...: the same relative paths
  // resolve from scratch/spec/examples/ through a link to the source tree's tests/, so that seeds
  // taken from examples/ reach the model, corpus, split and experiment checks.
  fuzz::link_input("spec/tests", fuzz::source_dir() + "/tests");
  const std::string path = fuzz::write_input("spec/examples/spec.yaml", fuzz::as_text(data, size));
  fuzz::expect_bad_input([&] { (void)load_spec(path); });
  return 0;
}

}  // namespace linsweep

LINSWEEP_FUZZ_ENTRY(fuzz_spec)
