// The one hook point per layer around the MLP: capture X/Y, replace by an affine map, or route.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>

#include "engine/model/affine_map.hpp"
#include "engine/model/moe_hook.hpp"

namespace linsweep {

// The layer's own MLP, x [.., d] -> y [.., d].
using MlpFn = std::function<at::Tensor(const at::Tensor&)>;
// Called with X (post-LayerNorm MLP input) and Y (the MLP's own output), both [B, T, d],
// for every forward pass through the layer while set.
using CaptureFn = std::function<void(const at::Tensor& x, const at::Tensor& y)>;
// Returns a bool mask [B, T]: true where the affine map replaces the MLP.
using RouteFn = std::function<at::Tensor(const at::Tensor& x)>;
// Full control for training-time variants (e.g. soft gates): returns the layer's MLP output.
using OverrideFn = std::function<at::Tensor(const at::Tensor& x, const MlpFn& mlp)>;

// How a routed hook computes its output (docs/methods.md, "Routed forward").
//   kGather: the positions the route keeps on the MLP are gathered, over the whole batch, into
//     one [1, n, d] input of the MLP, the others into one [m, d] input of the affine map, and
//     both results are scattered back: each position pays for one of the two, never both. A
//     single position (a decode step at batch 1) is a branch: the map or the MLP, no gather.
//   kSelect: the MLP and the affine map at every position, then a per-position select; the
//     reference kGather is tested against (they agree to the bound of docs/numerics.md,
//     "Routed forward").
enum class RoutedCompute { kGather, kSelect };

// Per-layer hook. Modes: the MLP (default), the affine map everywhere, routed per position,
// or an override. Capture is independent of the mode and always receives the MLP's own Y
// (computed even where the output is affine, so a routed hook that captures computes like
// kSelect). In a mixture-of-experts layer "the MLP" is the whole sparse block (router, experts,
// shared expert): the modes replace or route all of it, and moe() observes the router and
// replaces single experts inside it. Not thread safe: owned by one model, which is driven by
// one thread.
class MlpHook {
 public:
  enum class Mode { kMlp, kAffine, kRouted, kOverride };

  void use_mlp();
  // The map is moved to `x`'s device and dtype on first use.
  void use_affine(AffineMap map);
  // The route is called once per forward pass with the hook's X.
  void use_routed(AffineMap map, RouteFn route, RoutedCompute compute = RoutedCompute::kGather);
  void use_override(OverrideFn fn);
  void set_capture(CaptureFn fn) { capture_ = std::move(fn); }
  void clear_capture() { capture_ = nullptr; }

  Mode mode() const noexcept { return mode_; }
  bool capturing() const noexcept { return static_cast<bool>(capture_); }
  // The layer's experts (moe_hook.hpp): set up by the model, with 0 experts in a dense layer.
  MoeHook& moe() noexcept { return moe_; }
  const MoeHook& moe() const noexcept { return moe_; }

  // Runs the layer's MLP position x [B, T, d] through the hook; returns [B, T, d].
  at::Tensor apply(const at::Tensor& x, const MlpFn& mlp);

 private:
  at::Tensor affine(const at::Tensor& x);
  at::Tensor gathered(const at::Tensor& x, const at::Tensor& mask, const MlpFn& mlp);

  Mode mode_ = Mode::kMlp;
  RoutedCompute compute_ = RoutedCompute::kGather;
  AffineMap map_;
  RouteFn route_;
  OverrideFn override_;
  CaptureFn capture_;
  MoeHook moe_;
};

}  // namespace linsweep
