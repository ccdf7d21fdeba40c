// The facts of the decoder families of tests/data/models/hf_zoo (Qwen3, Gemma 2 and 3, OLMo 2,
// Phi-3, Mixtral, Qwen2-MoE, OLMoE): what each config.json means, round trips through the 5.x
// form, exact parameter counts, and the refusals. Their numerics are decoder_parity_test.py's.
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "engine/model/architecture_registry.hpp"
#include "engine/model/load_model.hpp"
#include "support/catch.hpp"
#include "support/test_support.hpp"

using namespace linsweep;
using Catch::Matchers::ContainsSubstring;
using linsweep::test::ScratchDir;

namespace {

const char* const kZoo[] = {"qwen3-f32", "gemma2-bf16",  "gemma3-text-f32", "olmo2-f32",
                            "phi3-f32",  "mixtral-bf16", "qwen2-moe-f32",   "olmoe-f32"};

std::string zoo_dir(const std::string& name) { return test::model_dir("hf_zoo/" + name); }

nlohmann::json zoo_json(const std::string& name) {
  return read_json_file(zoo_dir(name) + "/config.json", kMaxConfigBytes);
}

ModelConfig zoo_parse(const nlohmann::json& j) {
  const Architecture& a = ArchitectureRegistry::instance().get(j.at("model_type").get<std::string>(), "test");
  ModelConfig c = a.parse_config(j, "config.json");
  c.architecture = a.name;
  return c;
}

std::int64_t zoo_numel(LanguageModel& m) {
  std::int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

std::vector<bool> sliding_of(const ModelConfig& c) {
  std::vector<bool> out;
  for (std::int64_t l = 0; l < c.n_layers; ++l) out.push_back(c.sliding(l));
  return out;
}

}  // namespace

TEST_CASE("zoo configs: read back the same from the 5.x form, counted exactly, loaded") {
  ScratchDir scratch;
  for (const char* name : kZoo) {
    INFO(name);
    const ModelConfig c = read_model_config(zoo_dir(name));
    write_model_config(c, scratch / name);
    CHECK(read_model_config(scratch / name) == c);
    const auto& arch = ArchitectureRegistry::instance().get(c.architecture, "test");
    auto model = build_model(c);
    CHECK(arch.count_parameters(c) == zoo_numel(*model));
    const LoadedModel lm = load_model(zoo_dir(name), {"cpu", "float32"});
    CHECK(lm.parameter_count == arch.count_parameters(c));
  }
}

TEST_CASE("zoo configs: each family's computations as its config class defines them") {
  const ModelConfig qwen3 = zoo_parse(zoo_json("qwen3-f32"));
  CHECK((qwen3.qk_norm == QkNorm::kPerHead && qwen3.head_dim() == 32 && qwen3.tied_head && !qwen3.sliding_window));
  const ModelConfig gemma2 = zoo_parse(zoo_json("gemma2-bf16"));
  CHECK(gemma2.block_norms == BlockNorms::kSandwich);
  CHECK(sliding_of(gemma2) == std::vector<bool>{true, false, true});
  CHECK((gemma2.attn_softcap == 3.0 && gemma2.final_softcap == 6.0 && gemma2.query_pre_attn_scalar == 24.0));
  const ModelConfig gemma3 = zoo_parse(zoo_json("gemma3-text-f32"));
  CHECK(sliding_of(gemma3) == std::vector<bool>{true, true, false});
  CHECK((gemma3.rotary_base == 1e6 && gemma3.rope.type == RopeType::kLinear && gemma3.rope.factor == 8.0));
  CHECK((gemma3.sliding_rotary_base == 1e4 && gemma3.sliding_rope.type == RopeType::kDefault));
  CHECK((gemma3.qk_norm == QkNorm::kPerHead && !gemma3.attn_softcap && !gemma3.final_softcap));
  const ModelConfig olmo2 = zoo_parse(zoo_json("olmo2-f32"));
  CHECK((olmo2.block_norms == BlockNorms::kPost && olmo2.qk_norm == QkNorm::kWhole &&
         olmo2.norm == NormKind::kRmsNormFloatWeight && olmo2.layer_norm_eps == 1e-6));
  const ModelConfig phi3 = zoo_parse(zoo_json("phi3-f32"));
  CHECK((phi3.fused_qkv && phi3.fused_gate_up && phi3.rotary_pct == 0.75 && phi3.sliding_window == 2047));
  CHECK(sliding_of(phi3) == std::vector<bool>{true, true});
  const ModelConfig mixtral = zoo_parse(zoo_json("mixtral-bf16"));
  CHECK((mixtral.moe.experts == 4 && mixtral.moe.top_k == 2 && mixtral.moe.expert_d_ff == 96 &&
         mixtral.moe.normalize_top_k && mixtral.moe.naming == MoeNaming::kBlockSparseMoe));
  const ModelConfig qwen_moe = zoo_parse(zoo_json("qwen2-moe-f32"));
  CHECK((qwen_moe.moe.experts == 6 && qwen_moe.moe.expert_d_ff == 48 && qwen_moe.moe.shared_d_ff == 96 &&
         !qwen_moe.moe.normalize_top_k && qwen_moe.d_ff == 128 && qwen_moe.attention_bias &&
         !qwen_moe.attention_out_bias));
  CHECK((!qwen_moe.sparse(0) && qwen_moe.sparse(1) && qwen_moe.sparse(2)));
  const ModelConfig olmoe = zoo_parse(zoo_json("olmoe-f32"));
  CHECK((olmoe.moe.experts == 8 && olmoe.moe.top_k == 2 && !olmoe.moe.normalize_top_k &&
         olmoe.qk_norm == QkNorm::kWhole && !olmoe.clip_qkv));
}

TEST_CASE("zoo configs: layer rules, 5.x keys and the MoE layer selection") {
  nlohmann::json gemma3 = zoo_json("gemma3-text-f32");
  gemma3["layer_types"] = {"full_attention", "sliding_attention", "sliding_attention"};
  CHECK(sliding_of(zoo_parse(gemma3)) == std::vector<bool>{false, true, true});  // layer_types wins
  gemma3.erase("rope_local_base_freq");
  gemma3.erase("rope_theta");
  gemma3.erase("rope_scaling");
  gemma3["rope_parameters"] = {{"full_attention", {{"rope_type", "linear"}, {"factor", 8.0}, {"rope_theta", 1e6}}},
                               {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 1e4}}}};
  const ModelConfig v5 = zoo_parse(gemma3);
  CHECK((v5.sliding_rotary_base == 1e4 && v5.rope.type == RopeType::kLinear && v5.rotary_base == 1e6));
  nlohmann::json qwen3 = zoo_json("qwen3-f32");
  qwen3["use_sliding_window"] = true;
  qwen3["sliding_window"] = 8;
  qwen3["max_window_layers"] = 1;
  CHECK(sliding_of(zoo_parse(qwen3)) == std::vector<bool>{false, true, true});
  nlohmann::json qwen_moe = zoo_json("qwen2-moe-f32");
  qwen_moe["mlp_only_layers"] = nlohmann::json::array();
  qwen_moe["decoder_sparse_step"] = 2;
  const ModelConfig step = zoo_parse(qwen_moe);
  CHECK((!step.sparse(0) && step.sparse(1) && !step.sparse(2)));
  CHECK(ArchitectureRegistry::instance().get("qwen2_moe", "test").count_parameters(step) ==
        zoo_numel(*build_model(step)));
  qwen_moe["use_sliding_window"] = true;
  qwen_moe["sliding_window"] = 8;
  CHECK_THROWS_WITH(zoo_parse(qwen_moe), ContainsSubstring("'layer_types'"));
}

