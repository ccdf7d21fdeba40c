// HF directory export: affine maps folded into MLP weights, reloaded and compared with the hooked model.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/InferenceMode.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "common/errors.hpp"
#include "engine/model/export_hf.hpp"
#include "engine/model/load_model.hpp"
#include "engine/safetensors.hpp"
#include "support/catch.hpp"
#include "support/fixture_windows.hpp"

using namespace linsweep;
using Catch::Matchers::ContainsSubstring;
using linsweep::test::ScratchDir;

namespace {

namespace fs = std::filesystem;

const char* const kModels[] = {"tiny-gpt2", "tiny-neox", "tiny-neox-seq"};

// The first `n` windows of the fixture's golden eval split as ids [n, context].
at::Tensor window_ids(const std::string& name, std::int64_t n) {
  const Windows w = test::golden_windows(name, "eval");
  n = std::min(n, w.count);
  std::vector<std::int64_t> ids(w.ids.begin(), w.ids.begin() + n * w.context);
  return at::tensor(ids, at::kLong).view({n, w.context});
}

at::Tensor logits(LanguageModel& m, const at::Tensor& ids) {
  c10::InferenceMode guard;
  return m.forward(ids).to(at::kDouble);
}

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

// A seeded random map of the size of `d`, scaled so that the substitution changes the logits
// clearly without overwhelming the residual stream.
AffineMap random_map(std::int64_t d, std::uint64_t seed) {
  auto gen = at::detail::createCPUGenerator(seed);
  return {at::randn({d, d}, gen, at::kFloat) * 0.05, at::randn({d}, gen, at::kFloat) * 0.05};
}

std::set<std::string> entries(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

// A model of an architecture the exporter does not know; never run.
class ToyModel : public LanguageModel {
 public:
  using LanguageModel::LanguageModel;
  at::Tensor final_norm(const at::Tensor& h) override { return h; }
  at::Tensor head(const at::Tensor& h) override { return h; }
  at::Tensor input_embedding(const at::Tensor& ids) override { return ids; }

 protected:
  at::Tensor embed_at(const at::Tensor& ids, int64_t) override { return ids; }
  at::Tensor layer_step(int64_t, const at::Tensor& h, KvCache*) override { return h; }
};

}  // namespace

TEST_CASE("export folds an affine map into the MLP: the reloaded model matches the hooked one") {
  for (const char* name : kModels) {
    INFO(name);
    LoadedModel lm = load_model(test::model_dir(name), {"cpu", "float32"});
    const std::int64_t layer = test::golden()[name]["layer"].get<std::int64_t>();
    const AffineMap map = random_map(lm.config().d_model, 1234 + layer);
    const at::Tensor ids = window_ids(name, 4);

    const at::Tensor plain = logits(*lm.model, ids);
    lm.model->hook(layer).use_affine(map);
    const at::Tensor hooked = logits(*lm.model, ids);
    // The substitution must matter, or the comparison below would prove nothing.
    CHECK(max_abs_diff(plain, hooked) > 1e-2);

    ScratchDir scratch;
    const std::string out = scratch / "export";
    export_hf_directory(*lm.model, {{layer, map}}, test::model_dir(name), out);
    LoadedModel back = load_model(out, {"cpu", "float32"});
    REQUIRE(back.model->hook(layer).mode() == MlpHook::Mode::kMlp);
    const double diff = max_abs_diff(logits(*back.model, ids), hooked);
    CHECK(diff <= 1e-4);

    // Only the folded layer's MLP changed: every other tensor is the source's, bit for bit.
    SafetensorsFile exported(out + "/model.safetensors");
    SafetensorsFile source(test::model_dir(name) + "/model.safetensors");
    const std::string mlp =
        (lm.config().architecture == "gpt2" ? "h." : "gpt_neox.layers.") + std::to_string(layer) + ".mlp.";
    for (const auto& [key, info] : exported.tensors()) {
      INFO(key);
      CHECK(info.dtype == DType::kF32);
      if (key.rfind(mlp, 0) == 0) continue;
      const TensorInfo* src = source.find(key);
      REQUIRE(src != nullptr);
      CHECK(std::equal(info.data.begin(), info.data.end(), src->data.begin(), src->data.end()));
    }
  }
}

TEST_CASE("export with no maps reproduces the model, its config.json and its tokenizer files") {
  for (const char* name : kModels) {
    INFO(name);
    const std::string src = test::model_dir(name);
    LoadedModel lm = load_model(src, {"cpu", "float32"});
    const at::Tensor ids = window_ids(name, 4);
    ScratchDir scratch;
    const std::string out = scratch / "nested/export";  // a missing parent is created
    export_hf_directory(*lm.model, {}, src, out, {{{"source", name}}});
    CHECK(entries(scratch / "nested") == std::set<std::string>{"export"});  // no temporary left

    LoadedModel back = load_model(out, {"cpu", "float32"});
    CHECK(max_abs_diff(logits(*back.model, ids), logits(*lm.model, ids)) == 0.0);  // same bits, same kernels
    CHECK(test::read_text(out + "/config.json") == test::read_text(src + "/config.json"));
    for (const char* file : kExportedTokenizerFiles) {
      INFO(file);
      CHECK(fs::exists(out + "/" + file) == fs::exists(src + "/" + file));
      if (fs::exists(src + "/" + file)) CHECK(test::read_text(out + "/" + file) == test::read_text(src + "/" + file));
    }
    SafetensorsFile st(out + "/model.safetensors");
    CHECK(st.metadata().at("format") == "pt");
    CHECK(st.metadata().at("source") == name);
    CHECK(st.tensors().size() == lm.model->named_parameters().size());
  }
}

TEST_CASE("export replaces an existing directory whole and refuses to replace a file") {
  LoadedModel lm = load_model(test::model_dir("tiny-neox"), {"cpu", "float32"});
  ScratchDir scratch;
  const std::string out = scratch / "export";
  export_hf_directory(*lm.model, {}, test::model_dir("tiny-neox"), out);
  test::write_text(out + "/stale.txt", "from an earlier export");
  export_hf_directory(*lm.model, {{0, random_map(64, 7)}}, test::model_dir("tiny-neox"), out + "/");
  CHECK(entries(out) == std::set<std::string>{"config.json", "model.safetensors", "tokenizer.json"});
  CHECK(entries(scratch.path()) == std::set<std::string>{"export"});

  const std::string file = scratch / "a-file";
  test::write_text(file, "keep me");
  CHECK_THROWS_AS(export_hf_directory(*lm.model, {}, test::model_dir("tiny-neox"), file), ModelError);
  CHECK(test::read_text(file) == "keep me");
  CHECK_THROWS_AS(export_hf_directory(*lm.model, {}, test::model_dir("tiny-neox"), "/"), ModelError);
  CHECK_THROWS_WITH(export_hf_directory(*lm.model, {}, test::model_dir("tiny-neox"), out, {{{"format", "np"}}}),
                    ContainsSubstring("'format' must be 'pt'"));
}

TEST_CASE("export refuses what it cannot write faithfully, before writing anything") {
  ScratchDir scratch;
  const std::string out = scratch / "export";

  SECTION("d_ff < 2·d leaves no room for [x, -x]") {
    auto model = build_model(model_config(
        "gpt2", {.vocab_size = 1024, .d_model = 64, .n_layers = 3, .n_heads = 4, .d_ff = 100, .max_positions = 256}));
    CHECK_THROWS_WITH(export_hf_directory(*model, {{0, random_map(64, 1)}}, test::model_dir("tiny-gpt2"), out),
                      ContainsSubstring("d_ff 100 < 2·d_model 128"));
    // Without maps the size is fine, but tiny-gpt2's config.json describes another model.
    CHECK_THROWS_WITH(export_hf_directory(*model, {}, test::model_dir("tiny-gpt2"), out),
                      ContainsSubstring("does not describe the model (d_ff differs)"));
  }
  SECTION("maps of the wrong layer, shape or value") {
    LoadedModel lm = load_model(test::model_dir("tiny-gpt2"), {"cpu", "float32"});
    const std::string src = test::model_dir("tiny-gpt2");
    for (std::int64_t bad : {-1, 3})
      CHECK_THROWS_WITH(export_hf_directory(*lm.model, {{bad, random_map(64, 1)}}, src, out),
                        ContainsSubstring("layers 0..2"));
    CHECK_THROWS_WITH(export_hf_directory(*lm.model, {{0, random_map(32, 1)}}, src, out),
                      ContainsSubstring("[64, 64]"));
    AffineMap nan = random_map(64, 1);
    nan.bias[3].fill_(std::nan(""));
    CHECK_THROWS_WITH(export_hf_directory(*lm.model, {{0, nan}}, src, out), ContainsSubstring("not finite"));
    CHECK_THROWS_AS(export_hf_directory(*lm.model, {}, scratch / "missing-source", out), ModelError);
  }
  SECTION("an architecture without a known MLP layout") {
    ModelConfig c;
    c.architecture = "toy";
    c.n_layers = 1;
    ToyModel toy(c);
    CHECK_THROWS_WITH(export_hf_directory(toy, {}, test::model_dir("tiny-gpt2"), out), ContainsSubstring("'toy'"));
  }
  CHECK(entries(scratch.path()).empty());
}
