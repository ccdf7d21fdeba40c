// Model loading and forward passes against the independent reference's golden values.
#include <ATen/ATen.h>

#include <algorithm>
#include <filesystem>

#include "common/errors.hpp"
#include "engine/corpus/npy.hpp"
#include "engine/corpus/windows.hpp"
#include "engine/eval/evaluator.hpp"
#include "engine/model/architecture_registry.hpp"
#include "engine/model/hf_weights.hpp"
#include "engine/model/load_model.hpp"
#include "support/catch.hpp"
#include "support/fixture_windows.hpp"

using namespace linsweep;
using Catch::Matchers::ContainsSubstring;
using linsweep::test::golden_windows;
using linsweep::test::ScratchDir;

namespace {

const char* const kModels[] = {"tiny-gpt2", "tiny-neox", "tiny-neox-seq"};

double rel(double a, double b) { return std::abs(a - b) / std::abs(b); }

// Rewrites every F32 tensor of `dir`'s checkpoint in `dtype` (F16 or BF16).
void convert_checkpoint(const std::string& dir, DType dtype) {
  std::vector<TensorBytes> out;
  {
    SafetensorsFile f(dir + "/model.safetensors");
    for (const auto& [name, info] : f.tensors()) {
      auto t = at::empty(info.shape, at::kFloat);
      std::memcpy(t.data_ptr(), info.data.data(), info.data.size());
      t = t.to(dtype == DType::kF16 ? at::kHalf : at::kBFloat16).contiguous();
      const auto* p = static_cast<const std::uint8_t*>(t.data_ptr());
      out.push_back({name, dtype, info.shape, {p, p + t.numel() * 2}});
    }
  }
  write_safetensors(dir + "/model.safetensors", out);
}

}  // namespace

TEST_CASE("golden: PPL, NLL sum and first-window NLL match the reference for every fixture") {
  for (const char* name : kModels) {
    INFO(name);
    const auto& g = test::golden()[name];
    LoadedModel lm = load_model(test::model_dir(name), {"cpu", "float32"});
    EvalOptions opt;
    opt.keep_token_nll = true;
    const EvalResult r = evaluate(*lm.model, golden_windows(name, "eval"), opt);
    CHECK(r.tokens_scored == g["tokens_scored"].get<std::int64_t>());
    CHECK(rel(r.ppl(), g["ppl"].get<double>()) < 1e-5);
    CHECK(rel(r.nll_sum, g["nll_sum"].get<double>()) < 1e-5);
    const auto first = g["first_window_nll"].get<std::vector<double>>();
    REQUIRE(first.size() == static_cast<std::size_t>(g["context"].get<int>() - 1));
    for (std::size_t t = 0; t < first.size(); ++t) CHECK(std::abs(r.token_nll[t] - first[t]) < 1e-4);
  }
}

TEST_CASE("good_: every stage of a split model reports the whole model's parameters") {
  // GPT-2 ties its head to the embedding; Qwen2-MoE and Mixtral store their own head.
  for (const char* name : {"tiny-gpt2", "hf_zoo/qwen2-moe-f32", "hf_zoo/mixtral-bf16"}) {
    INFO(name);
    const LoadedModel one = load_model(test::model_dir(name), {"cpu", "float32"});
    const std::int64_t whole = one.parameter_count;
    for (std::int64_t stages = 2; stages <= std::min<std::int64_t>(3, one.config().n_layers); ++stages) {
      for (std::int64_t stage = 0; stage < stages; ++stage) {
        INFO("stage " << stage << " of " << stages);
        CHECK(load_model(test::model_dir(name), {.device = "cpu", .dtype = "float32", .stage = stage, .stages = stages})
                  .parameter_count == whole);
      }
    }
  }
}

TEST_CASE("good_: the loaded model reports its configuration and parameters") {
  LoadedModel gpt2 = load_model(test::model_dir("tiny-gpt2"), {"cpu", "float32"});
  CHECK(gpt2.config().architecture == "gpt2");
  CHECK(gpt2.config().n_layers == 3);
  CHECK(gpt2.config().d_ff == 256);
  CHECK(gpt2.device == "cpu");
  CHECK(gpt2.checkpoint_dtypes == "F32");
  // 1024·64 + 256·64 + 3·(2·64 + 64·192 + 192 + 64·64 + 64 + 2·64 + 64·256 + 256 + 256·64 + 64) + 2·64
  CHECK(gpt2.parameter_count ==
        65536 + 16384 + 3 * (128 + 12288 + 192 + 4096 + 64 + 128 + 16384 + 256 + 16384 + 64) + 128);
  LoadedModel neox = load_model(test::model_dir("tiny-neox"), {"cpu", "float32"});
  CHECK(neox.config().vocab_size == 1088);  // padded past the tokenizer's 1024
  CHECK(neox.config().parallel_residual);
  CHECK(!load_model(test::model_dir("tiny-neox-seq"), {"cpu", "float32"}).config().parallel_residual);
  // count_parameters (used to refuse oversized configs before allocating) is exact.
  for (const char* name : {"tiny-gpt2", "tiny-neox", "tiny-neox-seq"}) {
    LoadedModel lm = load_model(test::model_dir(name), {"cpu", "float32"});
    CHECK(ArchitectureRegistry::instance().get(lm.config().architecture, name).count_parameters(lm.config()) ==
          lm.parameter_count);
  }
}

