// Observing and changing a mixture-of-experts layer from its MlpHook: the router's decisions,
// each expert's inputs and outputs, and one expert replaced by an affine map.
//
//   MoeHook& moe = model.hook(layer).moe();          // moe.experts() == 0 in a dense layer
//   moe.set_router_observer([&](const RouterDecision& r) { ... r.experts ... });
//   moe.set_expert_capture([&](const ExpertBatch& b) { fit[b.expert].add(b.x, b.y); });
//   moe.use_expert_affine(3, surrogate);             // expert 3 alone becomes x·W + b
//   moe.reset();
//
// The whole block (router, experts, shared expert) stays "the MLP" of the layer's MlpHook: its
// capture sees the block's input and output, and its affine, routed and override modes replace
// or route the whole block. What this hook sets acts inside the block whenever the block runs:
// in the MLP mode, on the positions a routed hook keeps, and where the MlpHook's capture needs
// the block's own output.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <map>

#include "engine/model/affine_map.hpp"

namespace linsweep {

// What the router decided in one run of a sparse block, over the block's input x [.., d]. The
// leading dimensions are x's: [B, T] in a forward pass, [1, n] where a routed MlpHook gathers the
// n positions it keeps (RoutedCompute::kGather).
struct RouterDecision {
  at::Tensor logits;   // [.., E] router logits, in the stream's dtype
  at::Tensor experts;  // [.., k] int64: the chosen experts, most probable first
  at::Tensor weights;  // [.., k] the weights their outputs are mixed with (renormalised where the architecture does),
                       // stream dtype
};

// One expert's share of a run of its block: the positions routed to it and what it made of them.
struct ExpertBatch {
  std::int64_t expert = 0;
  at::Tensor positions;  // [n] int64: indices into the block input's positions flattened (b·T + t), ascending
  at::Tensor x;          // [n, d] their inputs
  at::Tensor y;          // [n, d] the expert's own outputs before the router's weight (its MLP's, also where
                         // an affine map replaces it)
  at::Tensor weight;     // [n] the router's weight of this expert at each position
};

// Called synchronously on the forward's thread; an exception thrown here leaves the forward.
using RouterObserverFn = std::function<void(const RouterDecision&)>;
using ExpertCaptureFn = std::function<void(const ExpertBatch&)>;

// The experts of one layer's MlpHook. Owns copies of its callbacks and maps. Tensors passed to
// the callbacks live as long as the callback's caller keeps them (copy what must outlive the
// call; they may share memory with the forward). Not thread safe: like the MlpHook it belongs
// to, driven by the model's one thread.
class MoeHook {
 public:
  explicit MoeHook(std::int64_t experts = 0) : experts_(experts) {}

  // The layer's number of experts; 0 in a dense layer.
  std::int64_t experts() const noexcept { return experts_; }

  // Every run of the block calls `fn` once with the router's decision, or stops calling it
  // (nullptr). Throws ModelError in a dense layer (nothing would ever be called).
  void set_router_observer(RouterObserverFn fn);
  // Every run of the block calls `fn` once per expert that some position was routed to, in
  // expert order. Throws ModelError in a dense layer.
  void set_expert_capture(ExpertCaptureFn fn);
  // Expert `expert` computes x·W + b instead of its MLP on the positions routed to it; the router,
  // the weights and every other expert are unchanged. The map is moved to the stream's device and
  // dtype on first use. Throws ModelError for an expert outside 0..experts()-1 (every expert of a
  // dense layer) or a map that is not weight [d, d], bias [d] (its d is checked against the
  // block's input when it runs).
  void use_expert_affine(std::int64_t expert, AffineMap map);
  // The expert's own MLP again. Throws ModelError for an expert outside 0..experts()-1.
  void use_expert(std::int64_t expert);
  // No observer, no capture, every expert its own MLP.
  void reset();

  // For the sparse block (moe.hpp).
  const RouterObserverFn& router_observer() const noexcept { return router_; }
  const ExpertCaptureFn& expert_capture() const noexcept { return capture_; }
  // The map replacing `expert`, or nullptr when it runs its own MLP.
  AffineMap* expert_map(std::int64_t expert);

 private:
  void check_expert(std::int64_t expert) const;

  std::int64_t experts_;
  RouterObserverFn router_;
  ExpertCaptureFn capture_;
  std::map<std::int64_t, AffineMap> maps_;
};

}  // namespace linsweep
