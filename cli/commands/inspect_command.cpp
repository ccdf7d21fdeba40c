// `linsweep inspect`: architecture, sizes, dtypes and parameter count of a model directory.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.hpp"
#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "common/hf_cache.hpp"
#include "engine/model/architecture_registry.hpp"
#include "engine/model/hf_activation.hpp"
#include "engine/model/hf_weights.hpp"
#include "engine/model/load_model.hpp"
#include "engine/model/rope_config.hpp"
#include "engine/tokenizer/bpe_tokenizer.hpp"
#include "engine/tokenizer/tokenizer.hpp"

namespace linsweep {
namespace {

struct InspectArgs {
  std::string model, revision;
  bool json = false;
};

int run_inspect(InspectArgs a) {
  a.model = resolve_model_dir(a.model, "", a.revision);  // a hub id: its snapshot in the HF cache
  ModelOptions mo;
  mo.device = "cpu";
  LoadedModel lm = load_model(a.model, mo);  // validates every tensor against config.json
  const ModelConfig& c = lm.config();
  HfWeights ckpt(a.model);
  nlohmann::json j = {{"model", a.model},
                      {"architecture", c.architecture},
                      {"layers", c.n_layers},
                      {"d_model", c.d_model},
                      {"heads", c.n_heads},
                      {"head_dim", c.head_dim()},
                      {"d_ff", c.d_ff},
                      {"vocab_size", c.vocab_size},
                      {"max_positions", c.max_positions},
                      {"activation", hf_activation_name(c.activation)},
                      {"tied_head", c.tied_head},
                      {"parameters", lm.parameter_count},
                      {"checkpoint_dtypes", lm.checkpoint_dtypes},
                      {"checkpoint_files", ckpt.files()},
                      {"checkpoint_bytes", ckpt.total_bytes()}};
  const Architecture& arch = ArchitectureRegistry::instance().get(c.architecture, a.model + "/config.json");
  j["kv_heads"] = c.kv_heads();
  j["norm"] = norm_name(c.norm);
  j["gated_mlp"] = c.gated_mlp;
  j["residual"] = c.parallel_residual ? "parallel" : "sequential";
  if (arch.roles.position.empty()) {  // no learned positions: rotary
    j["rotary_dims"] = static_cast<std::int64_t>(static_cast<double>(c.head_dim()) * c.rotary_pct);
    j["rotary_base"] = c.rotary_base;
    j["rope_type"] = rope_type_name(c.rope.type);
  }
  if (c.sliding_window) j["sliding_window"] = *c.sliding_window;
  j.update(moe_facts_json(c.moe, c.n_layers));
  try {
    const std::unique_ptr<Tokenizer> tok = load_tokenizer(a.model);
    j["tokenizer"] = {
        {"file", tok->source()}, {"vocab", tok->vocab_size()}, {"document_prefix", tok->document_prefix()}};
    if (const auto* bpe = dynamic_cast<const BpeTokenizer*>(tok.get())) j["tokenizer"]["merges"] = bpe->merge_count();
    if (tok->eos_id()) j["tokenizer"]["eos_id"] = *tok->eos_id();
  } catch (const InputError& e) {
    j["tokenizer"] = {{"error", e.what()}};
  }
  if (a.json) {
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::string v = it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
    std::printf("%-18s %s\n", it.key().c_str(), v.c_str());
  }
  return 0;
}

}  // namespace

void add_inspect_command(CLI::App& root, CommandAction* action) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* cmd =
      root.add_subcommand("inspect", "Architecture, sizes, dtypes and parameter count of an HF model directory.");
  cmd->add_option("model_dir", args->model, "HF model directory, or a hub id org/name in the HF cache")->required();
  cmd->add_option("--revision", args->revision,
                  "the revision of a hub id or models--org--name folder: a branch, tag or commit (default main)");
  cmd->add_flag("--json", args->json, "print JSON");
  cmd->footer("Example: linsweep inspect tests/data/models/tiny-neox --json");
  cmd->callback([args, action] { *action = [args] { return run_inspect(*args); }; });
}

}  // namespace linsweep
