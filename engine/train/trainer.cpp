// The training step shared by progressive linearization, fine-tuning and pretraining.
#include "engine/train/trainer.hpp"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include <cmath>

#include "common/errors.hpp"
#include "engine/comm/communicator.hpp"
#include "engine/eval/scoring.hpp"
#include "engine/model/language_model.hpp"

namespace linsweep {
namespace {

// CUDA autocast state. LibTorch 2.4 added the device-type functions (PyTorch PR 124359) and
// deprecated the CUDA-only ones (is_enabled, set_enabled, get/set_autocast_gpu_dtype), which
// are absent from 1.13's header; Debian 13's 2.6 has both, the old ones deprecated.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool cuda_autocast_enabled() { return at::autocast::is_autocast_enabled(at::kCUDA); }
void set_cuda_autocast_enabled(bool on) { at::autocast::set_autocast_enabled(at::kCUDA, on); }
at::ScalarType cuda_autocast_dtype() { return at::autocast::get_autocast_dtype(at::kCUDA); }
void set_cuda_autocast_dtype(at::ScalarType t) { at::autocast::set_autocast_dtype(at::kCUDA, t); }
#else
bool cuda_autocast_enabled() { return at::autocast::is_enabled(); }
void set_cuda_autocast_enabled(bool on) { at::autocast::set_enabled(on); }
at::ScalarType cuda_autocast_dtype() { return at::autocast::get_autocast_gpu_dtype(); }
void set_cuda_autocast_dtype(at::ScalarType t) { at::autocast::set_autocast_gpu_dtype(t); }
#endif

// bf16 autocast for the forward pass on CUDA when `cuda` is true; restores the previous state on
// exit.
class AutocastScope {
 public:
  explicit AutocastScope(bool cuda) : active_(cuda) {
    if (!active_) return;
    was_enabled_ = cuda_autocast_enabled();
    previous_dtype_ = cuda_autocast_dtype();
    set_cuda_autocast_dtype(at::kBFloat16);
    set_cuda_autocast_enabled(true);
    at::autocast::increment_nesting();
  }
  ~AutocastScope() {
    if (!active_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    set_cuda_autocast_enabled(was_enabled_);
    set_cuda_autocast_dtype(previous_dtype_);
  }
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_, was_enabled_ = false;
  at::ScalarType previous_dtype_ = at::kBFloat16;
};

}  // namespace

at::Tensor next_token_loss(LanguageModel& model, const at::Tensor& ids, bool sum) {
  const auto T = ids.size(1);
  const at::Tensor logits = model.forward(ids);                                      // [B, T, V]
  const at::Tensor pred = logits.slice(1, 0, T - 1).reshape({-1, logits.size(-1)});  // [B·(T−1), V]
  const at::Tensor target = ids.slice(1, 1, T).reshape({-1});                        // [B·(T−1)]
  // At least float32 (bf16 logits under autocast), float64 when the model runs in float64.
  const at::Tensor p = pred.scalar_type() == at::kDouble ? pred : pred.to(at::kFloat);
  return at::cross_entropy_loss(p, target, {}, sum ? at::Reduction::Sum : at::Reduction::Mean);
}

double clip_gradients(const std::vector<NamedParameter>& params, double max_norm) {
  std::vector<at::Tensor> norms;
  for (const auto& p : params)
    if (p.tensor.grad().defined()) norms.push_back(p.tensor.grad().detach().norm(2));
  if (norms.empty()) return 0;
  const double total = at::stack(norms).norm(2).item<double>();
  if (max_norm > 0) {
    const double coef = std::min(1.0, max_norm / (total + 1e-6));
    for (const auto& p : params)
      if (p.tensor.grad().defined()) p.tensor.mutable_grad().detach().mul_(coef);
  }
  return total;
}

Trainer::Trainer(LanguageModel& model, std::vector<NamedParameter> params, const Windows& train, TrainerOptions options,
                 Communicator* group)
    : model_(model),
      train_(train),
      options_(options),
      group_(group),
      adam_(std::move(params), options.adam),
      order_(train.count, options.batch, options.seed) {
  if (group_ != nullptr && options_.batch < group_->size())
    throw InputError("training batch " + std::to_string(options_.batch) + " is smaller than the worker group (" +
                     std::to_string(group_->size()) + " ranks)");
}

StepStats Trainer::step(std::int64_t step, const std::function<at::Tensor(double)>& extra) {
  StepStats out;
  out.lr = learning_rate(options_.schedule, options_.adam.lr, step - options_.step_offset, options_.total_steps,
                         options_.warmup);
  const std::vector<std::int64_t> batch = order_.windows(step);
  const auto B = static_cast<std::int64_t>(batch.size()), T = train_.context;
  const int rank = group_ == nullptr ? 0 : group_->rank(), size = group_ == nullptr ? 1 : group_->size();
  const std::int64_t first = shard_begin(B, rank, size), mine = shard_begin(B, rank + 1, size) - first;
  const at::Device device = model_.parameters().front().device();
  std::vector<TokenId> ids(static_cast<std::size_t>(mine * T));
  for (std::int64_t k = 0; k < mine; ++k) {
    const auto src = train_.ids.begin() + batch[static_cast<std::size_t>(first + k)] * T;
    std::copy(src, src + T, ids.begin() + k * T);
  }
  adam_.zero_grad();
  const double share = static_cast<double>(mine) / static_cast<double>(B);
  double sums[2] = {0, 0};  // Σ loss over this rank's tokens / all tokens, extra share
  {
    const at::Tensor x = at::from_blob(ids.data(), {mine, T}, at::kInt).to(at::kLong).to(device);
    at::Tensor loss;
    {
      AutocastScope autocast(device.is_cuda() && options_.bf16_autocast);
      loss = next_token_loss(model_, x, /*sum=*/true) / static_cast<double>(B * (T - 1));
    }
    at::Tensor total = loss;
    if (extra) {
      const at::Tensor e = extra(share);
      sums[1] = e.item<double>();
      total = total + e;
    }
    sums[0] = loss.item<double>();
    total.backward();
  }
  const auto& params = adam_.parameters();
  if (group_ != nullptr) {
    // Which parameters got a gradient anywhere, then the gradients themselves, summed.
    std::vector<double> flags(params.size() + 2, 0.0);
    for (std::size_t i = 0; i < params.size(); ++i) flags[i] = params[i].tensor.grad().defined() ? 1.0 : 0.0;
    flags[params.size()] = sums[0], flags[params.size() + 1] = sums[1];
    group_->allreduce_sum(flags);
    sums[0] = flags[params.size()], sums[1] = flags[params.size() + 1];
    std::vector<at::Tensor> grads;
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (flags[i] == 0) continue;
      const at::Tensor& p = params[i].tensor;
      if (!p.grad().defined()) p.mutable_grad() = at::zeros_like(p);
      grads.push_back(p.grad());
    }
    if (!grads.empty()) {
      at::Tensor flat = at::cat([&] {
        std::vector<at::Tensor> f;
        for (const auto& g : grads) f.push_back(g.reshape({-1}).to(at::kCPU, at::kDouble));
        return f;
      }());
      group_->allreduce_sum(std::span<double>(flat.data_ptr<double>(), static_cast<std::size_t>(flat.numel())));
      std::int64_t at_ = 0;
      for (auto& g : grads) {
        const std::int64_t n = g.numel();
        g.copy_(flat.slice(0, at_, at_ + n).view(g.sizes()));
        at_ += n;
      }
    }
  }
  out.loss = sums[0];
  out.extra = sums[1];
  if (!std::isfinite(out.loss) || !std::isfinite(out.extra))
    throw ModelError("training diverged at step " + std::to_string(step) + ": loss " + std::to_string(out.loss));
  out.grad_norm = clip_gradients(params, options_.clip);
  adam_.step(out.lr);
  return out;
}

}  // namespace linsweep
