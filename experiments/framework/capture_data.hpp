// Where a capture unit's activation shards live, and reading them back for gate experiments.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "experiments/framework/experiment.hpp"
#include "experiments/numerics/classification.hpp"
#include "storage/store_layout.hpp"
#include "storage/unit_file.hpp"

namespace linsweep {

// The rows of one split and layer: positions 0..T−2 of every window (those whose next token
// is scored), window-major.
struct CapturedRows {
  at::Tensor x;                         // [n, d] float32 (MLP input after its LayerNorm)
  std::vector<double> delta;            // δ_t = nll_lin(t) − nll_full(t)
  std::vector<std::int32_t> token_ids;  // the token at t
  // The token at t + 1, the one δ scores; empty when any part has no next_token_ids dataset.
  std::vector<std::int32_t> next_token_ids;
  std::vector<std::int32_t> position;  // t
  std::vector<std::int64_t> window;    // window index within the split
  std::int64_t size() const noexcept { return static_cast<std::int64_t>(delta.size()); }
};

// Reads every part of (split, layer) written by the committed capture unit `capture` (one of
// the unit's deps). Throws StorageError(kBadInput) naming the file when a shard is missing,
// lacks δ or disagrees in width with the other parts; InputError when `capture` is not a
// capture unit.
CapturedRows read_captured(const StoreLayout& store, const UnitResult& capture, const std::string& split,
                           std::int64_t layer);

// A layer's gate-split rows with their labels (δ ≤ threshold, docs/methods.md) and a seeded
// hold-out of them, drawn by window (holdout_by "window": every row of a window on one side)
// or by row ("row"): what gate, token_context and clusters train and score on.
struct LabelledRows {
  CapturedRows rows;
  double threshold = 0;              // gate_label_threshold of the gate split's δ
  std::vector<std::uint8_t> labels;  // per row
  HoldoutSplit split;                // holdout_split(_by_window)(rows, holdout, seed)
};
struct HoldoutDraw {
  double fraction = 0.3;
  std::uint64_t seed = 0;
  std::string by = "window";  // or "row"
};
// read_captured(…, "gate", layer) of the unit's capture dependency, with its labels and
// hold-out; throws like dep_of_kind and read_captured, and InputError for a `by` other than
// window or row.
LabelledRows read_labelled(const ExperimentInput& in, std::int64_t layer, const HoldoutDraw& draw);
// The seed a per-layer unit draws with: its `seed` parameter plus the layer, so that layers
// draw different hold-outs.
inline std::uint64_t layer_seed(std::int64_t seed, std::int64_t layer) noexcept {
  return static_cast<std::uint64_t>(seed) + static_cast<std::uint64_t>(layer);
}

// Rows `index` (ascending or not) of x as a float64 tensor, and of a vector.
at::Tensor rows_of(const at::Tensor& x, const std::vector<std::int64_t>& index);
template <typename T>
std::vector<T> rows_of(const std::vector<T>& v, const std::vector<std::int64_t>& index) {
  std::vector<T> out;
  out.reserve(index.size());
  for (auto i : index) out.push_back(v[static_cast<std::size_t>(i)]);
  return out;
}

// A tensor's values as float64 on the CPU (flattened).
std::vector<double> to_vector(const at::Tensor& t);

// The first dependency of `kind` among `deps` (a reference into `deps`); throws InputError naming
// `unit_id` when absent. `kind` is a view: a std::string parameter would make every call with a
// literal pass a temporary, and GCC 14's -Wdangling-reference then suspects the result of
// referring to it.
const UnitResult& dep_of_kind(const std::vector<UnitResult>& deps, std::string_view kind, const std::string& unit_id);

}  // namespace linsweep
