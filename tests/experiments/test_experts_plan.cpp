// The experts experiment's plan: a unit per model, corpus and sparse layer of the sweep's layers;
// none for a dense layer or a dense model, so a sweep of dense models plans none.
#include <set>
#include <string>

#include "orchestrator/plan/plan.hpp"
#include "orchestrator/spec/spec.hpp"
#include "support/catch.hpp"
#include "support/test_support.hpp"

using namespace linsweep;
using linsweep::test::ScratchDir;

namespace {

std::set<std::string> experts_units(const ScratchDir& dir, const std::string& models, const std::string& layers) {
  test::write_text(dir / "spec.yaml", "store: " + (dir / "store") + "\ncontext: 16\nmodels:\n" + models +
                                          "corpora:\n  - {name: s, path: " + test::tokens_file("tiny-gpt2") +
                                          "}\nsplits:\n  fit: {start: 0, tokens: 128}\n  eval: {start: 128, tokens: "
                                          "64}\nlayers: " +
                                          layers + "\nexperiments:\n  experts: {bootstrap: 10}\n");
  std::set<std::string> out;  // slots
  for (const auto& u : make_plan(load_spec(dir / "spec.yaml")).units) {
    if (u.kind != "experts") continue;
    out.insert(u.slot);
    CHECK(u.slot == "experts/" + u.model + "/s/layer" + std::to_string(u.params.at("layer").get<std::int64_t>()));
    CHECK(u.params.at("experts") == 6);
    CHECK(u.deps.empty());  // it fits its experts itself
  }
  return out;
}

}  // namespace

TEST_CASE("good_: experts plans the sparse layers of the MoE models alone") {
  ScratchDir dir;
  const std::string zoo = test::data_dir() + "/models/hf_zoo/";
  const std::string both =
      "  - {name: moe, path: " + zoo + "qwen2-moe-f32}\n  - {name: dense, path: " + zoo + "qwen3-f32}\n";
  // Qwen2-MoE's layer 0 is dense (mlp_only_layers); Qwen3 is dense throughout.
  CHECK(experts_units(dir, both, "all") == std::set<std::string>{"experts/moe/s/layer1", "experts/moe/s/layer2"});
  CHECK(experts_units(dir, both, "[0, 2]") == std::set<std::string>{"experts/moe/s/layer2"});
  CHECK(experts_units(dir, both, "[0]").empty());
  CHECK(experts_units(dir, "  - {name: dense, path: " + zoo + "qwen3-f32}\n", "all").empty());
}
