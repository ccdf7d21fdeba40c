// Training units: segments, evaluation rows, checkpoints inside the unit, resume.
#include "experiments/training/training_run.hpp"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>
#include <variant>

#include "common/errors.hpp"
#include "engine/comm/communicator.hpp"
#include "engine/corpus/corpus.hpp"
#include "engine/eval/scoring.hpp"
#include "engine/model/architecture_registry.hpp"
#include "engine/model/language_model.hpp"
#include "engine/model/load_model.hpp"
#include "engine/model/model_stages.hpp"
#include "engine/model/staged_model.hpp"
#include "engine/train/training_checkpoint.hpp"
#include "experiments/framework/unit_data.hpp"
#include "storage/journal.hpp"

namespace linsweep {

namespace {

struct TrainingLossRow {
  std::string model, experiment, variant;
  std::int64_t step = 0;
  double loss = 0, extra = 0, grad_norm = 0, lr = 0;
  std::string phase;
};

const TableDef<TrainingLossRow>& training_loss_table() {
  static const TableDef<TrainingLossRow> t =
      TableDef<TrainingLossRow>("training_loss", "one row per optimizer step of a training unit")
          .key("model", &TrainingLossRow::model)
          .key("experiment", &TrainingLossRow::experiment, "progressive or finetune")
          .key("variant", &TrainingLossRow::variant)
          .key("step", &TrainingLossRow::step, "steps completed")
          .column("loss", &TrainingLossRow::loss, "next-token cross-entropy of the step's batch")
          .column("extra", &TrainingLossRow::extra, "added loss terms (L1 on the soft gates)")
          .column("grad_norm", &TrainingLossRow::grad_norm, "gradient norm before clipping")
          .column("lr", &TrainingLossRow::lr, "learning rate of the step")
          .column("phase", &TrainingLossRow::phase, "the segment");
  return t;
}
const TableRegistrar kTrainingLossTable{training_loss_table().schema()};

nlohmann::json value_json(const Value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
  if (const auto* d = std::get_if<double>(&v)) return std::isfinite(*d) ? nlohmann::json(*d) : nlohmann::json(nullptr);
  return std::get<std::string>(v);
}

// The unit's float32 copy of the model: with stages, this rank's stage as a StagedModel over
// the unit's replica, as the executor loads the runner's model.
LoadedModel load_training_copy(const ExperimentInput& in) {
  LoadedModel loaded = load_model(in.model_path, ModelOptions{in.device, "float32", in.stage, in.stages});
  if (in.stages > 1)
    loaded.model = std::make_shared<StagedModel>(loaded.model, *in.replica, split_stages(loaded.config(), in.stages),
                                                 loaded.parameter_count);
  return loaded;
}

}  // namespace

TableDef<TrainingEvalRow> training_eval_table(const std::string& name, const std::string& doc) {
  return TableDef<TrainingEvalRow>(name, doc)
      .key("model", &TrainingEvalRow::model)
      .key("variant", &TrainingEvalRow::variant)
      .key("step", &TrainingEvalRow::step, "optimizer steps done")
      .column("layers", &TrainingEvalRow::layers, "layers linearized, comma-separated")
      .key("corpus", &TrainingEvalRow::corpus, "the eval corpus")
      .column("ppl", &TrainingEvalRow::ppl)
      .column("delta_pct", &TrainingEvalRow::delta_pct, "against the untouched model")
      .added("ppl_base", &TrainingEvalRow::ppl_base, "the untouched model's perplexity")
      .added("n_linear", &TrainingEvalRow::n_linear, "layers linearized")
      .added_key("phase", &TrainingEvalRow::phase, "the segment the evaluation ends or falls in")
      .added("train_loss", &TrainingEvalRow::train_loss, "mean training loss since the previous evaluation");
}

TrainingRun::TrainingRun(const ExperimentInput& in) : in_(in) {
  read_training_common(in.params, common_);
  // A private float32 copy: training must not touch the runner's cached model, and master
  // weights stay float32 whatever the spec's compute dtype (a bfloat16 dtype trains under
  // bf16 autocast on GPUs: use_trainer).
  loaded_ = load_training_copy(in);
  loaded_.model->train();
  for (auto& p : loaded_.model->parameters()) p.set_requires_grad(false);
  train_ = corpus_windows(in.corpus_name, common_.train, common_.basics.context);
  for (const auto& e : common_.eval)
    evals_.emplace_back(e.corpus, corpus_windows(e.corpus, e.split, common_.basics.context));
}

std::map<std::int64_t, AffineMap> TrainingRun::surrogates(const std::vector<std::int64_t>& layers) const {
  std::map<std::int64_t, AffineMap> maps;
  if (layers.empty()) return maps;
  if (in_.deps.empty() || in_.deps[0].kind != "fit")
    throw InputError(in_.unit_id + ": " + in_.kind + " needs its fit unit");
  for (std::int64_t layer : layers)
    maps[layer] =
        surrogate_map(in_.deps[0], in_.model_name, in_.corpus_name, layer, common_.basics.lambda, in_.unit_id);
  return maps;
}

void TrainingRun::evaluate_corpora(std::int64_t step, const std::string& phase,
                                   const std::function<void(const std::string&, double, double, double)>& row,
                                   const std::function<void()>& before) {
  const double loss = mean_loss_since(memo_.value("last_eval", std::int64_t{0}));
  for (const auto& [corpus, w] : evals_) {
    if (before) before();
    const double ppl = perplexity(w);
    if (phase == "start") memo_["base"][corpus] = ppl;  // before anything is linearized or trained
    row(corpus, ppl, memo_["base"][corpus].get<double>(), loss);
  }
  memo_["last_eval"] = step;
}

bool TrainingRun::stop_now() {
  double stop = in_.stop_requested && in_.stop_requested() ? 1.0 : 0.0;
  if (in_.group != nullptr) {
    // Every rank of the group must stop at the same step (the next step is collective).
    std::vector<double> v = {stop};
    in_.group->allreduce_sum(v);
    stop = v[0];
  }
  return stop > 0;
}

bool TrainingRun::leader() const { return in_.group == nullptr || in_.group->rank() == 0; }

bool TrainingRun::stage_writer() const { return in_.group == nullptr || in_.group->rank() < in_.stages; }

std::string TrainingRun::checkpoint_dir() const {
  const std::string unit = in_.store.unit_checkpoints(in_.unit_id);
  return in_.stages > 1 ? unit + "/stage-" + std::to_string(in_.stage) : unit;
}

Windows TrainingRun::corpus_windows(const std::string& corpus, const Split& split, std::int64_t context) {
  auto it = in_.corpora.find(corpus);
  if (it == in_.corpora.end()) throw InputError(in_.unit_id + ": corpus '" + corpus + "' is not in the spec");
  auto cached = streams_.find(corpus);
  if (cached == streams_.end()) {
    const CorpusFormat format = parse_corpus_format(it->second.format);
    std::vector<TokenId> stream =
        read_model_token_stream(it->second.path, format, in_.model_path, loaded_.model->config().eos_token_id);
    cached = streams_.emplace(corpus, std::move(stream)).first;
  }
  const std::vector<TokenId>& stream = cached->second;
  Windows w = make_windows(stream, split, context, it->second.path);
  check_windows(*loaded_.model, w);
  return w;
}

std::vector<NamedParameter> TrainingRun::select(const std::vector<std::string>& groups,
                                                const std::set<std::int64_t>& linear_layers) {
  std::vector<NamedParameter> out;
  const ParameterRoles& roles =
      ArchitectureRegistry::instance().get(loaded_.config().architecture, loaded_.dir + "/config.json").roles;
  // Named as the checkpoint names them: a split model's stage (its parameters under "stage.").
  auto* staged = dynamic_cast<StagedModel*>(loaded_.model.get());
  torch::nn::Module& named = staged != nullptr ? staged->stage_model() : *loaded_.model;
  for (auto& item : named.named_parameters()) {
    const std::string group = parameter_group(roles, item.key());
    bool take = false;
    for (const auto& g : groups) take = take || g == group;
    if (group == "mlp" && linear_layers.count(parameter_layer(item.key()))) take = false;
    item.value().set_requires_grad(take);
    if (take) out.push_back({item.key(), item.value()});
  }
  for (const auto& p : out) {
    bool known = false;
    for (const auto& s : saved_) known = known || s.name == p.name;
    if (!known) saved_.push_back(p);
  }
  return out;
}

void TrainingRun::use_trainer(const std::string& id, std::vector<NamedParameter> params,
                              const TrainerOptions& options) {
  trainer_id_ = id;
  TrainerOptions o = options;
  o.bf16_autocast = in_.dtype == "bfloat16";
  trainer_ = std::make_unique<Trainer>(*loaded_.model, std::move(params), train_, o,
                                       TrainerRanks{in_.group, in_.replica, in_.stage_peers});
}

std::shared_ptr<SoftGate> TrainingRun::add_gate(std::int64_t layer, std::int64_t hidden, double bias,
                                                std::uint64_t seed) {
  auto gate = std::make_shared<SoftGate>(loaded_.model->config().d_model, hidden, bias, seed);
  gate->to(loaded_.model->parameters().front().device());
  gates_[layer] = gate;
  return gate;
}

double TrainingRun::perplexity(const Windows& w) {
  const bool was_training = loaded_.model->is_training();
  loaded_.model->eval();
  // Per-window sums in window order, each window non-zero on one rank: the all-reduce adds
  // zeros, so the total does not depend on the group (docs/numerics.md).
  std::vector<double> nll(static_cast<std::size_t>(w.count), 0.0);
  {
    c10::InferenceMode guard;
    const Windows mine = my_shard(in_, w);  // a replica's: every stage of it runs the same windows
    const std::int64_t first = my_shard_begin(in_, w);
    const at::Device device = loaded_.model->parameters().front().device();
    for (std::int64_t b = 0; b < mine.count; b += in_.batch) {
      const std::int64_t n = std::min(in_.batch, mine.count - b);
      const at::Tensor ids = window_ids(mine, b, n, device);
      score_hidden(*loaded_.model, loaded_.model->hidden_states(ids), ids, nll.data() + first + b, nullptr);
    }
  }
  if (in_.group != nullptr) in_.group->allreduce_sum(nll);
  if (was_training) loaded_.model->train();
  double sum = 0;
  for (double v : nll) sum += v;
  return std::exp(sum / static_cast<double>(w.count * (w.context - 1)));
}

void TrainingRun::sum_over_group(std::vector<double>& v) {
  if (in_.group != nullptr) in_.group->allreduce_sum(v);
}

double TrainingRun::mean_loss_since(std::int64_t after) const {
  if (!rows_.contains("training_loss")) return std::nan("");
  double sum = 0, n = 0;
  for (const auto& r : rows_["training_loss"])
    if (r[3].get<std::int64_t>() > after) sum += r[4].get<double>(), n += 1;
  return n > 0 ? sum / n : std::nan("");
}

TrainerOptions trainer_options(const TrainingUnitCommon& p, std::int64_t total_steps) {
  TrainerOptions o;
  o.adam.lr = p.lr;
  o.adam.weight_decay = p.weight_decay;
  o.clip = p.clip;
  o.batch = p.batch;
  o.seed = static_cast<std::uint64_t>(p.seed);
  o.warmup = p.warmup;
  o.schedule = p.schedule == "cosine" ? LrSchedule::kCosine : LrSchedule::kConstant;
  o.total_steps = total_steps;
  return o;
}

at::Tensor TrainingRun::keep(const std::string& name, const std::function<at::Tensor()>& make) {
  auto it = restored_.find(name);
  const at::Tensor t = it != restored_.end() ? it->second : make();
  kept_[name] = t;
  return t;
}

void TrainingRun::add_row(const std::string& table, const Row& row) {
  // JSON (the checkpoint's form of the rows so far) has no NaN: a NaN is saved as null.
  nlohmann::json j = nlohmann::json::array();
  for (const auto& v : row) j.push_back(value_json(v));
  rows_[table].push_back(std::move(j));
}

void TrainingRun::save(std::int64_t step, std::int64_t segments_done, std::int64_t segments_entered) {
  if (stage_writer()) {  // with stages, each stage's parameters from the first replica's rank
    NamedTensors tensors;
    for (const auto& p : saved_) tensors.emplace_back("model." + p.name, p.tensor);
    for (const auto& [layer, gate] : gates_)
      for (const auto& item : gate->named_parameters())
        tensors.emplace_back("gate." + std::to_string(layer) + "." + item.key(), item.value());
    for (const auto& [name, t] : kept_) tensors.emplace_back("kept." + name, t);
    if (trainer_)
      for (const auto& [name, t] : trainer_->optimizer().state_tensors()) tensors.emplace_back("adam." + name, t);
    const nlohmann::json state = {
        {"segments_done", segments_done},
        {"segments_entered", segments_entered},
        {"trainer", trainer_id_},
        {"adam_steps", trainer_ ? trainer_->optimizer().step_counts() : std::vector<std::int64_t>{}},
        {"rows", rows_},
        {"memo", memo_}};
    save_training_checkpoint(checkpoint_dir(), step, tensors, state);
  }
  if (in_.group != nullptr) in_.group->barrier();
}

std::pair<std::int64_t, std::int64_t> TrainingRun::resume(const TrainingCheckpoint& ckpt,
                                                          const std::vector<Segment>& segments,
                                                          const std::vector<std::int64_t>& start,
                                                          std::vector<bool>* entered) {
  const std::int64_t step = ckpt.step;
  const std::int64_t segments_done = ckpt.state.value("segments_done", std::int64_t{0});
  const std::int64_t segments_entered = ckpt.state.value("segments_entered", std::int64_t{-1});
  std::map<std::string, const at::Tensor*> by_name;
  for (const auto& [name, t] : ckpt.tensors) {
    by_name[name] = &t;
    if (name.rfind("kept.", 0) == 0) restored_[name.substr(5)] = t;
  }
  // Re-enter every segment that had begun, in order: hooks, gates and trainers as they were.
  for (std::size_t k = 0; k < segments.size(); ++k) {
    const auto index = static_cast<std::int64_t>(k);
    const bool begun = segments_entered >= 0 ? index < segments_entered : index < segments_done || start[k] < step;
    if (!begun) break;
    segments[k].enter();
    (*entered)[k] = true;
  }
  for (auto& p : saved_) {
    auto it = by_name.find("model." + p.name);
    if (it == by_name.end()) throw ModelError(ckpt.path + ": no tensor 'model." + p.name + "'");
    copy_into(p.tensor, *it->second, ckpt.path + ": model." + p.name);
  }
  for (auto& [layer, gate] : gates_)
    for (auto& item : gate->named_parameters()) {
      const std::string name = "gate." + std::to_string(layer) + "." + item.key();
      auto it = by_name.find(name);
      if (it == by_name.end()) throw ModelError(ckpt.path + ": no tensor '" + name + "'");
      copy_into(item.value(), *it->second, ckpt.path + ": " + name);
    }
  if (trainer_ && ckpt.state.value("trainer", std::string()) == trainer_id_) {
    std::vector<std::pair<std::string, at::Tensor>> adam;
    for (const auto& [name, t] : ckpt.tensors)
      if (name.rfind("adam.", 0) == 0) adam.emplace_back(name.substr(5), t);
    trainer_->optimizer().load_state(adam, ckpt.state["adam_steps"].get<std::vector<std::int64_t>>());
  }
  rows_ = ckpt.state["rows"];
  memo_ = ckpt.state.value("memo", nlohmann::json::object());
  if (leader()) {
    JournalEvent e;
    e.event = "resumed";
    e.unit = in_.unit_id;
    e.tokens = step;
    e.error = "from checkpoint " + ckpt.path + " at step " + std::to_string(step);
    append_journal(in_.store.journal(), e);
  }
  return {step, segments_done};
}

void TrainingRun::run_segment(const std::vector<Segment>& segments, std::size_t k,
                              const std::vector<std::int64_t>& start,
                              const std::function<void(std::int64_t, const std::string&)>& evaluate,
                              const std::string& experiment, const std::string& variant, std::int64_t checkpoint_every,
                              std::int64_t* step_io) {
  const Segment& seg = segments[k];
  const auto index = static_cast<std::int64_t>(k);
  std::int64_t& step = *step_io;
  while (step < start[k + 1]) {
    if (stop_now()) {
      save(step, index, index + 1);
      throw InterruptedError(in_.unit_id + ": stopped on request at step " + std::to_string(step) + " of " +
                             std::to_string(start.back()) + "; checkpoint saved, resumes there");
    }
    current_step_ = step;
    const StepStats s = trainer_->step(step, extra_);
    ++step;
    add_row("training_loss", training_loss_table().row({.model = in_.model_name,
                                                        .experiment = experiment,
                                                        .variant = variant,
                                                        .step = step,
                                                        .loss = s.loss,
                                                        .extra = s.extra,
                                                        .grad_norm = s.grad_norm,
                                                        .lr = s.lr,
                                                        .phase = seg.label}));
    if (step == start[k + 1]) break;  // evaluated and saved by the caller, with the segment done
    if (seg.eval_every > 0 && (step - start[k]) % seg.eval_every == 0) evaluate(step, seg.label);
    if (checkpoint_every > 0 && step % checkpoint_every == 0) save(step, index, index + 1);
  }
}

std::optional<TrainingCheckpoint> TrainingRun::common_checkpoint() const {
  if (in_.stages <= 1) return load_latest_training_checkpoint(checkpoint_dir());
  // Each rank's newest step in its slot (−1: none), summed: every rank sees every stage's.
  std::vector<double> steps(static_cast<std::size_t>(in_.group->size()), 0.0);
  const std::optional<std::int64_t> mine = latest_training_checkpoint_step(checkpoint_dir());
  steps[static_cast<std::size_t>(in_.group->rank())] = mine ? static_cast<double>(*mine) : -1.0;
  in_.group->allreduce_sum(steps);
  const double common = *std::min_element(steps.begin(), steps.end());
  if (common < 0) return std::nullopt;
  std::optional<TrainingCheckpoint> ckpt =
      load_training_checkpoint(checkpoint_dir(), static_cast<std::int64_t>(common));
  if (!ckpt || ckpt->step != static_cast<std::int64_t>(common))
    throw ModelError(checkpoint_dir() + ": no checkpoint of step " + std::to_string(static_cast<std::int64_t>(common)) +
                     ", the newest that every stage saved");
  return ckpt;
}

std::vector<Table> TrainingRun::result_tables() const {
  std::vector<Table> out;
  for (auto it = rows_.begin(); it != rows_.end(); ++it) {
    Table t = empty_table(it.key());
    for (const auto& r : it.value()) {
      Row row;
      for (std::size_t c = 0; c < t.columns.size(); ++c) {
        // JSON has no NaN: a NaN (e.g. no training loss yet) was saved as null.
        const ColumnType type = t.columns[c].type;
        Value value = missing_value(type);
        if (c < r.size()) {
          const nlohmann::json& v = r[c];
          if (type == ColumnType::kInt && v.is_number()) value = v.get<std::int64_t>();
          if (type == ColumnType::kFloat && v.is_number()) value = v.get<double>();
          if (type == ColumnType::kString && v.is_string()) value = v.get<std::string>();
        }
        row.push_back(std::move(value));
      }
      t.rows.push_back(std::move(row));
    }
    out.push_back(std::move(t));
  }
  return out;
}

UnitResult TrainingRun::run(const std::vector<Segment>& segments,
                            const std::function<void(std::int64_t, const std::string&)>& evaluate,
                            const std::string& experiment, const std::string& variant, std::int64_t checkpoint_every) {
  HookReset reset(*loaded_.model);
  std::vector<std::int64_t> start(segments.size() + 1, 0);
  for (std::size_t k = 0; k < segments.size(); ++k) start[k + 1] = start[k] + segments[k].steps;
  std::int64_t step = 0, segments_done = 0;
  std::vector<bool> entered(segments.size(), false);
  if (const std::optional<TrainingCheckpoint> ckpt = common_checkpoint())
    std::tie(step, segments_done) = resume(*ckpt, segments, start, &entered);
  else
    evaluate(0, "start");
  for (std::size_t k = static_cast<std::size_t>(segments_done); k < segments.size(); ++k) {
    const Segment& seg = segments[k];
    if (!entered[k]) {
      segments[k].enter(), entered[k] = true;
      if (!seg.entry_eval.empty()) evaluate(step, seg.entry_eval);
    }
    run_segment(segments, k, start, evaluate, experiment, variant, checkpoint_every, &step);
    evaluate(step, seg.label);
    segments_done = static_cast<std::int64_t>(k + 1);
    if (checkpoint_every > 0 && k + 1 < segments.size()) save(step, segments_done, segments_done);
  }
  UnitResult out = unit_result(in_);
  for (Table& t : result_tables()) out.tables.push_back(std::move(t));
  return out;
}

}  // namespace linsweep
