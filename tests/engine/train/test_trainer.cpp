// Training building blocks: gradients against finite differences (float64, through a frozen
// surrogate and a soft gate), AdamW and clipping against PyTorch's numbers, batch order,
// checkpoints, and a short run that lowers the loss.
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "common/errors.hpp"
#include "engine/corpus/npy.hpp"
#include "engine/model/architecture_registry.hpp"
#include "engine/model/load_model.hpp"
#include "engine/train/adamw.hpp"
#include "engine/train/batch_order.hpp"
#include "engine/train/parameter_groups.hpp"
#include "engine/train/soft_gate.hpp"
#include "engine/train/trainer.hpp"
#include "engine/train/training_checkpoint.hpp"
#include "support/catch.hpp"
#include "support/fixture_windows.hpp"
#include "support/test_support.hpp"

using namespace linsweep;

namespace {

// The fixture model in float64 with layer `linear` replaced by a frozen random affine map and
// layer `gated` inside a soft gate; returns the loss function (mean next-token CE + L1 on g).
struct GradFixture {
  std::shared_ptr<LanguageModel> model;
  std::shared_ptr<SoftGate> gate;
  AffineMap frozen;
  at::Tensor ids;
  std::int64_t linear = 0, gated = 0;  // the surrogate's layer and the soft gate's layer
  at::Tensor loss() {
    const at::Tensor ce = next_token_loss(*model, ids);  // runs the gate: last_mean() is this pass's
    return ce + 0.05 * gate->last_mean();
  }
};

GradFixture grad_fixture(const std::string& name) {
  GradFixture f;
  f.model = load_model(test::model_dir(name)).model;
  f.model->to(at::kDouble);
  f.model->train();
  const std::int64_t d = f.model->config().d_model, L = f.model->num_layers();
  REQUIRE(L >= 2);
  f.linear = L - 2, f.gated = L - 1;
  at::manual_seed(7);
  f.frozen = {at::randn({d, d}, at::kDouble) * 0.1, at::randn({d}, at::kDouble) * 0.1};
  AffineMap second{at::randn({d, d}, at::kDouble) * 0.1, at::randn({d}, at::kDouble) * 0.1};
  f.model->hook(f.linear).use_affine(f.frozen);
  f.gate = std::make_shared<SoftGate>(d, 8, -1.0, 3);  // bias −1: g not saturated, gradients visible
  f.gate->to(at::kDouble);
  {  // fc2 starts at 0, which would leave fc1 without a gradient to check
    c10::NoGradGuard no_grad;
    f.gate->named_parameters()["fc2.weight"].copy_(at::randn({1, 8}, at::kDouble));
  }
  f.model->hook(f.gated).use_override(soft_gated_mlp(f.gate, second));
  const auto stream = read_npy_tokens(test::tokens_file(name));
  std::vector<std::int64_t> ids(stream.begin(), stream.begin() + 2 * 12);
  f.ids = at::tensor(ids, at::kLong).view({2, 12});
  return f;
}

}  // namespace

TEST_CASE("a new soft gate is σ(bias) at every input, as the author's gates start", "[train]") {
  SoftGate gate(16, 8, -3.0, 5);
  at::manual_seed(11);
  const at::Tensor g = gate.forward(at::randn({2, 5, 16}) * 10);
  CHECK(g.sizes() == at::IntArrayRef{2, 5, 1});
  CHECK(at::allclose(g, at::full_like(g, 1.0 / (1.0 + std::exp(3.0))), 0.0, 1e-7));
  CHECK(gate.named_parameters()["fc1.weight"].abs().max().item<double>() > 0);  // only fc2 starts at 0
}

