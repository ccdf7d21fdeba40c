// Pretraining from scratch: the demo's six models are made here.
#include "engine/pretrain/pretrain.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <unordered_map>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "engine/eval/evaluator.hpp"
#include "engine/model/architecture_registry.hpp"
#include "engine/model/export_hf.hpp"
#include "engine/model/language_model.hpp"
#include "engine/model/load_model.hpp"
#include "engine/train/trainer.hpp"
#include "engine/train/training_checkpoint.hpp"

namespace linsweep {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The blocks' output projections, which add into the residual stream.
bool is_residual_projection(const ParameterRoles& roles, const std::string& name) {
  for (const auto& suffix : roles.residual_out)
    if (ends_with(name, suffix)) return true;
  return false;
}

bool is_position_embedding(const ParameterRoles& roles, const std::string& name) {
  for (const auto& p : roles.position)
    if (name == p) return true;
  return false;
}

std::vector<NamedParameter> named_parameters(LanguageModel& model) {
  std::vector<NamedParameter> out;
  for (auto& item : model.named_parameters()) out.push_back({item.key(), item.value()});
  return out;
}

constexpr std::size_t kMaxRecipeBytes = 1u << 20;

}  // namespace

nlohmann::json PretrainOptions::to_json() const {
  return {{"steps", steps},   {"batch", batch},
          {"lr", lr},         {"min_lr_ratio", min_lr_ratio},
          {"warmup", warmup}, {"weight_decay", weight_decay},
          {"clip", clip},     {"seed", seed}};
}

void initialise_weights(LanguageModel& model, std::uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  const double residual_std =
      0.02 / std::sqrt(2.0 * static_cast<double>(std::max<std::int64_t>(model.num_layers(), 1)));
  const ParameterRoles& roles = ArchitectureRegistry::instance().get(model.config().architecture, "pretrain").roles;
  // Gemma's norms scale by 1 + w: their identity is w = 0.
  const double norm_gain = model.config().norm == NormKind::kRmsNormPlusOne ? 0.0 : 1.0;
  c10::NoGradGuard no_grad;
  // named_parameters() is in registration order, so the draws are a function of the seed.
  for (auto& item : model.named_parameters()) {
    at::Tensor p = item.value();
    const std::string& name = item.key();
    if (p.dim() >= 2) {
      const double std = is_position_embedding(roles, name)    ? 0.01
                         : is_residual_projection(roles, name) ? residual_std
                                                               : 0.02;
      p.normal_(0.0, std, gen);
    } else if (ends_with(name, "bias")) {
      p.zero_();
    } else {
      p.fill_(norm_gain);  // norm gains: the only one-dimensional weights
    }
  }
}

