// Moving what one stage of a split model computed to the other stages of its replica.
#include "experiments/framework/stage_data.hpp"

#include <ATen/ATen.h>

#include "engine/comm/communicator.hpp"
#include "engine/model/language_model.hpp"

namespace linsweep {

void stage_sum(const ExperimentInput& in, std::span<double> values) {
  if (in.replica != nullptr) in.replica->allreduce_sum(values);
}

at::Tensor from_holder(const ExperimentInput& in, std::int64_t layer, const at::Tensor& t) {
  at::Tensor out = t.to(at::kCPU, at::kDouble).contiguous();
  if (in.replica == nullptr) return out;
  // A copy of its own: `to` returns `t` itself when it is float64 on the CPU already.
  out = in.model->holds(layer) ? out.clone() : at::zeros_like(out);
  in.replica->allreduce_sum(std::span<double>(out.data_ptr<double>(), static_cast<std::size_t>(out.numel())));
  return out;
}

}  // namespace linsweep
