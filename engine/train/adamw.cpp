// AdamW, written out so that its state can be checkpointed and restored exactly.
#include "engine/train/adamw.hpp"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <cmath>
#include <map>

#include "common/errors.hpp"

namespace linsweep {

AdamW::AdamW(std::vector<NamedParameter> params, AdamWOptions options)
    : params_(std::move(params)), options_(options), steps_(params_.size(), 0) {
  for (const auto& p : params_) {
    exp_avg_.push_back(at::zeros_like(p.tensor, at::MemoryFormat::Preserve));
    exp_avg_sq_.push_back(at::zeros_like(p.tensor, at::MemoryFormat::Preserve));
  }
}

void AdamW::step(double lr) {
  c10::NoGradGuard no_grad;
  const double b1 = options_.beta1, b2 = options_.beta2;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    at::Tensor& p = params_[i].tensor;
    const at::Tensor& g = p.grad();
    if (!g.defined()) continue;
    const auto t = static_cast<double>(++steps_[i]);
    p.mul_(1.0 - lr * options_.weight_decay);
    exp_avg_[i].mul_(b1).add_(g, 1.0 - b1);
    exp_avg_sq_[i].mul_(b2).addcmul_(g, g, 1.0 - b2);
    const double bias_correction1 = 1.0 - std::pow(b1, t);
    const double bias_correction2 = 1.0 - std::pow(b2, t);
    const double step_size = lr / bias_correction1;
    const at::Tensor denom = (exp_avg_sq_[i].sqrt() / std::sqrt(bias_correction2)).add_(options_.eps);
    p.addcdiv_(exp_avg_[i], denom, -step_size);
  }
}

void AdamW::zero_grad() {
  for (auto& p : params_) p.tensor.mutable_grad() = at::Tensor();
}

std::vector<std::pair<std::string, at::Tensor>> AdamW::state_tensors() const {
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    out.emplace_back(params_[i].name + ".exp_avg", exp_avg_[i]);
    out.emplace_back(params_[i].name + ".exp_avg_sq", exp_avg_sq_[i]);
  }
  return out;
}

void AdamW::load_state(const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                       const std::vector<std::int64_t>& steps) {
  if (steps.size() != params_.size())
    throw ModelError("optimizer state: " + std::to_string(steps.size()) + " step counts for " +
                     std::to_string(params_.size()) + " parameters");
  std::map<std::string, const at::Tensor*> by_name;
  for (const auto& [name, t] : tensors) by_name[name] = &t;
  c10::NoGradGuard no_grad;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    for (auto [suffix, dst] : {std::pair{".exp_avg", &exp_avg_[i]}, std::pair{".exp_avg_sq", &exp_avg_sq_[i]}}) {
      auto it = by_name.find(params_[i].name + suffix);
      if (it == by_name.end()) throw ModelError("optimizer state: no '" + params_[i].name + suffix + "'");
      if (!it->second->sizes().equals(dst->sizes()))
        throw ModelError("optimizer state: '" + params_[i].name + suffix + "' has the wrong shape");
      dst->copy_(*it->second);
    }
    steps_[i] = steps[i];
  }
}

}  // namespace linsweep
