// AdamW (decoupled weight decay) over named parameters, with its state exposed for checkpoints.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace linsweep {

struct AdamWOptions {
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weight_decay = 0.01;
};

// A parameter the optimizer updates, under a stable name (the HF parameter name, or a
// gate's "gate.<layer>.<name>") that keys its state in checkpoints.
struct NamedParameter {
  std::string name;
  at::Tensor tensor;
};

// The update of torch.optim.AdamW (PyTorch 1.13, single-tensor path, amsgrad off), op for op,
// so that a C++ run and a Python run of the same model agree: p ← p·(1 − lr·wd);
// m ← β1·m + (1−β1)·g; v ← β2·v + (1−β2)·g²; p ← p − lr/(1−β1ᵗ) · m / (√v/√(1−β2ᵗ) + ε).
// A parameter without a gradient is skipped entirely (no decay, no step count), as in PyTorch.
// Holds references to the parameters (shared tensors); not thread safe.
class AdamW {
 public:
  AdamW(std::vector<NamedParameter> params, AdamWOptions options);

  // One update with learning rate `lr` (the schedule's value for this step).
  void step(double lr);
  // Sets every gradient to undefined (PyTorch's zero_grad(set_to_none=True)).
  void zero_grad();

  const std::vector<NamedParameter>& parameters() const noexcept { return params_; }
  // State for checkpoints: "<name>.exp_avg", "<name>.exp_avg_sq" tensors and per-parameter
  // step counts (0 for a parameter never updated, whose moments are zeros).
  std::vector<std::pair<std::string, at::Tensor>> state_tensors() const;
  std::vector<std::int64_t> step_counts() const { return steps_; }
  // Restores what state_tensors/step_counts returned (copied into this optimizer's own
  // tensors). Throws ModelError when a name or shape does not match.
  void load_state(const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                  const std::vector<std::int64_t>& steps);

 private:
  std::vector<NamedParameter> params_;
  AdamWOptions options_;
  std::vector<at::Tensor> exp_avg_, exp_avg_sq_;
  std::vector<std::int64_t> steps_;
};

}  // namespace linsweep