TEST_CASE("gradients match central finite differences for every parameter group (float64)", "[train]") {
  for (const std::string name : {"tiny-gpt2", "tiny-neox", "tiny-neox-seq"}) {
    DYNAMIC_SECTION(name) {
      GradFixture f = grad_fixture(name);
      std::vector<std::pair<std::string, at::Tensor>> params;
      for (auto& item : f.model->named_parameters()) params.emplace_back(item.key(), item.value());
      for (auto& item : f.gate->named_parameters()) params.emplace_back("gate." + item.key(), item.value());
      for (auto& [n, p] : params) p.set_requires_grad(true);
      f.loss().backward();
      // The surrogate is frozen: it is a constant of the graph.
      CHECK_FALSE(f.frozen.weight.grad().defined());
      std::set<std::string> checked;
      const double eps = 1e-6;
      const ParameterRoles& roles = ArchitectureRegistry::instance().get(f.model->config().architecture, name).roles;
      c10::NoGradGuard no_grad;
      for (auto& [n, p] : params) {
        const std::string group = n.rfind("gate.", 0) == 0 ? "gate" : parameter_group(roles, n);
        const std::int64_t layer = parameter_layer(n);
        // Layers before the surrogate (their gradient flows through x·W), the gated layer, and
        // the layer-free parameters (the embeddings also sit before the surrogate); the MLP the
        // surrogate replaced is unused and gets no gradient.
        if (layer == f.linear && group == "mlp") {
          CHECK((!p.grad().defined() || p.grad().abs().max().item<double>() == 0.0));
          continue;
        }
        if (layer != -1 && layer >= f.linear && layer != f.gated) continue;
        REQUIRE(p.grad().defined());
        at::Tensor flat = p.view({-1});
        const at::Tensor g = p.grad().view({-1});
        for (std::int64_t i : {std::int64_t{0}, flat.numel() / 2, flat.numel() - 1}) {
          const double x0 = flat[i].item<double>();
          flat[i] = x0 + eps;
          const double up = f.loss().item<double>();
          flat[i] = x0 - eps;
          const double down = f.loss().item<double>();
          flat[i] = x0;
          const double numeric = (up - down) / (2 * eps), analytic = g[i].item<double>();
          INFO(n << "[" << i << "] numeric " << numeric << " analytic " << analytic);
          CHECK(std::abs(numeric - analytic) <= 1e-7 + 1e-5 * std::abs(analytic));
        }
        checked.insert(group);
      }
      for (const char* g : {"attention", "mlp", "layernorm", "head", "embeddings", "gate"})
        CHECK(checked.count(g) == 1);
    }
  }
}

TEST_CASE("AdamW and gradient clipping reproduce torch.optim.AdamW and clip_grad_norm_", "[train]") {
  // Reference values from PyTorch 1.13 (Debian python3-torch): AdamW(lr=0.1, weight_decay=0.01)
  // after three steps with the gradients below; clip_grad_norm_([a, b], 1.0).
  at::Tensor p = at::tensor({1.0, -2.0, 0.5}, at::kDouble).requires_grad_(true);
  AdamW adam({{"p", p}}, AdamWOptions{.lr = 0.1, .weight_decay = 0.01});
  for (const std::vector<double>& g : {std::vector<double>{0.5, -0.3, 0.0}, {-0.3, 0.2, 1e-3}, {0.2, 0.1, -2.0}}) {
    p.mutable_grad() = at::tensor(g, at::kDouble);
    adam.step(0.1);
  }
  const std::vector<double> want = {0.8433294795899422, -1.8860902821613197, 0.48801588666553797};
  for (int i = 0; i < 3; ++i)
    CHECK(p[i].item<double>() == Catch::Approx(want[static_cast<std::size_t>(i)]).epsilon(1e-15));
  CHECK(adam.step_counts() == std::vector<std::int64_t>{3});

  at::Tensor a = at::zeros({2}, at::kDouble).requires_grad_(true), b = at::zeros({1}, at::kDouble).requires_grad_(true);
  a.mutable_grad() = at::tensor({3.0, 4.0}, at::kDouble);
  b.mutable_grad() = at::tensor({12.0}, at::kDouble);
  CHECK(clip_gradients({{"a", a}, {"b", b}}, 1.0) == Catch::Approx(13.0));
  CHECK(a.grad()[1].item<double>() == Catch::Approx(0.3076922840236705).epsilon(1e-14));
  CHECK(b.grad()[0].item<double>() == Catch::Approx(0.9230768520710115).epsilon(1e-14));

  SECTION("a parameter without a gradient is neither decayed nor counted") {
    at::Tensor q = at::ones({2}, at::kDouble).requires_grad_(true);
    AdamW idle({{"q", q}}, AdamWOptions{.lr = 0.1, .weight_decay = 0.5});
    idle.step(0.1);
    CHECK(q[0].item<double>() == 1.0);
    CHECK(idle.step_counts() == std::vector<std::int64_t>{0});
  }
}

