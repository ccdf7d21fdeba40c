// The routed forward that skips work (RoutedCompute::kGather) against the one that computes
// both maps everywhere and selects (kSelect), on the fixture models' real MLPs and activations:
// each within the deterministic bound of docs/numerics.md ("Routed forward") of a float64
// reference, and the MLP run on the kept positions only. The device is LINSWEEP_TEST_DEVICE
// (default cpu; scripts/gpu_check.sh runs LINSWEEP_TEST_DEVICE=cuda test_routed "[routed]" as
// its routed_equality check), in float32 and bfloat16 (and float16 on CUDA).
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "engine/eval/scoring.hpp"
#include "engine/model/activation.hpp"
#include "engine/model/affine_map.hpp"
#include "engine/model/load_model.hpp"
#include "support/catch.hpp"
#include "support/fixture_windows.hpp"
#include "support/numerics.hpp"

using namespace linsweep;

namespace {

std::string test_device() {
  const char* d = std::getenv("LINSWEEP_TEST_DEVICE");
  return d != nullptr && *d != '\0' ? d : "cpu";
}

// Layer `layer`'s MLP weights in float64 as x·W1 + b1 -> activation -> ·W2 + b2.
struct MlpWeights {
  at::Tensor w1, b1, w2, b2;
};

MlpWeights mlp_weights(LanguageModel& model, std::int64_t layer) {
  std::vector<at::Tensor> found;  // up weight, up bias, down weight, down bias (registration order)
  const std::string marker = "." + std::to_string(layer) + ".mlp.";
  for (const auto& p : model.named_parameters())
    if (p.key().find(marker) != std::string::npos) found.push_back(p.value().detach().to(at::kCPU, at::kDouble));
  REQUIRE(found.size() == 4);
  // GPT-2's Conv1D stores [in, out]; the others' linear layers [out, in].
  const bool conv1d = model.config().architecture == "gpt2";
  return {conv1d ? found[0] : found[0].t(), found[1], conv1d ? found[2] : found[2].t(), found[3]};
}

// The hook's output under the reference (float64) and the per-element bound of one
// evaluation in `dtype` against it: the MLP where `mask` is false, the affine map where true.
struct Reference {
  at::Tensor y, bound;  // [N, d] float64
};

Reference reference(const at::Tensor& x_in, const at::Tensor& mask, const MlpWeights& m, const AffineMap& map,
                    Activation act, at::ScalarType dtype) {
  const at::Tensor x = x_in.reshape({-1, x_in.size(-1)}).to(at::kCPU, at::kDouble);
  const at::Tensor w = map.weight.to(dtype).to(at::kCPU, at::kDouble), b = map.bias.to(dtype).to(at::kCPU, at::kDouble);
  const double d = static_cast<double>(x.size(1)), d_ff = static_cast<double>(m.w1.size(1));
  const double c1 = test::product_error(d, dtype), c2 = test::product_error(d_ff, dtype);
  const double c_act = 8 * test::kU32 + (dtype == at::kFloat ? 0.0 : test::unit_roundoff(dtype));
  const double lipschitz = 1.13;  // max |GELU'| (exact and tanh forms), 1.129 at z ≈ 1.4
  const at::Tensor h = x.mm(m.w1) + m.b1, a = activate(h, act);
  const at::Tensor e1 = c1 * (x.abs().mm(m.w1.abs()) + m.b1.abs());
  const at::Tensor e2 = lipschitz * e1 + c_act * (h.abs() + e1);
  const at::Tensor e_mlp = e2.mm(m.w2.abs()) + c2 * ((a.abs() + e2).mm(m.w2.abs()) + m.b2.abs());
  const at::Tensor e_lin = c1 * (x.abs().mm(w.abs()) + b.abs());
  const at::Tensor routed = mask.reshape({-1, 1}).to(at::kCPU);
  return {at::where(routed, x.mm(w) + b, a.mm(m.w2) + m.b2), at::where(routed, e_lin, e_mlp)};
}

// Whether the bound applies to a `dtype` product on `device`. float32 and float16 always (the
// float16 bound already takes float16 accumulation, docs/numerics.md); bfloat16 where it
// accumulates in float32: 1 plus 256 terms of 2⁻⁹ is 1.5 in float32 but stays 1 when each
// partial sum is rounded to bfloat16 (cuBLAS where it allows reduced-precision reductions; on a
// CPU the product is widened to float32, widened_gemm.hpp). Through the kernel the hook's
// surrogate takes for many rows. A probe: it sees sequential rounding, and may miss a split sum.
bool bound_applies(const std::string& device, at::ScalarType dtype) {
  if (dtype != at::kBFloat16) return true;
  const auto opts = at::TensorOptions().dtype(dtype).device(device);
  const at::Tensor a = at::cat({at::ones({64, 1}, opts), at::full({64, 256}, 0x1p-9, opts)}, 1);
  AffineMap map{.weight = at::ones({257, 64}, opts), .bias = at::zeros({64}, opts)};
  const at::Tensor y = apply_affine(map, a);
  return y[0][0].item<double>() == 1.5;
}

// max |a − b| / bound over elements (≤ 1 means within the bound).
double bound_ratio(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bound) {
  const at::Tensor diff = (a.reshape(bound.sizes()).to(at::kCPU, at::kDouble) - b.reshape(bound.sizes())).abs();
  return (diff / bound).max().item<double>();
}

}  // namespace

