// The driver of a training unit: segments of optimizer steps, evaluations, checkpoints and resume.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/corpus/windows.hpp"
#include "engine/model/load_model.hpp"
#include "engine/train/parameter_groups.hpp"
#include "engine/train/soft_gate.hpp"
#include "engine/train/trainer.hpp"
#include "engine/train/training_checkpoint.hpp"
#include "experiments/framework/experiment.hpp"
#include "experiments/training/training_params.hpp"
#include "storage/table_def.hpp"

namespace linsweep {

// A row of the progressive and finetune tables: one evaluation of a training unit on a corpus.
struct TrainingEvalRow {
  std::string model, variant;
  std::int64_t step = 0;
  std::string layers, corpus;
  double ppl = 0, delta_pct = 0, ppl_base = 0;
  std::int64_t n_linear = 0;
  std::string phase;
  double train_loss = 0;
};
// The schema of such a table (progressive.cpp and finetune.cpp register one each).
TableDef<TrainingEvalRow> training_eval_table(const std::string& name, const std::string& doc);

// One phase of a training unit: `enter` runs when it begins (before its first step, and again
// on resume for every segment that had begun: it must only configure hooks, gates and the
// trainer), then `steps` optimizer steps, with evaluations every `eval_every` steps (0: only
// at its end) and always at its end. A non-empty `entry_eval` also evaluates right after
// `enter`, before any step, under that label (e.g. the linearized model before fine-tuning);
// a resumed unit never repeats it.
struct Segment {
  std::string label;
  std::int64_t steps = 0;
  std::int64_t eval_every = 0;
  std::function<void()> enter;
  std::string entry_eval;
};

// Runs a training unit's segments on its own float32 copy of the model. Evaluations write
// rows through `evaluate(step, segment label)`; every step appends a training_loss row.
// Every `checkpoint_every` steps (and at segment ends) the changed parameters, the soft gates,
// the optimizer and the rows so far are saved under STORE/checkpoints/<unit id>/ (rank 0 of
// the group writes, and with stages the first replica's rank of each stage under stage-<s>/;
// every rank reads its stage's); a unit that starts with a checkpoint there resumes
// from it and appends a "resumed" event to the store's journal. When the input's
// stop_requested() turns true (agreed over the group), the next step saves a checkpoint and
// throws InterruptedError instead. Not thread safe.
class TrainingRun {
 public:
  explicit TrainingRun(const ExperimentInput& in);

  LanguageModel& model() { return *loaded_.model; }
  const LoadedModel& loaded() const { return loaded_; }
  const ExperimentInput& input() const { return in_; }
  const Windows& train_windows() const { return train_; }

  // The parameters of `groups`, minus the MLPs of `linear_layers`; only these require a
  // gradient. They are the ones checkpoints save.
  std::vector<NamedParameter> select(const std::vector<std::string>& groups,
                                     const std::set<std::int64_t>& linear_layers);
  // Installs a trainer (replacing the previous one) over `params`; id names it in checkpoints.
  void use_trainer(const std::string& id, std::vector<NamedParameter> params, const TrainerOptions& options);
  // A soft gate for `layer` (created seeded, on the model's device; restored on resume).
  std::shared_ptr<SoftGate> add_gate(std::int64_t layer, std::int64_t hidden, double bias, std::uint64_t seed);
  const std::map<std::int64_t, std::shared_ptr<SoftGate>>& gates() const { return gates_; }
  // Extra loss term for the trainer (e.g. L1 on mean gate), given this rank's batch share.
  void set_extra_loss(std::function<at::Tensor(double share)> fn) { extra_ = std::move(fn); }

