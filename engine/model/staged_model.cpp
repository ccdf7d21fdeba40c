// Running a model split by layers over ranks, in lockstep.
#include "engine/model/staged_model.hpp"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/autograd/custom_function.h>

#include <string>

#include "common/errors.hpp"

namespace linsweep {

StagedModel::StagedModel(std::shared_ptr<LanguageModel> inner, Communicator& replica, std::vector<StageLayers> stages,
                         int64_t whole_parameters)
    : LanguageModel(inner->config()),
      inner_(std::move(inner)),
      replica_(replica),
      stages_(std::move(stages)),
      stage_(replica.rank()),
      whole_parameters_(whole_parameters) {
  if (static_cast<std::int64_t>(stages_.size()) != replica.size())
    throw ModelError("a model of " + std::to_string(stages_.size()) + " stages on a replica of " +
                     std::to_string(replica.size()) + " ranks");
  register_module("stage", inner_);
}

std::int64_t StagedModel::stage_of(int64_t layer) const {
  for (std::size_t s = 0; s < stages_.size(); ++s)
    if (layer >= stages_[s].first && layer < stages_[s].end) return static_cast<std::int64_t>(s);
  throw ModelError("layer " + std::to_string(layer) + " is outside the model's 0.." +
                   std::to_string(config_.n_layers - 1));
}

at::Tensor StagedModel::embed_at(const at::Tensor& ids, int64_t start) {
  if (start != 0) throw ModelError("a model split over ranks does not generate (runtime.stages)");
  if (stage_ == 0) return inner_->embed(ids);
  // The stream's shape and dtype, for the stages it passes through before the one it reaches.
  const at::Tensor any = inner_->parameters().front();
  return at::empty({ids.size(0), ids.size(1), config_.d_model}, any.options());
}

void StagedModel::send_to(const at::Tensor& t, std::int64_t stage) {
  const at::Tensor x = (replica_.device_memory() ? t : t.to(at::kCPU)).contiguous();
  replica_.send(x.data_ptr(), static_cast<std::size_t>(x.nbytes()), static_cast<int>(stage));
}

at::Tensor StagedModel::receive_from(const at::Tensor& like, std::int64_t stage) {
  at::Tensor x =
      at::empty(like.sizes(), like.options().device(replica_.device_memory() ? like.device() : at::Device(at::kCPU)));
  replica_.recv(x.data_ptr(), static_cast<std::size_t>(x.nbytes()), static_cast<int>(stage));
  return x.to(like.device());
}

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// What forward keeps for backward: the model (which outlives the step's graph) and the
// stream's shape, dtype and device (a gradient may arrive undefined: nothing used the stream).
void keep(AutogradContext* ctx, StagedModel* model, const at::Tensor& stream) {
  ctx->saved_data["model"] = reinterpret_cast<std::int64_t>(model);  // NOLINT: a pointer kept as an integer
  ctx->saved_data["sizes"] = stream.sizes().vec();
  ctx->saved_data["dtype"] = stream.scalar_type();
  ctx->saved_data["device"] = stream.device();
}

StagedModel* model_of(AutogradContext* ctx) {
  return reinterpret_cast<StagedModel*>(ctx->saved_data["model"].toInt());  // NOLINT: the pointer keep stored
}

// The stream's gradient as it came, or zeros of the stream's shape where it came undefined.
at::Tensor gradient_or_zeros(AutogradContext* ctx, const at::Tensor& grad) {
  if (grad.defined()) return grad;
  return at::zeros(
      ctx->saved_data["sizes"].toIntVector(),
      at::TensorOptions().dtype(ctx->saved_data["dtype"].toScalarType()).device(ctx->saved_data["device"].toDevice()));
}

// The stream leaving a stage while autograd records a gradient for it: forward sends h on;
// backward receives the next stage's gradient of it and passes it back into this stage's layers.
class SendStream : public torch::autograd::Function<SendStream> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& h, StagedModel* model) {
    keep(ctx, model, h);
    model->send_to(h.detach(), model->stage() + 1);
    return h.detach().clone();
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    StagedModel* model = model_of(ctx);
    return {model->receive_from(gradient_or_zeros(ctx, grads[0]), model->stage() + 1), at::Tensor()};
  }
};

