// Rotary tables and their application, with HF's frequency scalings.
#include "engine/model/rotary.hpp"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>

namespace linsweep {
namespace {

// Split-halves rotation: [x1, x2] -> [-x2, x1] on the last dimension.
at::Tensor rotate_half(const at::Tensor& x) {
  const auto half = x.size(-1) / 2;
  return at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

std::int64_t rotary_dims(const ModelConfig& c) {
  return static_cast<std::int64_t>(static_cast<double>(c.head_dim()) * c.rotary_pct);
}

// Llama 3.1's scaling: wavelengths longer than original/low_freq_factor are slowed by `factor`,
// shorter than original/high_freq_factor kept, and the band between blended linearly.
at::Tensor llama3_scaled(const at::Tensor& inv_freq, const RopeScaling& r) {
  const double original = static_cast<double>(r.original_max_positions);
  const double low_wavelen = original / r.low_freq_factor, high_wavelen = original / r.high_freq_factor;
  const at::Tensor wavelen = 2 * M_PI / inv_freq;
  at::Tensor scaled = at::where(wavelen > low_wavelen, inv_freq / r.factor, inv_freq);
  const at::Tensor smooth = (original / wavelen - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
  const at::Tensor blended = (1 - smooth) * scaled / r.factor + smooth * scaled;
  const at::Tensor medium = (wavelen >= high_wavelen).logical_and(wavelen <= low_wavelen);
  return at::where(medium, blended, scaled);
}

}  // namespace

at::Tensor rotary_inverse_frequencies(const ModelConfig& c, std::int64_t positions) {
  const std::int64_t dims = rotary_dims(c);
  const RopeScaling& r = c.rope;
  double base = c.rotary_base;
  const std::int64_t original = r.original_max_positions > 0 ? r.original_max_positions : c.max_positions;
  if (r.type == RopeType::kDynamic && positions > original) {
    const double d = static_cast<double>(dims);
    base *= std::pow(r.factor * static_cast<double>(positions) / static_cast<double>(original) - (r.factor - 1),
                     d / (d - 2));
  }
  const auto f64 = at::TensorOptions().dtype(at::kDouble);
  at::Tensor inv_freq = 1.0 / at::pow(base, at::arange(0, dims, 2, f64) / static_cast<double>(dims));  // [dims/2]
  if (r.type == RopeType::kLinear) return inv_freq / r.factor;
  if (r.type == RopeType::kLlama3) return llama3_scaled(inv_freq, r);
  return inv_freq;
}

Rotary::Rotary(const ModelConfig& c, bool sliding_layer) : config_(c), head_dim_(c.head_dim()), dims_(rotary_dims(c)) {
  if (sliding_layer && c.sliding_rotary_base) {
    config_.rotary_base = *c.sliding_rotary_base;
    config_.rope = c.sliding_rope;
  }
}

std::pair<at::Tensor, at::Tensor> Rotary::tables(std::int64_t start, std::int64_t T, const at::Tensor& like) {
  // Tables built under inference mode cannot be saved for backward: rebuilt for training.
  // Dynamic scaling depends on the sequence's length, so its tables are made for each length.
  const std::int64_t end = start + T;
  const bool dynamic = config_.rope.type == RopeType::kDynamic;
  const bool unusable = cos_.defined() && cos_.is_inference() && !c10::InferenceMode::is_enabled();
  const bool per_length = dynamic && cos_.defined() && cos_.size(0) != end;
  if (!cos_.defined() || unusable || per_length || cos_.size(0) < end || cos_.device() != like.device() ||
      cos_.scalar_type() != like.scalar_type()) {
    // A decode step (start > 0) grows the table by doubling; a window builds what it reads.
    const std::int64_t n = dynamic || start == 0 || !cos_.defined() ? end : std::max(end, 2 * cos_.size(0));
    auto f32 = at::TensorOptions().dtype(at::kFloat).device(like.device());
    const at::Tensor inv_freq = rotary_inverse_frequencies(config_, end).to(f32);
    const at::Tensor freqs = at::outer(at::arange(n, f32), inv_freq);  // [n, dims/2]
    const at::Tensor emb = at::cat({freqs, freqs}, -1);                // [n, dims]
    cos_ = emb.cos().to(like.scalar_type());
    sin_ = emb.sin().to(like.scalar_type());
  }
  return {cos_.narrow(0, start, T), sin_.narrow(0, start, T)};
}

at::Tensor Rotary::operator()(const at::Tensor& x, std::int64_t start) {
  if (dims_ == 0) return x;
  auto [cos, sin] = tables(start, x.size(2), x);
  const at::Tensor xr = x.narrow(-1, 0, dims_);
  at::Tensor rotated = xr * cos + rotate_half(xr) * sin;
  if (dims_ == head_dim_) return rotated;
  return at::cat({rotated, x.narrow(-1, dims_, head_dim_ - dims_)}, -1);
}

}  // namespace linsweep