  // PPL of the model as hooked on `w`, windows sharded over the group and summed.
  double perplexity(const Windows& w);
  // The unit's parameters common to every training kind.
  const TrainingUnitCommon& common() const noexcept { return common_; }
  // The affine surrogate of each of `layers` from the unit's fit (deps[0]) at common().lambda.
  // Throws InputError when the unit has no fit dependency or a layer was not fitted.
  std::map<std::int64_t, AffineMap> surrogates(const std::vector<std::int64_t>& layers) const;
  // Evaluates the model as hooked on the eval split of every corpus of common().eval (loaded
  // once, at construction) and calls row(corpus, ppl, base, loss) for each: `base` is the
  // untouched model's PPL (recorded by the evaluation of phase "start"), `loss` the mean
  // training loss since the previous evaluation; both survive a resume. `before` runs before
  // each corpus (e.g. to reset running sums).
  void evaluate_corpora(std::int64_t step, const std::string& phase,
                        const std::function<void(const std::string& corpus, double ppl, double base, double loss)>& row,
                        const std::function<void()>& before = {});
  // Sums `v` element-wise over the unit's worker group (nothing to do on a single rank).
  void sum_over_group(std::vector<double>& v);
  // Adds a row to table `name` (built with the table's TableDef); kept across resumes.
  void add_row(const std::string& table, const Row& row);
  // A tensor the unit computes once while it runs (e.g. a surrogate refitted on the model as
  // trained so far): make() on first use of `name`; the checkpointed value when the unit
  // resumed from a checkpoint saved after that. Saved with every checkpoint; a segment's
  // `enter` may call it (on resume it runs before the trained parameters are restored).
  at::Tensor keep(const std::string& name, const std::function<at::Tensor()>& make);
  const std::map<std::string, at::Tensor>& kept() const noexcept { return kept_; }
  // The optimizer step running now (0-based), for step-dependent loss terms.
  std::int64_t current_step() const noexcept { return current_step_; }

  // Runs (or resumes) the segments; returns the unit's tables.
  UnitResult run(const std::vector<Segment>& segments,
                 const std::function<void(std::int64_t, const std::string&)>& evaluate, const std::string& experiment,
                 const std::string& variant, std::int64_t checkpoint_every);

  // The windows of `split` of corpus `corpus` (a corpus of the spec), tokenized with the
  // model's tokenizer; each corpus is read and tokenized once per unit.
  Windows corpus_windows(const std::string& corpus, const Split& split, std::int64_t context);

 private:
  void save(std::int64_t step, std::int64_t segments_done, std::int64_t segments_entered);
  // STORE/checkpoints/<unit id>/, and with stages its stage-<s>/ (each stage saves its own).
  std::string checkpoint_dir() const;
  bool leader() const;
  // Whether this rank writes its stage's checkpoints: the first replica's (rank 0 without stages).
  bool stage_writer() const;
  // The checkpoint every stage has (with stages, the newest step all stages saved: a stop
  // between two stages' writes leaves one a checkpoint ahead), or nullopt.
  std::optional<TrainingCheckpoint> common_checkpoint() const;
  // Mean training loss of the steps after `after` (NaN when none ran).
  double mean_loss_since(std::int64_t after) const;
  // Whether the run was asked to stop (agreed over the group).
  bool stop_now();
  // Restores the run from `ckpt`: re-enters every segment that had begun (marking it in
  // *entered), then loads the trained tensors, gates, optimizer state and rows. Returns the
  // step and the segments done. Throws ModelError naming a tensor the checkpoint lacks.
  std::pair<std::int64_t, std::int64_t> resume(const TrainingCheckpoint& ckpt, const std::vector<Segment>& segments,
                                               const std::vector<std::int64_t>& start, std::vector<bool>* entered);
  // Runs segment k from `*step` to its end (checkpointing, stopping on request).
  void run_segment(const std::vector<Segment>& segments, std::size_t k, const std::vector<std::int64_t>& start,
                   const std::function<void(std::int64_t, const std::string&)>& evaluate, const std::string& experiment,
                   const std::string& variant, std::int64_t checkpoint_every, std::int64_t* step);
  // The rows kept so far, as the unit's tables.
  std::vector<Table> result_tables() const;

  const ExperimentInput& in_;
  TrainingUnitCommon common_;
  LoadedModel loaded_;
  Windows train_;
  std::map<std::string, std::vector<TokenId>> streams_;  // corpus -> token stream
  std::vector<std::pair<std::string, Windows>> evals_;   // corpus -> eval windows
  std::vector<NamedParameter> saved_;                    // every parameter any trainer of this unit changes
  std::string trainer_id_;
  std::unique_ptr<Trainer> trainer_;
  std::map<std::int64_t, std::shared_ptr<SoftGate>> gates_;
  std::function<at::Tensor(double)> extra_;
  std::map<std::string, at::Tensor> kept_, restored_;  // keep(): computed or saved; loaded from a checkpoint
  nlohmann::json rows_ = nlohmann::json::object();
  nlohmann::json memo_ = nlohmann::json::object();  // kept across resumes: base PPL per corpus, last_eval
  std::int64_t current_step_ = 0;
};

// Trainer options from a training unit's parameters (lr, weight_decay, clip, batch, seed,
// warmup, schedule) for `total_steps` steps.
TrainerOptions trainer_options(const TrainingUnitCommon& params, std::int64_t total_steps);

}  // namespace linsweep
