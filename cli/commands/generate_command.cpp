// `linsweep generate`: what a plain or routed model says after a prompt (engine/model/generation.hpp;
// docs/methods.md, "Generation").

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands/commands.hpp"
#include "common/errors.hpp"
#include "common/file_hash_cache.hpp"
#include "engine/model/generation.hpp"
#include "engine/model/load_model.hpp"
#include "engine/runtime.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "experiments/compound/compound_routing.hpp"
#include "orchestrator/plan/fingerprint.hpp"
#include "presentation/table_view.hpp"
#include "storage/store.hpp"

namespace linsweep {
namespace {

struct GenerateArgs {
  std::string model, prompt, prompt_ids, gates, gates_model, gates_corpus, unit, device = "auto", dtype = "float32";
  std::int64_t max_new_tokens = 0;
  std::uint64_t seed = 0;
  int threads = 0;
  bool greedy = false, json = false;
};

// "1,2,3" -> the ids; refused unless every item is a whole number in [0, vocab).
std::vector<std::int64_t> parse_ids(const std::string& text, std::int64_t vocab) {
  std::vector<std::int64_t> ids;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) {
    std::size_t used = 0;
    std::int64_t id = -1;
    try {
      id = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size())
      throw InputError("--prompt-ids: '" + item + "' is not a token id (give ids as 1,2,3)");
    if (id < 0 || id >= vocab)
      throw InputError("--prompt-ids: id " + item + " is outside the model's vocabulary of " + std::to_string(vocab));
    ids.push_back(id);
  }
  if (ids.empty()) throw InputError("--prompt-ids: no ids given (give ids as 1,2,3)");
  return ids;
}

// The current compound configuration of `store`: of the model and corpus named, or the only
// one there is. Throws InputError naming --gates and listing what the store holds otherwise.
CompoundUnits gate_units(const GenerateArgs& a, std::string* model, std::string* corpus) {
  const Store store = Store::open_read(a.gates);
  *model = a.gates_model;
  *corpus = a.gates_corpus;
  if (model->empty() || corpus->empty()) {
    const Table table = store.read_table("compound");
    const TableView t(table);
    std::vector<std::pair<std::string, std::string>> pairs;
    std::string listed;
    for (std::size_t i = 0; i < t.size(); ++i) {
      const std::pair<std::string, std::string> p{t.text(i, "model"), t.text(i, "corpus")};
      if ((!model->empty() && p.first != *model) || (!corpus->empty() && p.second != *corpus)) continue;
      if (std::find(pairs.begin(), pairs.end(), p) != pairs.end()) continue;
      pairs.push_back(p);
      listed += (listed.empty() ? "" : ", ") + p.first + "/" + p.second;
    }
    if (pairs.size() != 1)
      throw InputError("--gates " + a.gates + ": " +
                       (pairs.empty() ? "no compound result" : "compound results for " + listed) +
                       (pairs.empty() ? "" : "; name one with --gates-model and --gates-corpus"));
    *model = pairs[0].first;
    *corpus = pairs[0].second;
  }
  return read_compound_units(store, *model, *corpus, a.unit);
}

// Routes `lm`'s layers by the store's compound configuration; counts each routed layer's
// decisions (positions) and those that went to the surrogate. Refuses a configuration made
// for another model.
void route_by_store(const GenerateArgs& a, LoadedModel& lm, std::int64_t* decisions, std::int64_t* routed,
                    std::string* label) {
  std::string model, corpus;
  const CompoundUnits units = gate_units(a, &model, &corpus);
  auto routing = std::make_shared<CompoundRouting>(compound_routing(units, model, corpus));
  FileHashCache digests;
  if (routing->model_fingerprint != model_fingerprint(a.model, digests))
    throw InputError("--gates " + a.gates + ": its gates for model '" + model +
                     "' were trained on other weights than " + a.model + "'s");
  const at::Tensor first = lm.model->parameters().front();
  for (std::size_t k = 0; k < routing->layers.size(); ++k) {
    AffineMap& map = routing->maps[k];
    map = {map.weight.to(first.device(), first.scalar_type()), map.bias.to(first.device(), first.scalar_type())};
    lm.model->hook(routing->layers[k]).use_routed(map, [routing, k, decisions, routed](const at::Tensor& x) {
      at::Tensor mask = routing->gates[k].route(x);
      *decisions += mask.numel();
      *routed += mask.sum().item<std::int64_t>();
      return mask;
    });
  }
  *label = model + "/" + corpus + " (" + std::to_string(routing->layers.size()) + " routed layers, unit " +
           units.compound.unit_id + ")";
}

int run_generate(const GenerateArgs& a) {
  configure_threads(a.threads);
  if (a.prompt.empty() == a.prompt_ids.empty()) throw InputError("give one of --prompt TEXT and --prompt-ids 1,2,3");
  LoadedModel lm = load_model(a.model, {a.device, a.dtype});
  const ModelConfig& c = lm.config();
  std::unique_ptr<Tokenizer> tok;
  std::vector<std::int64_t> ids;
  if (!a.prompt.empty()) {
    tok = load_tokenizer(a.model);
    for (const TokenId t : tok->document_prefix()) ids.push_back(t);
    for (const TokenId t : tok->encode(a.prompt, false, "--prompt")) ids.push_back(t);
    if (ids.empty()) throw InputError("--prompt: the text has no tokens");
  } else {
    ids = parse_ids(a.prompt_ids, c.vocab_size);
  }
  const auto prompt_len = static_cast<std::int64_t>(ids.size());
  if (prompt_len + a.max_new_tokens > c.max_context())
    throw InputError("--max-new-tokens " + std::to_string(a.max_new_tokens) + ": with a prompt of " +
                     std::to_string(prompt_len) + " tokens it exceeds " + context_limit(c) + " (" + a.model +
                     "/config.json)");
  std::int64_t decisions = 0, routed = 0;
  std::string routing = "none";
  if (!a.gates.empty()) route_by_store(a, lm, &decisions, &routed, &routing);
  GenerationOptions o;
  o.max_new_tokens = a.max_new_tokens;
  o.greedy = a.greedy;
  o.seed = a.seed;
  const std::optional<TokenId> eos = tok ? tok->eos_id() : std::nullopt;
  if (eos || c.eos_token_id) o.stop_id = eos ? std::optional<std::int64_t>(*eos) : c.eos_token_id;
  const Generation g = generate(*lm.model, at::tensor(ids, at::kLong).unsqueeze(0), o);
  const at::Tensor fresh = g.ids[0].narrow(0, prompt_len, g.new_tokens).contiguous();
  std::vector<std::int64_t> out(fresh.data_ptr<std::int64_t>(), fresh.data_ptr<std::int64_t>() + fresh.numel());
  if (!tok) {  // ids in, text out only where the directory has a tokenizer
    try {
      tok = load_tokenizer(a.model);
    } catch (const InputError&) {
    }
  }
  // The text of the new tokens (the stop id left out), where every one is in the tokenizer's
  // vocabulary (a model's may be padded past it).
  std::vector<TokenId> text_ids;
  bool decodable = tok != nullptr;
  for (const std::int64_t t : out) {
    if (o.stop_id && t == *o.stop_id) continue;
    decodable = decodable && t < static_cast<std::int64_t>(tok->id_limit());
    text_ids.push_back(static_cast<TokenId>(t));
  }
  const std::optional<std::string> text = decodable ? std::optional(tok->decode(text_ids)) : std::nullopt;
  // The decode rate when there were decode steps; otherwise the one token over the prefill.
  const double per_s = g.new_tokens > 1 ? static_cast<double>(g.new_tokens - 1) / g.decode_seconds
                                        : static_cast<double>(g.new_tokens) / g.prefill_seconds;
  const double share = decisions > 0 ? static_cast<double>(routed) / static_cast<double>(decisions) : 0.0;
  if (a.json) {
    std::printf("%s\n", nlohmann::json({{"ids", out},
                                        {"text", text ? nlohmann::json(*text) : nlohmann::json(nullptr)},
                                        {"tokens_per_s", per_s},
                                        {"prompt_ids", ids},
                                        {"prefill_seconds", g.prefill_seconds},
                                        {"decode_seconds", g.decode_seconds},
                                        {"routing", routing},
                                        {"routed_share", share},
                                        {"device", lm.device},
                                        {"dtype", a.dtype}})
                            // A byte-level token may end inside a UTF-8 sequence: such bytes become U+FFFD.
                            .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                            .c_str());
    return 0;
  }
  if (text) {
    std::printf("%s\n", text->c_str());
  } else {
    std::string line;
    for (std::size_t i = 0; i < out.size(); ++i) line += (i ? " " : "") + std::to_string(out[i]);
    std::printf("%s\n", line.c_str());
  }
  std::fprintf(stderr, "generate: %lld new tokens, %.1f tokens/s on %s; routing: %s",
               static_cast<long long>(g.new_tokens), per_s, lm.device.c_str(), routing.c_str());
  if (!a.gates.empty()) std::fprintf(stderr, ", %.1f%% of the routed layers' decisions to the surrogate", 100 * share);
  std::fprintf(stderr, "\n");
  return 0;
}

}  // namespace

