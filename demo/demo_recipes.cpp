// The demo's model sizes and training budgets, chosen so that all eleven train in a few minutes on two cores.
#include "demo/demo_recipes.hpp"

#include <cstddef>

#include "experiments/numerics/flops.hpp"

namespace linsweep {
namespace {

struct Size {
  const char* tag;
  std::int64_t d, layers, steps;
  std::int64_t gated_ff;  // d_ff of a gated MLP: about 8d/3, so that its 3·d·d_ff match 2·d·4d
};

// Head dimension 16 throughout (3, 4 and 6 heads); the same number of steps for every size.
constexpr Size kSizes[] = {{"s", 48, 2, 300, 128}, {"m", 64, 3, 300, 176}, {"l", 96, 4, 300, 256}};

struct Family {
  const char* architecture;
  const char* prefix;  // of the model names: <prefix>-<size tag>
  std::size_t sizes;   // the first `sizes` of kSizes
};

// Mixtral has two sizes: at l (d 96, 4 layers) 300 steps left it at 0.42–0.57 of the unigram
// PPL, above the demo's bar of 0.5, in 4 minutes of training, the longest of any model.
constexpr Family kFamilies[] = {
    {"gpt2", "gpt2", 3}, {"gpt_neox", "neox", 3}, {"llama", "llama", 3}, {"mixtral", "mixtral", 2}};

// The mixture of experts: kExperts SwiGLU experts of half the gated MLP's width, kTopK of them
// per token, so that a token's MLP FLOPs match Llama's at the same size while the layer holds
// twice its MLP parameters.
constexpr std::int64_t kExperts = 4, kTopK = 2;

ModelConfig family_config(const Family& f, const Size& s, std::int64_t vocab, std::int64_t eos) {
  ModelConfig c = model_config(f.architecture, {.vocab_size = vocab,
                                                .d_model = s.d,
                                                .n_layers = s.layers,
                                                .n_heads = s.d / 16,
                                                .d_ff = 4 * s.d,
                                                .max_positions = 256});
  if (c.gated_mlp) c.d_ff = s.gated_ff;  // the architecture's own MLP form decides
  c.eos_token_id = eos;
  // Untied output layers throughout (GPT2LMHeadModel with tie_word_embeddings false): with tied
  // embeddings these small GPT-2 models learned far more slowly than the NeoX ones in the same
  // budget. NeoX: parallel residual and rotary on a quarter of each head (Pythia's). Llama: its
  // own defaults (RMSNorm, SwiGLU, rotary on the whole head, sequential residual); Mixtral: Llama's
  // layer with a router and experts for its MLP (Mistral's sliding window is longer than the context).
  c.tied_head = false;
  if (c.architecture == "gpt_neox") {
    c.rotary_pct = 0.25;
    c.parallel_residual = true;
  }
  if (c.moe.enabled()) {  // Mixtral's experts are intermediate_size wide: d_ff is an expert's width
    c.d_ff = c.moe.expert_d_ff = s.gated_ff / 2;
    c.moe.experts = kExperts;
    c.moe.top_k = kTopK;
  }
  return c;
}

}  // namespace

nlohmann::json DemoModelRecipe::fingerprint(const std::string& data_fingerprint) const {
  // The whole config.json: a model changed in any field is trained again.
  return {{"name", name},
          {"config", model_config_json(config)},
          {"context", kDemoContext},
          {"training", training.to_json()},
          {"data", data_fingerprint},
          {"version", 2}};
}

double DemoModelRecipe::cost_per_token() const {
  // A training step: the forward's products and a backward pass of twice their cost.
  return 3.0 * model_flops(config);
}

std::vector<DemoModelRecipe> demo_model_recipes(std::int64_t vocab_size, std::int64_t eos) {
  std::vector<DemoModelRecipe> out;
  std::uint64_t seed = 1;
  for (const Family& f : kFamilies) {
    for (std::size_t k = 0; k < f.sizes; ++k) {
      const Size& s = kSizes[k];
      DemoModelRecipe r;
      r.name = std::string(f.prefix) + "-" + s.tag;
      r.config = family_config(f, s, vocab_size, eos);
      r.training.steps = s.steps;
      r.training.batch = 16;
      r.training.lr = 4e-3;
      r.training.warmup = 20;
      r.training.weight_decay = 0.1;
      r.training.seed = seed++;
      r.training.checkpoint_every = 50;
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace linsweep