// The stream arriving at a stage whose sender records a gradient for it: forward receives it;
// backward sends its gradient back to the previous stage. `anchor` (a scalar that requires a
// gradient) gives the received stream a place in the graph, as the unsplit model's stream has.
class ReceiveStream : public torch::autograd::Function<ReceiveStream> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& like, const at::Tensor& anchor,
                            StagedModel* model) {
    keep(ctx, model, like);
    return model->receive_from(like, model->stage() - 1);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    StagedModel* model = model_of(ctx);
    model->send_to(gradient_or_zeros(ctx, grads[0]), model->stage() - 1);
    return {at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// Whether this forward records for a backward pass across the stages: every rank of a replica
// decides alike, since they run the same code in the same modes.
bool recording() { return c10::GradMode::is_enabled() && !c10::InferenceMode::is_enabled(); }

}  // namespace

// One byte, in the stream's memory (device memory where the communicator takes only that).
void StagedModel::send_flag(bool on, const at::Tensor& like) {
  send_to(at::full({1}, on ? 1 : 0, like.options().dtype(at::kByte)), stage_ + 1);
}

bool StagedModel::receive_flag(const at::Tensor& like) {
  return receive_from(at::empty({1}, like.options().dtype(at::kByte)), stage_ - 1).item<std::uint8_t>() != 0;
}

// The stream crosses at the output of a stage's last layer, so that the stream a caller keeps
// between layers (a prefix cache, hidden_from) is the real one on the stage that holds the next
// layer.
at::Tensor StagedModel::layer_step(int64_t layer, const at::Tensor& h, KvCache* cache) {
  if (cache != nullptr) throw ModelError("a model split over ranks does not generate (runtime.stages)");
  const std::int64_t s = stage_of(layer);
  at::Tensor out = stage_ == s ? inner_->run_layer(layer, h) : h;
  const bool crossing = layer + 1 == stages_[static_cast<std::size_t>(s)].end && s + 1 < stages();
  if (!crossing || (stage_ != s && stage_ != s + 1)) return out;
  if (!recording()) {
    if (stage_ == s) send_to(out, s + 1);
    return stage_ == s ? out : receive_from(out, s);
  }
  // Whether the stream needs a gradient (something before it trains) goes with it, so that the
  // next stage's stream needs one exactly where the unsplit model's would: its layers then take
  // the same kernels, and a gradient crosses back only when it is used.
  if (stage_ == s) {
    const bool needs = out.requires_grad();
    send_flag(needs, out);
    if (!needs) {
      send_to(out, s + 1);
      return out;
    }
    return SendStream::apply(out, this);
  }
  if (!receive_flag(out)) return receive_from(out, s);
  const at::Tensor anchor = at::zeros({}, out.options()).requires_grad_(true);  // ATen factories ignore requires_grad
  return ReceiveStream::apply(out.detach(), anchor, this);
}

at::Tensor StagedModel::final_norm(const at::Tensor& h) { return scores() ? inner_->final_norm(h) : h; }

at::Tensor StagedModel::head(const at::Tensor& h) {
  if (!scores())
    throw ModelError("the head on stage " + std::to_string(stage_) + " of " + std::to_string(stages_.size()) +
                     ": only the last stage of a split model scores");
  return inner_->head(h);
}

at::Tensor StagedModel::input_embedding(const at::Tensor& ids) {
  if (stage_ != 0)
    throw ModelError("the input embedding on stage " + std::to_string(stage_) + " of " +
                     std::to_string(stages_.size()) + ": only the first stage of a split model holds it");
  return inner_->input_embedding(ids);
}

MlpHook& StagedModel::hook(int64_t layer) { return inner_->hook(layer); }

bool StagedModel::holds(int64_t layer) const { return stage_of(layer) == stage_; }

bool StagedModel::scores() const { return stage_ + 1 == static_cast<std::int64_t>(stages_.size()); }

}  // namespace linsweep
