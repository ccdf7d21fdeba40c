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
#include "engine/train/parameter_groups.hpp"

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
  if (!model.scores()) return model.hidden_states(ids).sum().to(at::kFloat) * 0.0;
  const auto T = ids.size(1);
  const at::Tensor logits = model.forward(ids);                                      // [B, T, V]
  const at::Tensor pred = logits.slice(1, 0, T - 1).reshape({-1, logits.size(-1)});  // [B·(T−1), V]
  const at::Tensor target = ids.slice(1, 1, T).reshape({-1});                        // [B·(T−1)]
  // At least float32 (bf16 logits under autocast), float64 when the model runs in float64.
  const at::Tensor p = pred.scalar_type() == at::kDouble ? pred : pred.to(at::kFloat);
  return at::cross_entropy_loss(p, target, {}, sum ? at::Reduction::Sum : at::Reduction::Mean);
}

namespace {

// The per-parameter norms of every stage, in stage order: each stage's count, then its norms,
// summed into slots that are zero elsewhere (x + 0 is x exactly).
std::vector<at::Tensor> norms_of_every_stage(const std::vector<at::Tensor>& mine, Communicator& stages) {
  std::vector<double> counts(static_cast<std::size_t>(stages.size()), 0.0);
  counts[static_cast<std::size_t>(stages.rank())] = static_cast<double>(mine.size());
  stages.allreduce_sum(counts);
  std::size_t offset = 0, total = 0;
  for (int s = 0; s < stages.size(); ++s) {
    if (s < stages.rank()) offset += static_cast<std::size_t>(counts[static_cast<std::size_t>(s)]);
    total += static_cast<std::size_t>(counts[static_cast<std::size_t>(s)]);
  }
  std::vector<double> values(total, 0.0);
  for (std::size_t i = 0; i < mine.size(); ++i) values[offset + i] = mine[i].item<double>();
  stages.allreduce_sum(values);
  std::vector<at::Tensor> all;
  // On the CPU on every stage, so that all stages form the same norm (float32: gradients' norms are
  // float32 numbers, and a double holds them exactly).
  for (double v : values) all.push_back(at::scalar_tensor(v, at::TensorOptions().dtype(at::kFloat)));
  return all;
}

}  // namespace

double clip_gradients(const std::vector<NamedParameter>& params, double max_norm, Communicator* stages,
                      const at::Tensor& counted_elsewhere) {
  std::vector<at::Tensor> norms;
  for (const auto& p : params)
    if (p.tensor.grad().defined() && !p.tensor.is_same(counted_elsewhere))
      norms.push_back(p.tensor.grad().detach().norm(2));
  if (stages != nullptr) norms = norms_of_every_stage(norms, *stages);
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
                 TrainerRanks ranks)
    : model_(model),
      train_(train),
      options_(options),
      ranks_(ranks),
      adam_(std::move(params), options.adam),
      order_(train.count, options.batch, options.seed) {
  tied_ = find_tied_matrix();
  const int replicas = replica_count();
  if (options_.batch < replicas)
    throw InputError("training batch " + std::to_string(options_.batch) + " is smaller than the worker group's " +
                     std::to_string(replicas) + (ranks_.replica != nullptr ? " replicas" : " ranks"));
}

at::Tensor Trainer::find_tied_matrix() const {
  Communicator* replica = ranks_.replica;
  if (replica == nullptr || !model_.config().tied_head) return {};
  if (replica->rank() != 0 && replica->rank() + 1 != replica->size()) return {};
  // The token matrix is the one parameter outside the layers shaped [vocab, d] on both stages.
  const ModelConfig& c = model_.config();
  at::Tensor found;
  for (const auto& p : adam_.parameters()) {
    if (parameter_layer(p.name) >= 0 || p.tensor.sizes() != at::IntArrayRef({c.vocab_size, c.d_model})) continue;
    if (found.defined()) throw ModelError("a tied head over stages: two parameters are shaped like the token matrix");
    found = p.tensor;
  }
  return found;
}

void Trainer::sum_tied_gradient() {
  Communicator& replica = *ranks_.replica;
  if (!tied_.grad().defined()) tied_.mutable_grad() = at::zeros_like(tied_);
  at::Tensor g = tied_.mutable_grad();
  const bool host = !replica.device_memory();
  const int last = replica.size() - 1;
  at::Tensor buffer = host ? g.to(at::kCPU).contiguous() : g.contiguous();
  const auto bytes = static_cast<std::size_t>(buffer.nbytes());
  if (replica.rank() == last) {  // sends its copy's gradient, receives the sum
    replica.send(buffer.data_ptr(), bytes, 0);
    replica.recv(buffer.data_ptr(), bytes, 0);
    g.copy_(buffer);
    return;
  }
  at::Tensor other = at::empty_like(buffer);
  replica.recv(other.data_ptr(), bytes, last);
  g.add_(other.to(g.device()));  // one addition, as autograd adds the two uses' gradients
  buffer = host ? g.to(at::kCPU).contiguous() : g.contiguous();
  replica.send(buffer.data_ptr(), bytes, last);
}

