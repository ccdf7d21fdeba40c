// Running a model split by layers over ranks, in lockstep.
#include "engine/model/staged_model.hpp"

#include <ATen/ATen.h>

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

void StagedModel::send_on(const at::Tensor& h) {
  const at::Tensor x = (replica_.device_memory() ? h : h.to(at::kCPU)).contiguous();
  replica_.send(x.data_ptr(), static_cast<std::size_t>(x.nbytes()), static_cast<int>(stage_ + 1));
}

at::Tensor StagedModel::receive_like(const at::Tensor& h) {
  at::Tensor x = at::empty(h.sizes(), h.options().device(replica_.device_memory() ? h.device() : at::Device(at::kCPU)));
  replica_.recv(x.data_ptr(), static_cast<std::size_t>(x.nbytes()), static_cast<int>(stage_ - 1));
  return x.to(h.device());
}

// The stream crosses at the output of a stage's last layer, so that the stream a caller keeps
// between layers (a prefix cache, hidden_from) is the real one on the stage that holds the next
// layer.
at::Tensor StagedModel::layer_step(int64_t layer, const at::Tensor& h, KvCache* cache) {
  if (cache != nullptr) throw ModelError("a model split over ranks does not generate (runtime.stages)");
  const std::int64_t s = stage_of(layer);
  at::Tensor out = stage_ == s ? inner_->run_layer(layer, h) : h;
  const bool crossing = layer + 1 == stages_[static_cast<std::size_t>(s)].end && s + 1 < stages();
  if (crossing && stage_ == s) send_on(out);
  if (crossing && stage_ == s + 1) out = receive_like(out);
  return out;
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
