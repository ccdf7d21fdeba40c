// The experts' part of a layer's hook.
#include "engine/model/moe_hook.hpp"

#include <string>

#include "common/errors.hpp"

namespace linsweep {

void MoeHook::check_expert(std::int64_t expert) const {
  if (experts_ == 0) throw ModelError("MoE hook: the layer is dense (it has no experts)");
  if (expert < 0 || expert >= experts_)
    throw ModelError("MoE hook: expert " + std::to_string(expert) + " is outside the layer's 0.." +
                     std::to_string(experts_ - 1));
}

void MoeHook::set_router_observer(RouterObserverFn fn) {
  if (experts_ == 0 && fn) throw ModelError("MoE hook: the layer is dense (it has no router)");
  router_ = std::move(fn);
}

void MoeHook::set_expert_capture(ExpertCaptureFn fn) {
  if (experts_ == 0 && fn) throw ModelError("MoE hook: the layer is dense (it has no experts)");
  capture_ = std::move(fn);
}

void MoeHook::use_expert_affine(std::int64_t expert, AffineMap map) {
  check_expert(expert);
  check_affine_map(map, "MoE hook: expert map");
  maps_[expert] = std::move(map);
}

void MoeHook::use_expert(std::int64_t expert) {
  check_expert(expert);
  maps_.erase(expert);
}

void MoeHook::reset() {
  router_ = nullptr;
  capture_ = nullptr;
  maps_.clear();
}

AffineMap* MoeHook::expert_map(std::int64_t expert) {
  const auto it = maps_.find(expert);
  return it == maps_.end() ? nullptr : &it->second;
}

}  // namespace linsweep