TEST_CASE("batch order is a seeded sequence of permutations, a function of the step", "[train]") {
  BatchOrder a(10, 4, 3), b(10, 4, 3), c(10, 4, 4);
  std::vector<std::int64_t> epoch;
  for (int s = 0; s < 5; ++s) {
    const auto w = a.windows(s);
    REQUIRE(w.size() == 4);
    epoch.insert(epoch.end(), w.begin(), w.end());
  }
  // Steps 0..4 read 20 positions = exactly two permutations of 0..9.
  for (int e = 0; e < 2; ++e) {
    std::set<std::int64_t> seen(epoch.begin() + e * 10, epoch.begin() + (e + 1) * 10);
    CHECK(seen.size() == 10);
    CHECK(*seen.rbegin() == 9);
  }
  CHECK(b.windows(3) == a.windows(3));  // random access gives what a sequential run read
  CHECK(c.windows(0) != a.windows(0));
  CHECK_THROWS(BatchOrder(0, 4, 1));
  CHECK(learning_rate(LrSchedule::kConstant, 1.0, 0, 10, 2) == Catch::Approx(0.5));
  CHECK(learning_rate(LrSchedule::kCosine, 1.0, 9, 10, 0, 0.1) == Catch::Approx(0.1));
  CHECK(learning_rate(LrSchedule::kCosine, 1.0, 0, 10, 0, 0.1) == Catch::Approx(1.0));
}

TEST_CASE("training checkpoints round-trip bitwise and keep the newest two", "[train]") {
  test::ScratchDir dir;
  const std::string path = dir.path() + "/ckpt";
  at::manual_seed(1);
  const at::Tensor w = at::randn({3, 5}), d = at::randn({4}, at::kDouble);
  for (std::int64_t step : {10, 20, 30})
    save_training_checkpoint(path, step, {{"w", w * static_cast<double>(step)}, {"d", d}}, {{"rows", {step}}});
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(path)) files += e.is_regular_file() ? 1 : 0;
  CHECK(files == 2);
  const auto c = load_latest_training_checkpoint(path);
  REQUIRE(c.has_value());
  CHECK(c->step == 30);
  CHECK(c->state["rows"] == nlohmann::json{30});
  REQUIRE(c->tensors.size() == 2);
  for (const auto& [name, t] : c->tensors) {
    if (name == "w") CHECK(at::equal(t, w * 30.0));
    if (name == "d") CHECK((t.scalar_type() == at::kDouble && at::equal(t, d)));
  }
  CHECK_FALSE(load_latest_training_checkpoint(dir.path() + "/none").has_value());
  test::write_text(path + "/step-000000000040.safetensors", "garbage");
  CHECK_THROWS_AS(load_latest_training_checkpoint(path), ModelError);
}

TEST_CASE("a short training run lowers the loss", "[train]") {
  auto model = load_model(test::model_dir("tiny-gpt2")).model;
  model->train();
  const Windows w = test::golden_windows("tiny-gpt2", "fit");
  std::vector<NamedParameter> params;
  for (auto& item : model->named_parameters()) {
    item.value().set_requires_grad(true);
    params.push_back({item.key(), item.value()});
  }
  TrainerOptions opt;
  opt.adam.lr = 3e-3;
  opt.batch = 4;
  Trainer trainer(*model, params, w, opt);
  std::vector<double> losses;
  for (int s = 0; s < 24; ++s) losses.push_back(trainer.step(s).loss);
  const double first = (losses[0] + losses[1] + losses[2]) / 3, last = (losses[21] + losses[22] + losses[23]) / 3;
  INFO("first " << first << " last " << last);
  CHECK(last < first - 0.05);
}