TEST_CASE("zoo configs: refused with the file and the key") {
  auto refused = [](nlohmann::json j, const char* key, const nlohmann::json& value, const char* what) {
    j[key] = value;
    CHECK_THROWS_AS(zoo_parse(j), ModelError);
    CHECK_THROWS_WITH(zoo_parse(j), ContainsSubstring("config.json") && ContainsSubstring(what));
  };
  refused(zoo_json("mixtral-bf16"), "num_experts_per_tok", 5, "'num_experts_per_tok' = 5 is outside 1..4");
  refused(zoo_json("olmoe-f32"), "num_experts_per_tok", 0, "'num_experts_per_tok' = 0");
  refused(zoo_json("qwen2-moe-f32"), "mlp_only_layers", nlohmann::json::array({7}), "'mlp_only_layers'");
  refused(zoo_json("phi3-f32"), "rope_scaling", {{"type", "longrope"}, {"short_factor", {1.0}}},
          "'rope_scaling.type' 'longrope' is not supported");
  refused(zoo_json("qwen3-f32"), "final_logit_softcapping", 30.0, "'final_logit_softcapping'");
  refused(zoo_json("gemma2-bf16"), "layer_types", {"sliding_attention"}, "'layer_types'");
  refused(zoo_json("gemma2-bf16"), "attn_logit_softcapping", -1.0, "'attn_logit_softcapping'");
  // Gemma 2 reads its soft-capping keys: null turns a cap off.
  nlohmann::json gemma2 = zoo_json("gemma2-bf16");
  gemma2["final_logit_softcapping"] = nullptr;
  CHECK(!zoo_parse(gemma2).final_softcap);
}
