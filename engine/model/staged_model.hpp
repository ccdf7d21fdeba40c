// A model split by layers over the consecutive ranks of a replica (runtime.stages; docs/spec.md,
// "Memory"), run by every rank of the replica in lockstep: each rank executes the same
// experiment code, and the model makes that code compute each layer once. A rank holds its
// stage's layers; the first stage also the input embedding, the last the head (and the
// embedding's matrix where the head is tied to it). run_layer computes a layer on the rank that
// holds it and, after the last layer of a stage, sends the stream to the next stage (MPI point
// to point on CPUs, NCCL on GPUs), which returns it as that layer's output; the others pass
// their stream through unchanged. A run_layer of a stage's last layer therefore always moves the
// stream, also inside mlp_stream. Only the last stage scores (scores()): token_nll is zeros on
// the others, so a sum over the ranks of the replica (and over the replicas) is the model's. Every rank has every
// layer's hook; only the holder's runs, so sums a hook gathers are the holder's (zeros elsewhere). Collective over the
// replica: every rank must make the same calls in the same order. Not thread safe.
//
// While autograd records (grad mode on, outside inference mode) and the stream needs a gradient
// (something before the crossing trains: the sender tells the receiver), the crossing is part
// of the graph: a backward pass from each rank's loss (the scored loss on the last stage; on the
// others a zero-weighted function of the stream they sent, next_token_loss in
// engine/train/trainer.hpp) receives the next stage's gradient of the stream it sent and sends
// the gradient of the stream it received back, so the stages backpropagate in lockstep, last
// to first. A rank whose loss needs no gradient (nothing on it trains, nothing crosses back)
// skips its backward pass.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/comm/communicator.hpp"
#include "engine/model/language_model.hpp"
#include "engine/model/model_stages.hpp"

namespace linsweep {

class StagedModel : public LanguageModel {
 public:
  // `inner` holds stage `replica.rank()` of `stages` (as load_model builds it); `replica` is
  // the communicator over the replica's ranks, in stage order, and must outlive the model;
  // `whole_parameters` is the unsplit model's count (LoadedModel::parameter_count).
  StagedModel(std::shared_ptr<LanguageModel> inner, Communicator& replica, std::vector<StageLayers> stages,
              int64_t whole_parameters);

  // The last stage's norm; the others pass h through.
  at::Tensor final_norm(const at::Tensor& h) override;
  // The last stage only: throws ModelError on the others, which hold no scored stream.
  at::Tensor head(const at::Tensor& h) override;
  // Stage 0 only: throws ModelError on the others, which hold no embedding.
  at::Tensor input_embedding(const at::Tensor& ids) override;
  MlpHook& hook(int64_t layer) override;
  bool scores() const override;
  // Whether `layer` is this stage's; throws ModelError when it is out of range.
  bool holds(int64_t layer) const override;
  int64_t parameter_count() const override { return whole_parameters_; }

  std::int64_t stage() const noexcept { return stage_; }
  // The stage's own model, whose parameters carry the checkpoint's names.
  LanguageModel& stage_model() noexcept { return *inner_; }
  // One message of a crossing (the stream forward, its gradient back) to or from the rank of
  // `stage` in this replica: `t` itself, or a tensor shaped, typed and placed like `like`;
  // through host memory unless the communicator takes device memory. Each blocks until the
  // peer takes part.
  void send_to(const at::Tensor& t, std::int64_t stage);
  at::Tensor receive_from(const at::Tensor& like, std::int64_t stage);
  std::int64_t stages() const noexcept { return static_cast<std::int64_t>(stages_.size()); }

 protected:
  // Stage 0 embeds; the others return an uninitialised stream of its shape and dtype, which
  // their first run_layer replaces with the one they receive. A split model does not generate:
  // a start past 0 or a KV cache throws ModelError.
  at::Tensor embed_at(const at::Tensor& ids, int64_t start) override;
  at::Tensor layer_step(int64_t layer, const at::Tensor& h, KvCache* cache) override;

 private:
  std::int64_t stage_of(int64_t layer) const;
  // While autograd records: whether the stream sent next needs a gradient (one byte, placed
  // like the stream).
  void send_flag(bool on, const at::Tensor& like);
  bool receive_flag(const at::Tensor& like);

  std::shared_ptr<LanguageModel> inner_;
  Communicator& replica_;
  std::vector<StageLayers> stages_;
  std::int64_t stage_ = 0;
  int64_t whole_parameters_ = 0;
};

}  // namespace linsweep
