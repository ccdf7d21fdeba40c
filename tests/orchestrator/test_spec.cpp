// Sweep spec: the example loads with its defaults; every kind of mistake names file, line, field.
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "orchestrator/spec/spec.hpp"
#include "support/catch.hpp"
#include "support/test_support.hpp"

using namespace linsweep;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;
using linsweep::test::ScratchDir;

namespace {

const std::string kExample = std::string(linsweep::test::source_path()) + "/examples/fixture.yaml";

// A minimal valid spec in `dir`, with `extra` appended (YAML).
std::string write_spec(const ScratchDir& dir, const std::string& body) {
  const std::string m = test::model_dir("tiny-gpt2"), c = test::tokens_file("tiny-gpt2");
  const std::string text = "store: " + (dir / "store") + "\ncontext: 32\nmodels:\n  - {name: a, path: " + m +
                           "}\ncorpora:\n  - {name: s, path: " + c + ", format: npy}\n" + body;
  test::write_text(dir / "spec.yaml", text);
  return dir / "spec.yaml";
}

}  // namespace

TEST_CASE("good_: the example spec loads with paths resolved and defaults filled") {
  const SweepSpec s = load_spec(kExample);
  CHECK(s.context == 32);
  REQUIRE(s.models.size() == 3);
  CHECK(s.models[1].layers == 3);
  CHECK(std::filesystem::exists(s.models[0].path + "/config.json"));
  CHECK(s.corpora[1].format == "text");
  CHECK(s.splits.at("eval").start == 2560);
  CHECK(s.layers.all);
  CHECK(s.layers.resolve(3) == std::vector<std::int64_t>{0, 1, 2});
  CHECK(s.experiments.at("fit")["lambda"].size() == 3);
  CHECK(s.experiments.at("all_linear")["bootstrap"] == 1000);
  CHECK(s.runtime.ranks_per_group == 1);
  CHECK(s.resources.tasks_per_node == 2);
  CHECK(s.text.find("tiny-neox-seq") != std::string::npos);
  CHECK(load_spec(kExample, "/tmp/elsewhere").store == "/tmp/elsewhere");
}

TEST_CASE("good_: defaults for an almost empty spec; layer lists and ranges") {
  ScratchDir dir;
  {
    const std::string m = test::model_dir("tiny-gpt2"), c = test::tokens_file("tiny-gpt2");
    test::write_text(dir / "min.yaml",
                     "store: s\nmodels:\n  - {name: a, path: " + m + "}\ncorpora:\n  - {name: s, path: " + c + "}\n");
    CHECK(load_spec(dir / "min.yaml").context == 256);  // default 512, capped by the model's positions
  }
  const SweepSpec s = load_spec(
      write_spec(dir, "layers: [2, \"0-1\", 1]\nexperiments:\n  fit:\n  gate: {variants: [linear, \"pca:2\"]}\n"));
  CHECK(s.runtime.batch == 8);
  CHECK(s.context == 32);
  CHECK(s.runtime.device == "auto");
  CHECK(s.layers.resolve(3) == std::vector<std::int64_t>{0, 1, 2});
  CHECK(s.experiments.at("fit")["lambda"] == nlohmann::json::array({0.01}));
  CHECK(s.experiments.at("gate")["variants"].size() == 2);
}