TEST_CASE("routed forward: gathering skips the MLP where routed and agrees with select to the bound", "[routed]") {
  const std::string device = test_device();
  std::vector<std::string> dtypes = {"float32", "bfloat16"};
  if (device.rfind("cuda", 0) == 0) dtypes.push_back("float16");
  for (const char* name : {"tiny-gpt2", "tiny-neox", "tiny-neox-seq"})
    for (const std::string& dtype : dtypes) {
      INFO(name << " on " << device << " in " << dtype);
      LoadedModel lm;
      try {
        lm = load_model(test::model_dir(name), {device, dtype});
      } catch (const InputError& e) {  // a device this build or machine lacks
        WARN("skipped: " << e.what());
        return;
      }
      LanguageModel& model = *lm.model;
      const std::int64_t layer = test::golden()[name]["layer"].get<std::int64_t>();
      const std::int64_t d = lm.config().d_model;
      const MlpWeights weights = mlp_weights(model, layer);
      at::manual_seed(7);
      const AffineMap map{at::randn({d, d}) * 0.1, at::randn({d}) * 0.1};
      // A data-dependent route: about half the positions, by the sign of one coordinate against its median.
      const RouteFn route = [](const at::Tensor& x) {
        const at::Tensor v = x.select(-1, 0);
        return v.gt(v.median());
      };
      const Windows w = test::golden_windows(name, "eval").slice(0, 5);
      c10::InferenceMode guard;
      const at::Tensor ids = window_ids(w, 0, w.count, lm.model->parameters().front().device());
      std::int64_t mlp_rows = 0;
      double worst_gather = 0, worst_select = 0, worst_pair = 0;
      std::int64_t routed_positions = 0;
      model.hook(layer).use_override([&](const at::Tensor& x, const MlpFn& mlp) {
        MlpHook gather, select;
        gather.use_routed(map, route);  // kGather is the default
        select.use_routed(map, route, RoutedCompute::kSelect);
        const MlpFn counted = [&](const at::Tensor& t) {
          mlp_rows += t.numel() / t.size(-1);
          return mlp(t);
        };
        const at::Tensor y_gather = gather.apply(x, counted), y_select = select.apply(x, mlp);
        const at::Tensor mask = route(x);
        routed_positions = mask.sum().item<std::int64_t>();
        const Reference ref = reference(x, mask, weights, map, lm.config().activation, lm.dtype);
        worst_gather = bound_ratio(y_gather, ref.y, ref.bound);
        worst_select = bound_ratio(y_select, ref.y, ref.bound);
        worst_pair = bound_ratio(y_gather, y_select.to(at::kCPU, at::kDouble), 2 * ref.bound);
        CHECK(y_gather.sizes() == x.sizes());
        CHECK(y_gather.scalar_type() == x.scalar_type());
        return y_select;
      });
      model.hidden_states(ids);
      const std::int64_t positions = ids.numel();
      INFO(routed_positions << " of " << positions << " positions routed");
      CHECK(routed_positions > positions / 4);
      CHECK(routed_positions < 3 * positions / 4);
      CHECK(mlp_rows == positions - routed_positions);  // the MLP saw only the kept positions
      if (bound_applies(device, lm.dtype)) {
        CHECK(worst_gather <= 1.0);
        CHECK(worst_select <= 1.0);
      } else {
        WARN(
            "bfloat16 products accumulate in bfloat16 here: the float64 reference's bound does not apply; "
            "gather against select only");
      }
      CHECK(worst_pair <= 1.0);
      model.reset_hooks();
    }
}

TEST_CASE("routed forward: every position routed or none is the affine map or the MLP, bitwise", "[routed]") {
  LoadedModel lm = load_model(test::model_dir("tiny-gpt2"), {"cpu", "float32"});
  const std::int64_t d = lm.config().d_model;
  const Windows w = test::golden_windows("tiny-gpt2", "eval").slice(0, 3);
  c10::InferenceMode guard;
  const at::Tensor ids = window_ids(w, 0, w.count, at::Device(at::kCPU));
  const AffineMap map{at::randn({d, d}) * 0.1, at::zeros({d})};
  auto logits = [&] { return lm.model->forward(ids); };
  const at::Tensor plain = logits();
  lm.model->hook(1).use_affine(map);
  const at::Tensor affine = logits();
  for (bool value : {false, true}) {
    lm.model->hook(1).use_routed(map, [value](const at::Tensor& x) {
      return at::full({x.size(0), x.size(1)}, value, x.options().dtype(at::kBool));
    });
    CHECK(at::equal(logits(), value ? affine : plain));
  }
  // A mask of the wrong shape is a ModelError, not a silent broadcast.
  lm.model->hook(1).use_routed(map,
                               [](const at::Tensor& x) { return at::ones({x.size(1)}, x.options().dtype(at::kBool)); });
  CHECK_THROWS_AS(logits(), ModelError);
}
