// The shared terms of the units' memory estimates.
#include "experiments/framework/memory_need.hpp"

#include <algorithm>

namespace linsweep {

double stage_weight_bytes(const MemoryQuery& q) {
  const double stages = static_cast<double>(std::max<std::int64_t>(1, q.stages));
  const double outer = static_cast<double>(std::min(q.model.outer_parameters, q.model.parameters));
  const double layers = static_cast<double>(q.model.parameters) - outer;
  const double matrix = static_cast<double>(q.model.vocab * q.model.d_model);
  const double ends = stages > 1 ? std::min(outer, matrix) : outer;
  return (layers / stages + ends) * q.model.weight_bytes;
}

double forward_bytes(const MemoryQuery& q, std::int64_t context) {
  const double tokens = static_cast<double>(q.batch * context);
  const ModelSize& m = q.model;
  // The stream and a layer's q, k, v, attention output and MLP input and output (about 8 of
  // width d), its MLP intermediates (3 of width d_ff), the attention scores (heads × T per
  // token), and the logits with their log-softmax and its gradient-free copy (3 of width V).
  const double per_token = 8.0 * static_cast<double>(m.d_model) + 3.0 * static_cast<double>(m.d_ff) +
                           static_cast<double>(m.heads * context) + 3.0 * static_cast<double>(m.vocab);
  return tokens * per_token * 4.0;  // float32
}

MemoryNeed forward_need(const MemoryQuery& q, std::int64_t context) {
  if (context <= 0) context = q.context;
  return MemoryNeed{.weights = stage_weight_bytes(q), .activations = forward_bytes(q, context)};
}

double captured_rows(const MemoryQuery& q, const std::string& name) {
  const auto it = q.split_tokens.find(name);
  if (it == q.split_tokens.end() || q.context < 2) return 0;
  return static_cast<double>(it->second / q.context * (q.context - 1));
}

double normal_equation_bytes(const ModelSize& m) {
  return 16.0 * static_cast<double>(m.d_model) * static_cast<double>(m.d_model);
}

}  // namespace linsweep
