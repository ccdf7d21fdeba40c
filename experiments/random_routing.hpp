// Random routing at a gate's share: the baseline a gate must beat (docs/methods.md, "Gates").
#pragma once

#include <ATen/ATen.h>

#include <cstddef>
#include <cstdint>

namespace linsweep {

// For a gate's routing `routed` (bool [B, T] of the windows first_window..first_window+B−1, any
// device): in each window as many of the scored positions 0..T−2 routed (true) as `routed` has
// there, drawn uniformly without replacement; position T−1, which no score reads, as in
// `routed`. Each window's draw is seeded by `seed` and the window's index alone (holdout_split's
// draw: one standard library gives the same result), so the result does not depend on how the
// windows were batched or sharded over ranks. Returns a new tensor on `routed`'s device; pure,
// thread-safe. Throws c10::Error when `routed` is not a [B, T] bool tensor.
at::Tensor random_routing_like(const at::Tensor& routed, std::uint64_t seed, std::size_t first_window);

}  // namespace linsweep