PretrainOutcome pretrain_model(const ModelConfig& config, const Windows& train, const PretrainOptions& options,
                               const std::string& tokenizer_dir, const std::string& checkpoint_dir,
                               const std::string& out_dir, const nlohmann::json& recipe,
                               const std::function<void(const PretrainStatus&)>& progress,
                               const std::function<bool()>& stop) {
  if (options.steps < 1 || options.batch < 1 || options.checkpoint_every < 1)
    throw ModelError(out_dir + ": pretraining needs steps, batch and checkpoint_every ≥ 1");
  if (train.count < 1) throw InputError(out_dir + ": no training windows");
  std::shared_ptr<LanguageModel> model = build_model(config);
  initialise_weights(*model, options.seed);
  model->train();
  std::vector<NamedParameter> params = named_parameters(*model);

  TrainerOptions topt;
  topt.adam.lr = options.lr;
  topt.adam.weight_decay = options.weight_decay;
  topt.clip = options.clip;
  topt.batch = options.batch;
  topt.seed = options.seed;
  topt.schedule = LrSchedule::kCosine;
  topt.warmup = options.warmup;
  topt.total_steps = options.steps;
  Trainer trainer(*model, params, train, topt);

  PretrainOutcome outcome;
  std::int64_t step = 0;
  if (auto ckpt = load_latest_training_checkpoint(checkpoint_dir)) {
    if (ckpt->state.value("recipe", nlohmann::json()) != recipe)
      throw ModelError(ckpt->path + ": a checkpoint of another recipe; delete " + checkpoint_dir + " to start over");
    std::unordered_map<std::string, const at::Tensor*> by_name;
    for (const auto& [name, t] : ckpt->tensors) by_name[name] = &t;
    for (auto& p : params) {
      auto it = by_name.find("model." + p.name);
      if (it == by_name.end()) throw ModelError(ckpt->path + ": no tensor 'model." + p.name + "'");
      copy_into(p.tensor, *it->second, ckpt->path + ": model." + p.name);
    }
    std::vector<std::pair<std::string, at::Tensor>> adam;
    for (const auto& [name, t] : ckpt->tensors)
      if (name.rfind("adam.", 0) == 0) adam.emplace_back(name.substr(5), t);
    trainer.optimizer().load_state(adam, ckpt->state.at("adam_steps").get<std::vector<std::int64_t>>());
    step = ckpt->step;
    outcome.resumed_at = step;
  }
  for (const auto& p : params) outcome.parameters += p.tensor.numel();

  auto save = [&](std::int64_t at_step) {
    NamedTensors tensors;
    for (const auto& p : params) tensors.emplace_back("model." + p.name, p.tensor);
    for (const auto& [name, t] : trainer.optimizer().state_tensors()) tensors.emplace_back("adam." + name, t);
    save_training_checkpoint(checkpoint_dir, at_step, tensors,
                             {{"recipe", recipe}, {"adam_steps", trainer.optimizer().step_counts()}});
  };

  std::vector<double> losses;
  while (step < options.steps) {
    const StepStats s = trainer.step(step);
    ++step;
    losses.push_back(s.loss);
    if (progress) progress({step, options.steps, s.loss, s.lr});
    const bool stopping = stop && stop();
    if (step < options.steps && (stopping || step % options.checkpoint_every == 0)) save(step);
    if (stopping && step < options.steps) {
      outcome.steps_done = step;
      return outcome;
    }
  }
  outcome.steps_done = step;
  // The last tenth (at least one) of the steps this call ran; none when a checkpoint was
  // already at options.steps (saved for a longer recipe under the same name).
  const std::size_t tail = std::min(losses.size(), std::max<std::size_t>(1, losses.size() / 10));
  double sum = 0;
  for (std::size_t i = losses.size() - tail; i < losses.size(); ++i) sum += losses[i];
  outcome.last_loss = tail > 0 ? sum / static_cast<double>(tail) : std::nan("");

  // The exporter copies config.json and the tokenizer from a source directory: stage one.
  const std::string source = checkpoint_dir + "/source";
  write_model_config(config, source);
  for (const char* f : {"vocab.json", "merges.txt"}) {
    std::error_code ec;
    std::filesystem::copy_file(tokenizer_dir + "/" + f, source + "/" + f,
                               std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) throw ModelError(tokenizer_dir + "/" + f + ": cannot copy: " + ec.message());
  }
  model->eval();
  export_hf_directory(*model, {}, source, out_dir, {{{"linsweep_recipe", recipe.dump()}}});
  atomic_write_text(
      out_dir + "/pretrain.json",
      nlohmann::json({{"recipe", recipe}, {"steps", step}, {"last_loss", outcome.last_loss}}).dump(2) + "\n");
  remove_training_checkpoints(checkpoint_dir);
  outcome.completed = true;
  return outcome;
}

bool is_pretrained(const std::string& out_dir, const nlohmann::json& recipe) {
  const std::string stamp = out_dir + "/pretrain.json";
  if (!is_regular_file(stamp) || !is_regular_file(out_dir + "/model.safetensors")) return false;
  try {
    const nlohmann::json j = read_json_file(stamp, kMaxRecipeBytes);
    return j.is_object() && j.value("recipe", nlohmann::json()) == recipe;
  } catch (const InputError&) {
    return false;  // damaged: train again
  }
}

double model_ppl(const std::string& dir, const Windows& windows, std::int64_t batch) {
  LoadedModel loaded = load_model(dir, ModelOptions{"cpu", "float32"});
  EvalOptions options;
  options.batch = batch;
  return evaluate(*loaded.model, windows, options).ppl();
}

double unigram_ppl(const Windows& windows) {
  std::map<TokenId, std::int64_t> counts;
  std::int64_t n = 0;
  for (std::int64_t w = 0; w < windows.count; ++w)
    for (std::int64_t t = 1; t < windows.context; ++t) {
      ++counts[windows.ids[static_cast<std::size_t>(w * windows.context + t)]];
      ++n;
    }
  if (n == 0) throw InputError("unigram perplexity: no scored tokens");
  double entropy = 0;
  for (const auto& [id, c] : counts) {
    const double p = static_cast<double>(c) / static_cast<double>(n);
    entropy -= p * std::log(p);
  }
  return std::exp(entropy);
}

}  // namespace linsweep
