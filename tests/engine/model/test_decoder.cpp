// The pre-norm decoders' facts: both config.json dialects, round trips, parameter counts,
// roles, and export into a gated MLP. Their numerics are decoder_parity_test.py's.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/InferenceMode.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "engine/model/architecture_registry.hpp"
#include "engine/model/export_hf.hpp"
#include "engine/model/load_model.hpp"
#include "engine/train/parameter_groups.hpp"
#include "support/catch.hpp"
#include "support/test_support.hpp"

using namespace linsweep;
using Catch::Matchers::ContainsSubstring;
using linsweep::test::ScratchDir;

namespace {

const char* const kHfModels[] = {"gemma-f32", "llama-gqa-f32", "llama3-tied-bf16", "mistral-f32", "qwen2-bias-f16"};

std::string hf_dir(const std::string& name) { return test::model_dir("hf_transformers5/" + name); }

ModelConfig parse(const nlohmann::json& j) {
  const Architecture& a = ArchitectureRegistry::instance().get(j.at("model_type").get<std::string>(), "test");
  ModelConfig c = a.parse_config(j, "config.json");
  c.architecture = a.name;
  return c;
}

std::int64_t numel(LanguageModel& m) {
  std::int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

// A small Llama with MLP biases (mlp_bias: true), random weights, its config in `dir`.
std::shared_ptr<LanguageModel> biased_llama(const std::string& dir) {
  const nlohmann::json j = {{"model_type", "llama"},        {"vocab_size", 97},         {"hidden_size", 32},
                            {"num_hidden_layers", 2},       {"num_attention_heads", 4}, {"num_key_value_heads", 2},
                            {"intermediate_size", 48},      {"mlp_bias", true},         {"hidden_act", "silu"},
                            {"max_position_embeddings", 64}};
  ModelConfig c = parse(j);
  write_model_config(c, dir);
  return build_model(c);
}

}  // namespace

TEST_CASE("decoder configs: the 4.x and 5.x dialects of one checkpoint parse alike") {
  for (const char* name : kHfModels) {
    INFO(name);
    const nlohmann::json v5 = read_json_file(hf_dir(name) + "/config.json", kMaxConfigBytes);
    const nlohmann::json v4 = read_json_file(hf_dir(name) + "/config.legacy.json", kMaxConfigBytes);
    const ModelConfig a = parse(v5), b = parse(v4);
    CHECK(a == b);
    CHECK(a.gated_mlp);
    CHECK(a.n_kv_heads == v5.at("num_key_value_heads").get<std::int64_t>());
  }
  const ModelConfig llama3 = parse(read_json_file(hf_dir("llama3-tied-bf16") + "/config.json", kMaxConfigBytes));
  CHECK(llama3.rope.type == RopeType::kLlama3);
  CHECK(llama3.rope.factor == 8.0);
  CHECK(llama3.rope.original_max_positions == 32);
  CHECK(llama3.rotary_base == 500000.0);
  CHECK(llama3.tied_head);
  const ModelConfig qwen = parse(read_json_file(hf_dir("qwen2-bias-f16") + "/config.json", kMaxConfigBytes));
  CHECK((qwen.attention_bias && !qwen.attention_out_bias && !qwen.sliding_window));
  const ModelConfig gemma = parse(read_json_file(hf_dir("gemma-f32") + "/config.json", kMaxConfigBytes));
  CHECK(
      (gemma.norm == NormKind::kRmsNormPlusOne && gemma.scale_embedding && gemma.activation == Activation::kGeluTanh));
}

TEST_CASE("decoder configs: written configs read back the same, and the count is the module's") {
  ScratchDir scratch;
  for (const char* name : kHfModels) {
    INFO(name);
    const ModelConfig c = read_model_config(hf_dir(name));
    write_model_config(c, scratch / name);
    CHECK(read_model_config(scratch / name) == c);
    const auto& arch = ArchitectureRegistry::instance().get(c.architecture, "test");
    auto model = build_model(c);
    CHECK(arch.count_parameters(c) == numel(*model));
  }
}

TEST_CASE("decoder roles: parameter groups by the architecture's record") {
  const ParameterRoles& roles = ArchitectureRegistry::instance().get("llama", "test").roles;
  CHECK(parameter_group(roles, "model.layers.3.self_attn.k_proj.weight") == "attention");
  CHECK(parameter_group(roles, "model.layers.3.mlp.gate_proj.weight") == "mlp");
  CHECK(parameter_group(roles, "model.layers.3.input_layernorm.weight") == "layernorm");
  CHECK(parameter_group(roles, "model.norm.weight") == "layernorm");
  CHECK(parameter_group(roles, "lm_head.weight") == "head");
  CHECK(parameter_group(roles, "model.embed_tokens.weight") == "embeddings");
  CHECK(parameter_layer("model.layers.3.mlp.up_proj.weight") == 3);
}

TEST_CASE("export writes an affine map into a gated MLP with biases, and refuses one without") {
  ScratchDir scratch;
  auto model = biased_llama(scratch / "src");
  auto gen = at::detail::createCPUGenerator(7);
  {
    c10::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.normal_(0.0, 0.1, gen);
  }
  model->eval();
  const AffineMap map{at::randn({32, 32}, gen, at::kFloat) * 0.2, at::randn({32}, gen, at::kFloat) * 0.2};
  const at::Tensor ids = at::randint(0, 97, {2, 16}, gen, at::kLong);
  auto logits = [&](LanguageModel& m) {
    c10::InferenceMode guard;
    return m.forward(ids).to(at::kDouble);
  };
  const at::Tensor plain = logits(*model);
  model->hook(1).use_affine(map);
  const at::Tensor hooked = logits(*model);
  CHECK((plain - hooked).abs().max().item<double>() > 1e-2);
  export_hf_directory(*model, {{1, map}}, scratch / "src", scratch / "out");
  LoadedModel back = load_model(scratch / "out", {"cpu", "float32"});
  CHECK((logits(*back.model) - hooked).abs().max().item<double>() <= 1e-4);

  const LoadedModel unbiased = load_model(hf_dir("llama-gqa-f32"), {"cpu", "float32"});
  CHECK_THROWS_WITH(export_hf_directory(*unbiased.model, {{0, AffineMap{at::zeros({64, 64}), at::zeros({64})}}},
                                        hf_dir("llama-gqa-f32"), scratch / "refused"),
                    ContainsSubstring("mlp_bias"));
  CHECK_FALSE(std::filesystem::exists(scratch / "refused"));
}