void add_generate_command(CLI::App& root, CommandAction* action) {
  auto args = std::make_shared<GenerateArgs>();
  CLI::App* cmd = root.add_subcommand(
      "generate",
      "Continue a prompt with a model, plainly or routed by a store's compound gates (KV-cached decoding; "
      "docs/methods.md, \"Generation\").");
  cmd->add_option("--model", args->model, "HF model directory (config.json, safetensors, tokenizer)")->required();
  cmd->add_option("--prompt", args->prompt, "prompt text, encoded with the model's tokenizer (after its BOS, if any)");
  cmd->add_option("--prompt-ids", args->prompt_ids, "prompt token ids, comma-separated (e.g. 1,2,3)");
  cmd->add_option("--max-new-tokens", args->max_new_tokens, "tokens to generate (fewer when the model ends the text)")
      ->required()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  cmd->add_flag("--greedy", args->greedy, "take the most probable token (default: draw from the model's distribution)");
  cmd->add_option("--seed", args->seed, "seed of the draws (without --greedy)")->capture_default_str();
  cmd->add_option("--gates", args->gates,
                  "store whose current compound configuration routes the MLPs (each new token's gate decides per "
                  "layer: the MLP or the surrogate)");
  cmd->add_option("--gates-model", args->gates_model,
                  "with --gates: the model name in the store (default: the only one)");
  cmd->add_option("--gates-corpus", args->gates_corpus, "with --gates: the corpus name (default: the only one)");
  cmd->add_option("--unit", args->unit, "with --gates: a committed compound unit id (default: the current one)");
  cmd->add_option("--device", args->device, "auto | cpu | cuda | cuda:N")->capture_default_str();
  cmd->add_option("--dtype", args->dtype, "compute dtype: float32 | bfloat16 | float16")->capture_default_str();
  cmd->add_option("--threads", args->threads, "CPU threads (default: LINSWEEP_THREADS or cores / local ranks)")
      ->check(CLI::Range(0, 4096));
  cmd->add_flag("--json", args->json, "print {\"ids\", \"text\", \"tokens_per_s\", ...} as one JSON object");
  cmd->footer("Example: linsweep generate --model tests/data/models/tiny-gpt2 --prompt-ids 1,2,3 --max-new-tokens 8");
  cmd->callback([cmd, args, action] {
    if (args->gates.empty())
      refuse_flags(cmd, {"--gates-model", "--gates-corpus", "--unit"}, "has no effect without --gates");
    if (args->greedy) refuse_flags(cmd, {"--seed"}, "has no effect with --greedy");
    *action = [args] { return run_generate(*args); };
  });
}

}  // namespace linsweep