TEST_CASE("bad_: spec mistakes are SpecErrors naming file, line and field") {
  struct Case {
    const char* name;
    std::string body;
    const char* message;
  };
  const Case cases[] = {
      {"bad_unknown_top_key", "modles: []\n", ":7: modles: unknown key"},
      {"bad_unknown_runtime_key", "runtime:\n  bach: 4\n", ":8: runtime.bach: unknown key"},
      {"bad_type", "runtime:\n  batch: many\n", ":8: runtime.batch: expected an integer"},
      {"bad_range", "runtime:\n  ranks_per_group: 0\n",
       "runtime.ranks_per_group: 0 is out of range (expected in [1, 4096])"},
      {"bad_overlap", "splits:\n  fit: {start: 0, tokens: 100}\n  eval: {start: 50, tokens: 100}\n",
       ":9: splits.eval: overlaps splits.fit [0, 100)"},
      {"bad_short_split", "splits:\n  fit: {start: 0, tokens: 10}\n",
       "splits.fit.tokens: 10 tokens hold no window of 32"},
      {"bad_layers", "layers: [0, 7]\n", ":7: layers: layer 7 is outside model 'a' (layers 0..2)"},
      {"bad_layer_range", "layers: [\"3-1\"]\n", "is not a layer or an ascending"},
      {"bad_experiment", "experiments:\n  fitt: {}\n",
       ":8: experiments.fitt: unknown key (did you mean 'fit'?) (known: "},
      {"bad_experiment_param", "experiments:\n  fit: {lambdas: [1]}\n", "experiments.fit.lambdas: unknown key"},
      {"bad_param_type", "experiments:\n  fit: {lambda: [x]}\n", "experiments.fit.lambda: expected a number"},
      {"bad_corpus_ref", "experiments:\n  nofly: {source: wiki}\n", "'wiki' is not a corpus of this spec"},
      {"bad_yaml", "runtime: [unclosed\n", "invalid YAML: a '[' is never closed by ']'"},
      {"bad_dtype", "runtime: {dtype: float64}\n", "runtime.dtype: 'float64' is not one of float32"},
      {"bad_gate_variant", "experiments:\n  gate: {variants: [linear, \"pca:0\"]}\n",
       ":8: experiments.gate.variants: 'pca:0' is not a gate variant"},
      {"bad_gate_variant_twice", "experiments:\n  gate: {variants: [linear, linear]}\n",
       "experiments.gate.variants: lists \"linear\" twice"},
      {"bad_gate_variant_huge", "experiments:\n  gate: {variants: [\"mlp:9999999\"]}\n", "is not a gate variant"},
      {"bad_gate_variant_name", "experiments:\n  gate: {variants: [svm]}\n",
       "'svm' is not a gate variant (linear, pca:K or mlp:H"},
      {"bad_holdout", "experiments:\n  clusters: {holdout: 1.5}\n",
       "experiments.clusters.holdout: 1.5 is out of range (expected in (0, 1))"},
      {"bad_k", "experiments:\n  clusters: {k: 0}\n", "experiments.clusters.k: 0 is out of range (expected ≥ 1)"},
      {"bad_nofly_layer", "experiments:\n  nofly: {layer: 9}\n",
       "experiments.nofly.layer: layer 9 is outside model 'a'"},
      {"bad_nofly_self", "experiments:\n  nofly: {source: s, targets: [s]}\n",
       "the source corpus cannot be its own target"},
      {"bad_tc_layers", "experiments:\n  token_context: {layers: [5]}\n",
       "experiments.token_context.layers: layer 5 is outside model 'a'"},
      {"bad_trainable", "experiments:\n  progressive: {trainable: [attention, bias]}\n",
       "experiments.progressive.trainable: 'bias' is not one of attention, mlp, layernorm, head, embeddings"},
      {"bad_progressive_order", "experiments:\n  progressive: {order: [1, 7]}\n",
       "experiments.progressive.order: layer 7 is outside model 'a'"},
      {"bad_progressive_twice", "experiments:\n  progressive: {order: [1, 1]}\n",
       "experiments.progressive.order: lists 1 twice"},
      {"bad_progressive_model", "experiments:\n  progressive: {model: b}\n",
       "experiments.progressive.model: 'b' is not a model of this spec"},
      {"bad_finetune_variant", "experiments:\n  finetune: {variants: [lora]}\n",
       "experiments.finetune.variants: 'lora' is not one of linearized, two_phase, control"},
      {"bad_finetune_lr", "experiments:\n  finetune: {lr: 0}\n",
       "experiments.finetune.lr: 0 is out of range (expected > 0)"},
      {"bad_finetune_fraction", "experiments:\n  finetune: {phase1_fraction: 2}\n",
       "experiments.finetune.phase1_fraction: 2 is out of range (expected in [0, 1])"},
      {"bad_finetune_batch", "experiments:\n  finetune: {batch: 0}\n",
       "experiments.finetune.batch: 0 is out of range (expected ≥ 1)"},
      {"bad_lambda_negative", "experiments:\n  fit: {lambda: [-1]}\n",
       ":8: experiments.fit.lambda: -1 is out of range (expected > 0)"},
      {"bad_lambda_zero", "experiments:\n  fit: {lambda: 0}\n",
       "experiments.fit.lambda: 0 is out of range (expected > 0)"},
      {"bad_lambda_empty", "experiments:\n  fit: {lambda: []}\n",
       "experiments.fit.lambda: expected at least one value"},
      {"bad_bootstrap", "experiments:\n  all_linear: {bootstrap: 0}\n",
       "experiments.all_linear.bootstrap: 0 is out of range (expected ≥ 1)"},
      {"bad_seed", "experiments:\n  gate: {seed: -2}\n", "experiments.gate.seed: -2 is out of range (expected ≥ 0)"},
      {"bad_min_positive", "experiments:\n  nofly: {min_positive: 1.5}\n",
       "experiments.nofly.min_positive: 1.5 is out of range"},
      {"bad_nofly_key", "experiments:\n  nofly: {key: output}\n", "experiments.nofly.key: 'output' is not one of"},
      {"bad_nofly_top", "experiments:\n  nofly: {top: 2}\n", "experiments.nofly.top: 2 is out of range"},
      {"bad_compound_alone", "experiments:\n  compound: {}\n", "experiments.compound: needs experiments.gate"},
      {"bad_curve_steps", "experiments:\n  gate: {curve_steps: 101}\n",
       "experiments.gate.curve_steps: 101 is out of range (expected in [0, 100])"},
      {"bad_holdout_by", "experiments:\n  clusters: {holdout_by: column}\n",
       "experiments.clusters.holdout_by: 'column' is not one of window, row"},
      {"bad_compound_layer", "experiments:\n  gate: {}\n  compound: {layers: [9]}\n",
       "experiments.compound.layers: layer 9 is outside model"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    ScratchDir dir;
    const std::string path = write_spec(dir, c.body);
    try {
      load_spec(path);
      FAIL("accepted " << c.name);
    } catch (const SpecError& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).rfind(path, 0) == 0);
      CHECK(std::string(e.what()).find(c.message) != std::string::npos);
      CHECK(e.exit_code() == ExitCode::kBadInput);
    }
  }
}

