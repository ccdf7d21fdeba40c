// The experts' hook of a mixture-of-experts layer (moe_hook.hpp) on the OLMoE and Qwen2-MoE
// fixtures: the router's decisions against the router computed by hand, the experts' captured
// outputs against the block's, one expert replaced by an affine map (a constant, then its own
// least-squares fit) against what that must change, and the refusals.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/InferenceMode.h>

#include <map>

#include "common/errors.hpp"
#include "engine/model/load_model.hpp"
#include "support/catch.hpp"
#include "support/test_support.hpp"

using namespace linsweep;

namespace {

// One forward's MLP-hook view of a layer: the block's input X and output Y, [N, d] float64.
struct BlockIo {
  at::Tensor x, y;
};

BlockIo run_block(LanguageModel& model, std::int64_t layer, const at::Tensor& ids) {
  BlockIo io;
  model.hook(layer).set_capture([&](const at::Tensor& x, const at::Tensor& y) {
    io.x = x.reshape({-1, x.size(-1)}).to(at::kDouble);
    io.y = y.reshape({-1, y.size(-1)}).to(at::kDouble);
  });
  {
    c10::InferenceMode guard;
    model.forward(ids);
  }
  model.hook(layer).clear_capture();
  return io;
}

// Every expert's captured share of one forward, float64.
std::map<std::int64_t, ExpertBatch> capture_experts(LanguageModel& model, std::int64_t layer, const at::Tensor& ids) {
  std::map<std::int64_t, ExpertBatch> out;
  model.hook(layer).moe().set_expert_capture([&](const ExpertBatch& b) {
    CHECK(out.count(b.expert) == 0);  // one call per expert and run: positions are grouped
    out[b.expert] = {b.expert, b.positions.clone(), b.x.to(at::kDouble), b.y.to(at::kDouble), b.weight.to(at::kDouble)};
  });
  run_block(model, layer, ids);
  model.hook(layer).moe().set_expert_capture(nullptr);
  return out;
}

double max_abs(const at::Tensor& t) { return t.numel() == 0 ? 0.0 : t.abs().max().item<double>(); }

at::Tensor parameter(LanguageModel& model, const std::string& name) {
  for (const auto& p : model.named_parameters())
    if (p.key() == name) return p.value().detach().to(at::kDouble);
  FAIL("no parameter " << name);
  return {};
}

// Least squares y ≈ x·W + b in float64 (an augmented column of ones).
AffineMap least_squares(const at::Tensor& x, const at::Tensor& y) {
  const at::Tensor xa = at::cat({x, at::ones({x.size(0), 1}, x.options())}, 1);
  const at::Tensor wb = std::get<0>(at::linalg_lstsq(xa, y));  // [d + 1, d]
  return {wb.narrow(0, 0, x.size(1)).to(at::kFloat), wb[x.size(1)].to(at::kFloat)};
}

at::Tensor token_ids(std::int64_t batch, std::int64_t t) {
  auto gen = at::detail::createCPUGenerator(11);
  return at::randint(0, 512, {batch, t}, gen, at::kLong);
}

}  // namespace

TEST_CASE("MoE hook: the router's decision is softmax-top-k of x·Wgᵀ, and the experts sum to the block") {
  for (const char* name : {"olmoe-f32", "qwen2-moe-f32"}) {
    INFO(name);
    LoadedModel lm = load_model(test::model_dir("hf_zoo/") + name, {"cpu", "float32"});
    LanguageModel& model = *lm.model;
    const std::int64_t layer = 1, k = lm.config().moe.top_k;
    const at::Tensor ids = token_ids(2, 16);
    RouterDecision seen;
    model.hook(layer).moe().set_router_observer([&](const RouterDecision& r) { seen = r; });
    const BlockIo io = run_block(model, layer, ids);
    model.hook(layer).moe().set_router_observer(nullptr);
    REQUIRE(seen.logits.sizes() == at::IntArrayRef({2, 16, lm.config().moe.experts}));
    REQUIRE(seen.experts.sizes() == at::IntArrayRef({2, 16, k}));
    const at::Tensor logits = io.x.matmul(parameter(model, "model.layers.1.mlp.gate.weight").t());
    CHECK(max_abs(seen.logits.reshape({32, -1}).to(at::kDouble) - logits) <= 1e-5 * max_abs(logits));
    const auto [probs, chosen] = at::softmax(logits, -1).topk(k, -1);
    CHECK(at::equal(seen.experts.reshape({32, k}), chosen));
    CHECK(max_abs(seen.weights.reshape({32, k}).to(at::kDouble) - probs) <= 1e-6);  // norm_topk_prob false

    // Σ_e w_e·y_e over the captured experts is the block's output (Qwen2-MoE: plus its shared expert).
    const auto experts = capture_experts(model, layer, ids);
    at::Tensor sum = at::zeros_like(io.y);
    std::int64_t routed = 0;
    for (const auto& [e, b] : experts) {
      sum.index_add_(0, b.positions, b.y * b.weight.unsqueeze(1));
      routed += b.positions.numel();
    }
    CHECK(routed == 32 * k);
    if (lm.config().moe.shared_d_ff == 0) CHECK(max_abs(sum - io.y) <= 1e-5 * max_abs(io.y));
  }
}