int Trainer::replica_count() const {
  if (ranks_.group == nullptr) return 1;
  return ranks_.replica != nullptr ? ranks_.group->size() / ranks_.replica->size() : ranks_.group->size();
}

int Trainer::replica_index() const {
  if (ranks_.group == nullptr) return 0;
  return ranks_.replica != nullptr ? ranks_.group->rank() / ranks_.replica->size() : ranks_.group->rank();
}

void Trainer::sum_gradients(Communicator& peers, std::vector<double>& also) {
  // Which parameters got a gradient on any peer (and `also`, in the same message), then the
  // gradients themselves, summed.
  const auto& params = adam_.parameters();
  std::vector<double> flags(params.size(), 0.0);
  for (std::size_t i = 0; i < params.size(); ++i) flags[i] = params[i].tensor.grad().defined() ? 1.0 : 0.0;
  flags.insert(flags.end(), also.begin(), also.end());
  peers.allreduce_sum(flags);
  std::copy(flags.begin() + static_cast<std::ptrdiff_t>(params.size()), flags.end(), also.begin());
  std::vector<at::Tensor> grads;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (flags[i] == 0) continue;
    const at::Tensor& p = params[i].tensor;
    if (!p.grad().defined()) p.mutable_grad() = at::zeros_like(p);
    grads.push_back(p.grad());
  }
  if (grads.empty()) return;
  std::vector<at::Tensor> flat_parts;
  for (const auto& g : grads) flat_parts.push_back(g.reshape({-1}).to(at::kCPU, at::kDouble));
  at::Tensor flat = at::cat(flat_parts);
  peers.allreduce_sum(std::span<double>(flat.data_ptr<double>(), static_cast<std::size_t>(flat.numel())));
  std::int64_t at_ = 0;
  for (auto& g : grads) {
    const std::int64_t n = g.numel();
    g.copy_(flat.slice(0, at_, at_ + n).view(g.sizes()));
    at_ += n;
  }
}

StepStats Trainer::step(std::int64_t step, const std::function<at::Tensor(double)>& extra) {
  StepStats out;
  out.lr = learning_rate(options_.schedule, options_.adam.lr, step - options_.step_offset, options_.total_steps,
                         options_.warmup);
  const std::vector<std::int64_t> batch = order_.windows(step);
  const auto B = static_cast<std::int64_t>(batch.size()), T = train_.context;
  // Every stage of a replica runs the replica's windows.
  const int index = replica_index(), count = replica_count();
  const std::int64_t first = shard_begin(B, index, count), mine = shard_begin(B, index + 1, count) - first;
  const at::Device device = model_.parameters().front().device();
  std::vector<TokenId> ids(static_cast<std::size_t>(mine * T));
  for (std::int64_t k = 0; k < mine; ++k) {
    const auto src = train_.ids.begin() + batch[static_cast<std::size_t>(first + k)] * T;
    std::copy(src, src + T, ids.begin() + k * T);
  }
  adam_.zero_grad();
  const double share = static_cast<double>(mine) / static_cast<double>(B);
  std::vector<double> sums = {0, 0};  // Σ loss over this rank's tokens / all tokens, extra share
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
    // A stage of a split model where nothing trains and no gradient crosses has no graph.
    if (total.requires_grad()) total.backward();
  }
  // Both copies of a tied matrix trained, or neither (the same groups on every stage).
  if (ranks_.replica != nullptr && model_.config().tied_head && ranks_.replica->size() > 1) {
    std::vector<double> copies(static_cast<std::size_t>(ranks_.replica->size()), 0.0);
    copies[static_cast<std::size_t>(ranks_.replica->rank())] = tied_.defined() ? 1.0 : 0.0;
    ranks_.replica->allreduce_sum(copies);
    if (copies.front() != copies.back())
      throw ModelError("a tied head over stages: the first and the last stage train different parameters");
    if (tied_.defined()) sum_tied_gradient();
  }
  if (ranks_.group != nullptr) {
    // Without stages the group's ranks hold the same parameters; with them, a stage's peers do.
    if (ranks_.stage_peers == nullptr) {
      sum_gradients(*ranks_.group, sums);
    } else {
      std::vector<double> none;
      sum_gradients(*ranks_.stage_peers, none);
      ranks_.group->allreduce_sum(sums);  // the scoring stages' losses; the others add zeros
    }
  }
  out.loss = sums[0];
  out.extra = sums[1];
  if (!std::isfinite(out.loss) || !std::isfinite(out.extra))
    throw ModelError("training diverged at step " + std::to_string(step) + ": loss " + std::to_string(out.loss));
  // The tied matrix counts once, on the first stage, where the unsplit model's order has it.
  const bool counted_elsewhere = tied_.defined() && ranks_.replica->rank() != 0;
  out.grad_norm =
      clip_gradients(adam_.parameters(), options_.clip, ranks_.replica, counted_elsewhere ? tied_ : at::Tensor());
  adam_.step(out.lr);
  return out;
}

}  // namespace linsweep
