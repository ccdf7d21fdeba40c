// Linear layers: a oneDNN autograd function in training, threaded_linear otherwise.
#include "engine/model/linear_kernel.hpp"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/version.h>

#include "engine/model/threaded_gemm.hpp"

namespace linsweep {
namespace {

// See linear_kernel.hpp: oneDNN's inner product as LibTorch 2.6 calls it is wrong for some shapes.
constexpr bool kOneDnnTrusted = TORCH_VERSION_MAJOR < 2;

at::Tensor dnn(const at::Tensor& t) { return t.contiguous().to_mkldnn(); }

// y = x·Wᵀ + b for x [N, in], W [out, in], b [out], with its three GEMMs (y, and
// in backward dx = gy·W and dW = gyᵀ·x) on oneDNN: Debian's OpenBLAS, which at::linear and
// its backward use, runs its generic SSE3 kernels on the reference machine, where the three
// GEMMs of a 1024-row batch took 1.4–2.4x oneDNN's time (d=192 model shapes, 2 threads). The
// layout conversions are O(N·(in + out)) copies against O(N·in·out) GEMMs. `bias` must be
// defined (autograd functions take no undefined inputs): a layer without one passes zeros
// that do not require a gradient. Not twice differentiable (nothing here needs that).
class OneDnnLinear : public torch::autograd::Function<OneDnnLinear> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const at::Tensor& bias) {
    ctx->save_for_backward({x, weight});
    return at::mkldnn_linear(dnn(x), dnn(weight), dnn(bias)).to_dense();
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &weight = saved[1];
    const at::Tensor gy = grads[0].contiguous();  // [N, out]
    at::Tensor dx, dw, db;
    if (ctx->needs_input_grad(0)) dx = at::mkldnn_linear(dnn(gy), dnn(weight.t()), c10::nullopt).to_dense();  // [N, in]
    if (ctx->needs_input_grad(1))
      dw = at::mkldnn_linear(dnn(gy.t()), dnn(x.t()), c10::nullopt).to_dense();  // [out, in]
    if (ctx->needs_input_grad(2)) db = gy.sum(0);
    return {dx, dw, db};
  }
};

}  // namespace

at::Tensor LinearKernel::operator()(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  const bool onednn = x.device().is_cpu() && x.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat &&
                      (!bias.defined() || bias.scalar_type() == at::kFloat) && at::hasMKLDNN() && kOneDnnTrusted;
  if (onednn && !c10::InferenceMode::is_enabled() && c10::GradMode::is_enabled() &&
      (x.requires_grad() || weight.requires_grad() || (bias.defined() && bias.requires_grad()))) {
    const auto in = x.size(-1);
    auto shape = x.sizes().vec();
    shape.back() = weight.size(0);
    const at::Tensor b = bias.defined() ? bias : at::zeros({weight.size(0)}, weight.options().requires_grad(false));
    return OneDnnLinear::apply(x.reshape({-1, in}), weight, b).view(shape);
  }
  return threaded_linear(x, weight, bias);
}

}  // namespace linsweep