TEST_CASE("bad_: missing files, duplicate names and a context past a model's positions") {
  ScratchDir dir;
  const std::string m = test::model_dir("tiny-gpt2"), c = test::tokens_file("tiny-gpt2");
  struct Case {
    const char* name;
    std::string text;
    const char* message;
  };
  const Case cases[] = {
      {"bad_model_path",
       "store: s\nmodels:\n  - {name: a, path: /nonexistent/model}\ncorpora:\n  - {name: s, path: " + c + "}\n",
       ":3: models[0].path: /nonexistent/model: does not exist"},
      {"bad_corpus_path",
       "store: s\nmodels:\n  - {name: a, path: " + m + "}\ncorpora:\n  - {name: s, path: nope.txt}\n",
       ":5: corpora[0].path: '"},
      {"bad_duplicate_model",
       "store: s\nmodels:\n  - {name: a, path: " + m + "}\n  - {name: a, path: " + m +
           "}\ncorpora:\n  - {name: s, path: " + c + "}\n",
       ":4: models[1].name: duplicate model name 'a'"},
      {"bad_duplicate_corpus",
       "store: s\nmodels:\n  - {name: a, path: " + m + "}\ncorpora:\n  - {name: s, path: " + c +
           "}\n  - {name: s, path: " + c + "}\n",
       "corpora[1].name: duplicate corpus name 's'"},
      {"bad_context",
       "store: s\ncontext: 4096\nmodels:\n  - {name: a, path: " + m + "}\ncorpora:\n  - {name: s, path: " + c + "}\n",
       ":2: context: 4096 is longer than model 'a' allows (256 positions)"},
      {"bad_no_models", "store: s\ncorpora:\n  - {name: s, path: " + c + "}\n", "models: expected a non-empty list"},
      {"bad_no_store", "models:\n  - {name: a, path: " + m + "}\ncorpora:\n  - {name: s, path: " + c + "}\n",
       "store: missing"},
  };
  for (const auto& cs : cases) {
    INFO(cs.name);
    test::write_text(dir / "spec.yaml", cs.text);
    CHECK_THROWS_WITH(load_spec(dir / "spec.yaml"), ContainsSubstring(cs.message) && StartsWith(dir / "spec.yaml"));
  }
}

TEST_CASE("bad_: model and corpus names that would leave the store as file names are refused") {
  ScratchDir dir;
  const std::string m = test::model_dir("tiny-gpt2"), c = test::tokens_file("tiny-gpt2");
  auto spec = [&](const std::string& model, const std::string& corpus) {
    return "store: s\nmodels:\n  - {name: " + model + ", path: " + m + "}\ncorpora:\n  - {name: " + corpus +
           ", path: " + c + "}\n";
  };
  struct Case {
    const char* name;
    std::string text;
    std::string message;
  };
  const Case cases[] = {
      {"bad_model_dotdot", spec("\"../../evil\"", "s"),
       ":3: models[0].name: '../../evil' must start with a letter or a digit"},
      {"bad_model_slash", spec("\"a/../../b\"", "s"), ":3: models[0].name: 'a/../../b' contains '/'"},
      {"bad_model_absolute", spec("/etc/x", "s"), "models[0].name: '/etc/x' must start with a letter or a digit"},
      {"bad_model_hidden", spec(".m", "s"), "models[0].name: '.m' must start with a letter or a digit"},
      {"bad_model_space", spec("\"gpt 2\"", "s"), "models[0].name: 'gpt 2' contains ' '"},
      {"bad_model_long", spec(std::string(129, 'm'), "s"),
       "models[0].name: '" + std::string(129, 'm') + "' is longer than 128 bytes"},
      {"bad_corpus_dotdot", spec("a", "\"..\""), ":5: corpora[0].name: '..' must start with a letter or a digit"},
      {"bad_corpus_slash", spec("a", "\"x/y\""), "corpora[0].name: 'x/y' contains '/'"},
      {"bad_corpus_newline", spec("a", "\"x\\ny\""), "corpora[0].name: 'x\\ny' contains '\\n'"},
  };
  for (const auto& cs : cases) {
    INFO(cs.name);
    test::write_text(dir / "spec.yaml", cs.text);
    try {
      load_spec(dir / "spec.yaml");
      FAIL("accepted " << cs.name);
    } catch (const SpecError& e) {
      CHECK(e.exit_code() == ExitCode::kBadInput);
      CHECK_THAT(e.what(), StartsWith(dir / "spec.yaml") && ContainsSubstring(cs.message));
    }
  }
  test::write_text(dir / "spec.yaml", spec("gpt2-medium.v1_x", "wikitext103"));
  CHECK(load_spec(dir / "spec.yaml").models[0].name == "gpt2-medium.v1_x");
}
