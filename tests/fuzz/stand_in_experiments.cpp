// Stand-in experiments for the spec fuzzer. The real experiments see LibTorch, which the
// libFuzzer build leaves out, so the spec reader is fuzzed against experiments that declare one
// parameter of every type and range the real ones use, under the names the seeds (taken from
// examples/) use. tests/orchestrator/test_spec.cpp checks the real declarations.
#include "experiments/framework/experiment.hpp"
#include "experiments/framework/layer_params.hpp"
#include "fuzz_support.hpp"

namespace linsweep::fuzz {
namespace {

struct Numbers {
  std::vector<double> lambda{0.01};
  std::int64_t bootstrap = 1000, seed = 0;
  double holdout = 0.3;
  bool prefix_cache = true;
};
struct Names {
  std::vector<std::string> variants{"linear"};
  std::string source;
  std::vector<std::string> targets;
  nlohmann::json layers = "all";
  std::vector<std::int64_t> order;
};

ExperimentDef numbers(const char* name) {
  ParamSchema<Numbers> s;
  s.add("lambda", &Numbers::lambda, non_empty(distinct(positive())), "")
      .add("bootstrap", &Numbers::bootstrap, at_least(1), "")
      .add("seed", &Numbers::seed, at_least(0), "")
      .add("holdout", &Numbers::holdout, fraction(), "")
      .add("prefix_cache", &Numbers::prefix_cache, any_value(), "");
  return make_experiment<Numbers>(name, "", 0, s, [](const Numbers&, PlanBuilder&) {});
}

ExperimentDef names(const char* name) {
  ParamSchema<Names> s;
  s.add("variants", &Names::variants, distinct(one_of({"linear", "pca:8", "mlp:16"})), "")
      .corpus("source", &Names::source, "")
      .corpora("targets", &Names::targets, "")
      .layers("layers", &Names::layers, "")
      .add("order", &Names::order, distinct(at_least(0)), "");
  return make_experiment<Names>(
      name, "", 0, s, [](const Names&, PlanBuilder&) {}, validate_layer_param<Names, &Names::layers>("layers"));
}

}  // namespace

void register_spec_experiments() {
  static const bool done = [] {
    auto& registry = ExperimentRegistry::instance();
    if (registry.experiment("fit") == nullptr) {
      for (const char* n : {"fit", "all_linear", "compound"}) registry.add(numbers(n));
      for (const char* n : {"gate", "token_context", "nofly", "clusters", "progressive", "finetune"})
        registry.add(names(n));
    }
    return true;
  }();
  (void)done;
}

}  // namespace linsweep::fuzz