TEST_CASE("good_: F16 and BF16 checkpoints load and stay close to the F32 perplexity") {
  for (DType dt : {DType::kF16, DType::kBF16}) {
    INFO(dtype_name(dt));
    ScratchDir dir;
    test::copy_model("tiny-neox", dir / "m");
    convert_checkpoint(dir / "m", dt);
    LoadedModel lm = load_model(dir / "m", {"cpu", "float32"});
    CHECK(lm.checkpoint_dtypes == dtype_name(dt));
    const double ppl = evaluate(*lm.model, golden_windows("tiny-neox", "eval")).ppl();
    CHECK(rel(ppl, test::golden()["tiny-neox"]["ppl"].get<double>()) < 2e-2);
  }
}

TEST_CASE("good_: bfloat16 compute runs and stays close to float32") {
  LoadedModel lm = load_model(test::model_dir("tiny-gpt2"), {"cpu", "bfloat16"});
  CHECK(lm.dtype == at::kBFloat16);
  const double ppl = evaluate(*lm.model, golden_windows("tiny-gpt2", "eval")).ppl();
  CHECK(rel(ppl, test::golden()["tiny-gpt2"]["ppl"].get<double>()) < 5e-2);
}

TEST_CASE("bad_: broken model directories are refused with the file and problem named") {
  struct Case {
    const char* name;
    std::function<void(const std::string&)> damage;
    const char* message;
  };
  // A damage that merges `patch` into config.json (RFC 7386: a null removes the key).
  auto patch_config = [](std::string patch) {
    return [patch](const std::string& d) {
      auto j = nlohmann::json::parse(test::read_text(d + "/config.json"));
      j.merge_patch(nlohmann::json::parse(patch));
      test::write_text(d + "/config.json", j.dump());
    };
  };
  const Case cases[] = {
      {"bad_missing_config", [](const std::string& d) { std::filesystem::remove(d + "/config.json"); },
       "config.json: missing"},
      {"bad_config_json", [](const std::string& d) { test::write_text(d + "/config.json", "{\"model_type\": "); },
       "config.json: invalid JSON"},
      {"bad_architecture", patch_config(R"({"model_type": "mamba"})"), "unsupported architecture 'mamba' (known: "},
      {"bad_no_model_type", patch_config(R"({"model_type": null})"), "'model_type' is missing"},
      {"bad_field_type", patch_config(R"({"n_layer": "three"})"), "field 'n_layer' is not an integer"},
      {"bad_heads", patch_config(R"({"n_head": 5})"), "not divisible by 5 heads"},
      {"bad_shape", patch_config(R"({"n_inner": 128})"), "has shape [64, 256] but config.json implies [64, 128]"},
      // 4 layers are still within the file's total (attn.bias buffers): the tensors decide.
      {"bad_missing_tensor", patch_config(R"({"n_layer": 4})"), "tensor 'h.3.ln_1.weight' is missing"},
      {"bad_huge_config", patch_config(R"({"vocab_size": 16000000})"), "describes 1024"},
      {"bad_extra_tensor", patch_config(R"({"n_layer": 2})"), "unexpected tensor 'h.2."},
      {"bad_truncated_weights",
       [](const std::string& d) { std::filesystem::resize_file(d + "/model.safetensors", 5000); },
       "outside the data section"},
      {"bad_pickle_only",
       [](const std::string& d) {
         std::filesystem::remove(d + "/model.safetensors");
         test::write_text(d + "/pytorch_model.bin", "PK");
       },
       "pytorch_model.bin: pickle checkpoints are not read"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    ScratchDir dir;
    test::copy_model("tiny-gpt2", dir / "m");
    c.damage(dir / "m");
    try {
      load_model(dir / "m", {"cpu", "float32"});
      FAIL("accepted " << c.name);
    } catch (const ModelError& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(c.message) != std::string::npos);
      CHECK(std::string(e.what()).rfind(dir / "m", 0) == 0);
    }
  }
}

TEST_CASE("bad_: evaluation refuses ids outside the vocabulary and contexts past the positions") {
  LoadedModel lm = load_model(test::model_dir("tiny-gpt2"), {"cpu", "float32"});
  Windows w{4, 1, {1, 2, 3, 5000}};
  CHECK_THROWS_WITH(evaluate(*lm.model, w), ContainsSubstring("outside the model's vocabulary"));
  Windows long_w{300, 1, std::vector<TokenId>(300, 1)};
  CHECK_THROWS_WITH(evaluate(*lm.model, long_w), ContainsSubstring("longer than the model's 256 positions"));
  CHECK_THROWS_AS(load_model(test::model_dir("tiny-gpt2"), {"cuda:3", "float32"}), InputError);
  CHECK_THROWS_AS(load_model(test::model_dir("tiny-gpt2"), {"cpu", "float64"}), InputError);
  CHECK_THROWS_WITH(load_model(test::model_dir("tiny-gpt2"), {"cpu", "float16"}),
                    ContainsSubstring("needs a CUDA device"));
}