TEST_CASE("MoE hook: one expert replaced by an affine map changes exactly its share") {
  LoadedModel lm = load_model(test::model_dir("hf_zoo/olmoe-f32"), {"cpu", "float32"});
  LanguageModel& model = *lm.model;
  const std::int64_t layer = 0, d = lm.config().d_model;
  const at::Tensor ids = token_ids(16, 32);  // 512 positions: about 128 per expert, > d + 1
  const BlockIo base = run_block(model, layer, ids);
  const auto experts = capture_experts(model, layer, ids);
  std::int64_t e = 0;  // the busiest expert, so that its fit is overdetermined
  for (const auto& [i, b] : experts)
    if (b.positions.numel() > experts.at(e).positions.numel()) e = i;
  const ExpertBatch& own = experts.at(e);
  REQUIRE(own.positions.numel() > d + 1);
  const at::Tensor others = at::ones({base.y.size(0)}, at::kBool).index_fill_(0, own.positions, false);

  auto replaced_by = [&](const AffineMap& map) {
    model.hook(layer).moe().use_expert_affine(e, map);
    const BlockIo io = run_block(model, layer, ids);
    model.hook(layer).moe().use_expert(e);
    // Elsewhere nothing moves; at e's positions only e's weighted output, by w·(x·W + b − y).
    CHECK(max_abs(io.y.index({others}) - base.y.index({others})) == 0.0);
    const at::Tensor want =
        own.weight.unsqueeze(1) * (own.x.matmul(map.weight.to(at::kDouble)) + map.bias.to(at::kDouble) - own.y);
    const at::Tensor moved = io.y.index_select(0, own.positions) - base.y.index_select(0, own.positions);
    CHECK(max_abs(moved - want) <= 1e-5 * (max_abs(want) + max_abs(base.y)));
    return max_abs(moved);
  };
  // A constant: the expert's share becomes w·b.
  const double constant = replaced_by({at::zeros({d, d}), at::full({d}, 0.25)});
  CHECK(constant > 1e-3);
  // Its own least-squares fit: the share moves by w times the fit's residual, small but not zero.
  const AffineMap fit = least_squares(own.x, own.y);
  const double residual = replaced_by(fit);
  CHECK(residual > 0.0);
  CHECK(residual < constant);
  // Back to the expert: bitwise the block of before.
  CHECK(at::equal(run_block(model, layer, ids).y, base.y));
}

TEST_CASE("MoE hook: the whole block is the MLP; refusals and reset") {
  LoadedModel lm = load_model(test::model_dir("hf_zoo/qwen2-moe-f32"), {"cpu", "float32"});
  LanguageModel& model = *lm.model;
  const std::int64_t d = lm.config().d_model;
  CHECK(model.hook(0).moe().experts() == 0);  // mlp_only_layers: dense
  CHECK(model.hook(1).moe().experts() == 6);
  CHECK_THROWS_AS(model.hook(0).moe().set_router_observer([](const RouterDecision&) {}), ModelError);
  CHECK_THROWS_AS(model.hook(1).moe().use_expert_affine(6, {at::zeros({d, d}), at::zeros({d})}), ModelError);
  CHECK_THROWS_AS(model.hook(1).moe().use_expert_affine(0, {at::zeros({d, d}), at::zeros({d + 1})}), ModelError);
  CHECK_THROWS_AS(model.hook(1).moe().use_expert(-1), ModelError);

  // An affine MLP hook replaces router, experts and shared expert alike: the block never runs.
  int runs = 0;
  model.hook(1).moe().set_router_observer([&](const RouterDecision&) { ++runs; });
  model.hook(1).use_affine({at::zeros({d, d}), at::zeros({d})});
  const at::Tensor ids = token_ids(1, 8);
  {
    c10::InferenceMode guard;
    model.forward(ids);
    CHECK(runs == 0);
    model.hook(1).use_mlp();
    model.forward(ids);
    CHECK(runs == 1);
    model.reset_hooks();
    model.forward(ids);
    CHECK(runs == 1);
  }
}
