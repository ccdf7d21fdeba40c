// MlpHook dispatch.
#include "engine/model/mlp_hook.hpp"

#include <ATen/ATen.h>

#include "common/errors.hpp"

namespace linsweep {

void MlpHook::use_mlp() {
  mode_ = Mode::kMlp;
  map_ = {};
  route_ = nullptr;
  override_ = nullptr;
}

void MlpHook::use_affine(AffineMap map) {
  check_affine_map(map, "affine map");
  mode_ = Mode::kAffine;
  map_ = std::move(map);
}

void MlpHook::use_routed(AffineMap map, RouteFn route, RoutedCompute compute) {
  use_affine(std::move(map));
  mode_ = Mode::kRouted;
  route_ = std::move(route);
  compute_ = compute;
}

void MlpHook::use_override(OverrideFn fn) {
  mode_ = Mode::kOverride;
  override_ = std::move(fn);
}

at::Tensor MlpHook::affine(const at::Tensor& x) { return apply_affine(map_, x); }

at::Tensor MlpHook::gathered(const at::Tensor& x, const at::Tensor& mask, const MlpFn& mlp) {
  const auto d = x.size(-1);
  if (mask.sizes() != x.sizes().slice(0, x.dim() - 1)) throw ModelError("routed hook: the route's mask is not [B, T]");
  const at::Tensor routed = mask.reshape({-1});
  // One position (a decode step of one sequence): a branch, so that a routed token never reads
  // the MLP's weights and a kept one never the map's.
  if (routed.numel() == 1) return routed.item<bool>() ? affine(x) : mlp(x);
  const at::Tensor linear_at = routed.nonzero().squeeze(1);             // positions on the affine map
  const at::Tensor mlp_at = routed.logical_not().nonzero().squeeze(1);  // positions kept on the MLP
  if (linear_at.numel() == 0) return mlp(x);
  if (mlp_at.numel() == 0) return affine(x);
  const at::Tensor flat = x.reshape({-1, d});
  const at::Tensor y_mlp = mlp(flat.index_select(0, mlp_at).unsqueeze(0)).squeeze(0);  // [n, d_out]
  const at::Tensor y_lin = affine(flat.index_select(0, linear_at));                    // [m, d_out]
  at::Tensor out = at::empty({flat.size(0), y_mlp.size(-1)}, y_mlp.options());
  out.index_copy_(0, mlp_at, y_mlp);
  out.index_copy_(0, linear_at, y_lin);
  auto shape = x.sizes().vec();
  shape.back() = out.size(1);
  return out.view(shape);
}

at::Tensor MlpHook::apply(const at::Tensor& x, const MlpFn& mlp) {
  at::Tensor out;
  at::Tensor y_mlp;
  switch (mode_) {
    case Mode::kMlp:
      out = y_mlp = mlp(x);
      break;
    case Mode::kAffine:
      out = affine(x);
      if (capture_) y_mlp = mlp(x);
      break;
    case Mode::kRouted: {
      const at::Tensor mask = route_(x).to(at::kBool);  // [B, T]
      if (compute_ == RoutedCompute::kGather && !capture_) {
        out = gathered(x, mask, mlp);
        break;
      }
      y_mlp = mlp(x);
      out = at::where(mask.unsqueeze(-1), affine(x), y_mlp);
      break;
    }
    case Mode::kOverride:
      if (capture_) y_mlp = mlp(x);
      out = override_(x, mlp);
      break;
  }
  if (capture_) capture_(x, y_mlp);
  return out;
}

}  // namespace linsweep
