// One optimizer step of next-token training: batch, loss, backward, group all-reduce, clip, AdamW.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "engine/corpus/windows.hpp"
#include "engine/train/adamw.hpp"
#include "engine/train/batch_order.hpp"

namespace linsweep {

class Communicator;
class LanguageModel;

struct TrainerOptions {
  AdamWOptions adam;
  double clip = 1.0;       // max global gradient norm; <= 0 disables clipping
  std::int64_t batch = 8;  // windows per optimizer step, over the whole group
  std::uint64_t seed = 0;  // batch order
  LrSchedule schedule = LrSchedule::kConstant;
  std::int64_t warmup = 0;       // steps of linear warmup
  std::int64_t total_steps = 0;  // for the cosine schedule
  std::int64_t step_offset = 0;  // the schedule's step 0 (a later phase's first global step)
  // On CUDA, the forward pass under bfloat16 autocast (master weights stay float32); on the
  // CPU training is always float32.
  bool bf16_autocast = false;
};

struct StepStats {
  double loss = 0;       // mean next-token cross-entropy over the batch (all ranks)
  double extra = 0;      // the extra loss term's value (all ranks), 0 without one
  double grad_norm = 0;  // global L2 norm before clipping
  double lr = 0;
};

// The ranks a training step involves. `group`: the worker group, or null for one rank. With
// the model split over stages (a StagedModel, engine/model/staged_model.hpp), the group's ranks
// are its replicas' stages in order (rank = replica·stages + stage); `replica` is the
// communicator over this rank's replica and `stage_peers` over the ranks that hold this rank's
// stage in every replica; both null without stages.
struct TrainerRanks {
  Communicator* group = nullptr;
  Communicator* replica = nullptr;
  Communicator* stage_peers = nullptr;
};

// Trains `params` (a subset of the model's parameters, plus any extra modules the hooks
// call, such as soft gates) on `train`. Step s reads BatchOrder(seed)'s windows for s;
// within a worker group each replica (each rank, without stages) takes a contiguous share of
// them. Gradients and the set of parameters that received one are summed over the ranks that
// hold the same parameters (the group, or a stage's peers), losses over the group, and the
// clipping norm covers every stage's gradients, so every rank applies the update the unsplit
// model on one rank would; a head tied to the embedding, whose matrix the first and the last
// stage each hold, gets the sum of both copies' gradients on both, and counts once. On CUDA the forward runs under bf16
// autocast when the options ask for it, else in float32; on CPU in float32. The model, windows and communicators must
// outlive the trainer. Not thread safe.
class Trainer {
 public:
  Trainer(LanguageModel& model, std::vector<NamedParameter> params, const Windows& train, TrainerOptions options,
          TrainerRanks ranks = {});

  // Runs optimizer step number `step` (0-based). `extra`, when set, is called after the
  // forward pass and returns a scalar added to this rank's loss (scale it to this rank's
  // share of the batch; the group sums the shares). Throws on non-finite loss.
  StepStats step(std::int64_t step, const std::function<at::Tensor(double share)>& extra = {});

  AdamW& optimizer() noexcept { return adam_; }
  const TrainerOptions& options() const noexcept { return options_; }

 private:
  // Sums this step's gradients over `peers` (ranks holding the same parameters), and `also`
  // in the same message.
  void sum_gradients(Communicator& peers, std::vector<double>& also);
  // The data-parallel replicas of the group (its ranks, without stages) and this rank's.
  int replica_count() const;
  int replica_index() const;
  // With stages and a head tied to the embedding, the first and the last stage each train a
  // copy of the token matrix: the trained one on this rank (or undefined), found in the ctor.
  at::Tensor find_tied_matrix() const;
  // Adds the two copies' gradients (the unsplit model's one gradient) on both stages.
  void sum_tied_gradient();

  LanguageModel& model_;
  const Windows& train_;
  TrainerOptions options_;
  TrainerRanks ranks_;
  AdamW adam_;
  BatchOrder order_;
  at::Tensor tied_;
};

// Mean next-token cross-entropy of ids [B, T] under the model (as hooked): position t
// predicts token t+1, t = 0..T−2; the sum over positions is returned when `sum` is true. On a
// stage of a split model that does not score (LanguageModel::scores() false) it is zero times
// the stream the stage passes on: a loss whose backward pass joins the stages' (staged_model.hpp).
at::Tensor next_token_loss(LanguageModel& model, const at::Tensor& ids, bool sum = false);

// PyTorch's clip_grad_norm_(max_norm, p=2): scales every gradient by
// min(1, max_norm / (norm + 1e-6)); returns the norm before clipping. With `stages` (the
// communicator over a split model's replica) the norm is over every stage's gradients, taken
// in stage order as the unsplit model's parameters come, so that it is the unsplit norm bit
// for bit; collective over `stages`. `counted_elsewhere` (a tied matrix's second copy) is
// clipped but left out of the norm.
double clip_gradients(const std::vector<NamedParameter>& params, double max_norm, Communicator* stages = nullptr,
                      const at::Tensor& counted_elsewhere = {});

}  // namespace linsweep
