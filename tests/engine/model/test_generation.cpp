// Generation against the forward pass (docs/numerics.md, "Generation"): for every architecture,
// each new token's logits from the KV-cached decode equal those of a forward over the whole
// sequence so far within the float32 forward bound, at batch 1 and 3, greedy and sampled; and
// a routed decode (each new token's gate deciding per layer) equals the routed forward that
// computes both maps and selects (RoutedCompute::kSelect), with the same decisions.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "engine/model/architecture_registry.hpp"
#include "engine/model/generation.hpp"
#include "engine/model/load_model.hpp"
#include "support/catch.hpp"
#include "support/numerics.hpp"
#include "support/test_support.hpp"

using namespace linsweep;

namespace {

// A model under test: a fixture directory, or a config built here (random weights) where no
// fixture has the computation (Mistral's sliding window on every layer, StableLM).
struct Subject {
  std::string name;
  std::shared_ptr<LanguageModel> model;
};

Subject fixture(const std::string& dir) { return {dir, load_model(test::model_dir(dir), {"cpu", "float32"}).model}; }

Subject built(const std::string& arch, std::int64_t window = 0) {
  at::manual_seed(3);
  ModelConfig c = model_config(
      arch, {.vocab_size = 97, .d_model = 64, .n_layers = 3, .n_heads = 4, .d_ff = 128, .max_positions = 64});
  c.n_kv_heads = 2;
  c.sliding_window = window > 0 ? std::optional<std::int64_t>(window) : std::nullopt;
  c.sliding_layers.clear();
  auto m = build_model(c);
  m->eval();
  return {arch + (window > 0 ? " (window " + std::to_string(window) + ")" : ""), m};
}

// Every architecture the registry knows, each by at least one model.
std::vector<Subject> subjects() {
  std::vector<Subject> out;
  for (const char* dir :
       {"tiny-gpt2", "tiny-neox", "tiny-neox-seq", "hf_transformers5/llama-gqa-f32",
        "hf_transformers5/llama3-tied-bf16", "hf_transformers5/mistral-f32", "hf_transformers5/qwen2-bias-f16",
        "hf_transformers5/gemma-f32", "hf_zoo/qwen3-f32", "hf_zoo/gemma2-bf16", "hf_zoo/gemma3-text-f32",
        "hf_zoo/olmo2-f32", "hf_zoo/phi3-f32", "hf_zoo/mixtral-bf16", "hf_zoo/qwen2-moe-f32", "hf_zoo/olmoe-f32"})
    out.push_back(fixture(dir));
  out.push_back(built("mistral", 5));
  out.push_back(built("stablelm"));
  return out;
}

// docs/numerics.md, "Generation": two float32 evaluations of the same logits agree within
// 2·(2L + 1)·4·√K·u32 relative to the row's largest logit (at least 1).
double logit_bound(const ModelConfig& c, const at::Tensor& row) {
  return test::forward_bound(c, 0.0) * std::max(1.0, row.abs().max().item<double>());
}

// max over the new tokens and sequences of |decode − full| / bound (≤ 1: within it).
double worst_ratio(const ModelConfig& c, const std::vector<at::Tensor>& decoded, const at::Tensor& full,
                   std::int64_t prompt) {
  double worst = 0;
  for (std::size_t i = 0; i < decoded.size(); ++i)
    for (std::int64_t b = 0; b < full.size(0); ++b) {
      const at::Tensor want = full[b][prompt - 1 + static_cast<std::int64_t>(i)].to(at::kDouble);
      const at::Tensor got = decoded[i][b].to(at::kDouble);
      worst = std::max(worst, (got - want).abs().max().item<double>() / logit_bound(c, want));
    }
  return worst;
}

at::Tensor random_prompts(const ModelConfig& c, std::int64_t batch, std::int64_t length, std::uint64_t seed) {
  at::manual_seed(static_cast<std::int64_t>(seed));
  return at::randint(0, c.vocab_size, {batch, length}, at::kLong);
}

}  // namespace

TEST_CASE("generation: every architecture's cached decode gives the full forward's logits", "[generation]") {
  std::set<std::string> covered;
  for (Subject& s : subjects()) {
    LanguageModel& model = *s.model;
    covered.insert(model.config().architecture);
    c10::InferenceMode guard;
    for (const std::int64_t batch : {1, 3}) {
      INFO(s.name << ", batch " << batch);
      const std::int64_t prompt = 6, fresh = 14;  // past gemma2's window of 8 and gemma3's of 12
      GenerationOptions o;
      o.max_new_tokens = fresh;
      o.greedy = batch == 1;
      o.seed = 5;
      o.keep_logits = true;
      const Generation g = generate(model, random_prompts(model.config(), batch, prompt, 11), o);
      REQUIRE(g.new_tokens == fresh);
      REQUIRE((g.ids.size(0) == batch && g.ids.size(1) == prompt + fresh));
      const at::Tensor full = model.forward(g.ids.narrow(1, 0, prompt + fresh - 1));
      CHECK(worst_ratio(model.config(), g.logits, full, prompt) <= 1.0);
      if (o.greedy)  // each greedy token is its row's largest logit
        for (std::int64_t i = 0; i < fresh; ++i)
          CHECK(g.logits[static_cast<std::size_t>(i)][0].argmax().item<std::int64_t>() ==
                g.ids[0][prompt + i].item<std::int64_t>());
    }
  }
  for (const std::string& arch : ArchitectureRegistry::instance().names()) {
    INFO("architecture " << arch << " has no model in this test");
    CHECK(covered.count(arch) == 1);
  }
}

TEST_CASE("generation: seeded sampling repeats, stops at the stop id, and refuses what does not fit", "[generation]") {
  Subject s = fixture("tiny-gpt2");
  LanguageModel& model = *s.model;
  c10::InferenceMode guard;
  const at::Tensor prompts = random_prompts(model.config(), 2, 4, 1);
  GenerationOptions o;
  o.max_new_tokens = 8;
  o.greedy = false;
  o.seed = 42;
  const Generation a = generate(model, prompts, o), b = generate(model, prompts, o);
  CHECK(at::equal(a.ids, b.ids));
  o.seed = 43;
  CHECK_FALSE(at::equal(a.ids, generate(model, prompts, o).ids));
  // Stopping: at the third token of one sequence (or where that id comes first).
  o.seed = 42;
  const at::Tensor one = prompts.narrow(0, 0, 1);
  o.stop_id = generate(model, one, o).ids[0][4 + 2].item<std::int64_t>();
  const Generation stopped = generate(model, one, o);
  CHECK(stopped.new_tokens <= 3);
  CHECK(stopped.ids[0][4 + stopped.new_tokens - 1].item<std::int64_t>() == *o.stop_id);
  const std::int64_t positions = model.config().max_context();
  CHECK_THROWS_AS(generate(model, random_prompts(model.config(), 1, positions, 2), {.max_new_tokens = 1}), ModelError);
  CHECK_THROWS_AS(generate(model, prompts + model.config().vocab_size, {.max_new_tokens = 1}), ModelError);
  KvCache cache = model.make_cache(2, 5);
  model.prefill(prompts, cache);
  CHECK(cache.length() == 4);
  CHECK_THROWS_AS(model.prefill(prompts.narrow(1, 0, 2), cache), ModelError);  // no room for two more
  CHECK(cache.length() == 4);
  CHECK_THROWS_AS(model.decode_step(at::zeros({3}, at::kLong), cache), ModelError);  // another batch
}

namespace {

// One routed layer of the routed-decode test: x·u > t in float64, u a random unit direction.
struct Route {
  at::Tensor u;
  double t = 0;
  at::Tensor mask(const at::Tensor& x) const { return x.to(at::kDouble).matmul(u).gt(t); }
};

// Sets each layer's threshold in the middle of the widest gap between the projections of the
// middle half of the positions, layer by layer on a routed forward (so that the layers below
// are routed as they will be); returns the narrowest half-gap relative to the largest |x|.
double calibrate(LanguageModel& model, const std::vector<std::int64_t>& layers, std::vector<Route>& routes,
                 const std::vector<AffineMap>& maps, const at::Tensor& ids) {
  double margin = 1e300;
  for (std::size_t k = 0; k < layers.size(); ++k)
    model.hook(layers[k]).use_routed(maps[k], [&, k](const at::Tensor& x) {
      const at::Tensor p = std::get<0>(x.to(at::kDouble).matmul(routes[k].u).reshape({-1}).sort());
      const std::int64_t n = p.size(0), lo = n / 4, hi = 3 * n / 4;
      const at::Tensor gaps = p.narrow(0, lo + 1, hi - lo) - p.narrow(0, lo, hi - lo);
      const std::int64_t at = gaps.argmax().item<std::int64_t>();
      routes[k].t = 0.5 * (p[lo + at].item<double>() + p[lo + at + 1].item<double>());
      margin = std::min(margin, 0.5 * gaps[at].item<double>() / x.to(at::kDouble).norm(2, -1).max().item<double>());
      return routes[k].mask(x);
    });
  model.hidden_states(ids);
  return margin;
}

}  // namespace

TEST_CASE("generation: a routed decode decides as the routed forward and gives its logits", "[generation]") {
  for (const char* dir : {"tiny-gpt2", "tiny-neox", "hf_transformers5/llama-gqa-f32", "hf_zoo/olmoe-f32"})
    for (const std::int64_t batch : {1, 3}) {
      INFO(dir << ", batch " << batch);
      Subject s = fixture(dir);
      LanguageModel& model = *s.model;
      const ModelConfig& c = model.config();
      c10::InferenceMode guard;
      const std::int64_t prompt = 5, fresh = 12, d = c.d_model;
      const at::Tensor ids = generate(model, random_prompts(c, batch, prompt, 21), {.max_new_tokens = fresh}).ids;
      const at::Tensor seen = ids.narrow(1, 0, prompt + fresh - 1);  // what the decode reads
      std::vector<std::int64_t> layers;
      for (std::int64_t l = 0; l < c.n_layers; ++l) layers.push_back(l);
      at::manual_seed(9);
      std::vector<Route> routes;
      std::vector<AffineMap> maps;
      for (std::size_t k = 0; k < layers.size(); ++k) {
        const at::Tensor u = at::randn({d}, at::kDouble);
        routes.push_back({u / u.norm(), 0});
        maps.push_back({at::randn({d, d}) * (0.5 / std::sqrt(static_cast<double>(d))), at::randn({d}) * 0.01});
      }
      // The decisions may differ only where a position's projection moves by more than the
      // stream's rounding: each half-gap must exceed that bound times |x|.
      REQUIRE(calibrate(model, layers, routes, maps, seen) > test::forward_bound(c, 0.0));
      std::map<std::string, std::vector<at::Tensor>> masks;  // "full"/"decode" -> per layer [B, T]
      auto route_as = [&](const std::string& pass, RoutedCompute compute) {
        masks[pass].assign(layers.size(), at::Tensor());
        for (std::size_t k = 0; k < layers.size(); ++k) {
          model.hook(layers[k]).use_routed(
              maps[k],
              [&, k, pass](const at::Tensor& x) {
                at::Tensor m = routes[k].mask(x);
                at::Tensor& all = masks[pass][k];
                all = all.defined() ? at::cat({all, m}, 1) : m;
                return m;
              },
              compute);
        }
      };
      route_as("full", RoutedCompute::kSelect);
      const at::Tensor full = model.forward(seen);
      route_as("decode", RoutedCompute::kGather);
      KvCache cache = model.make_cache(batch, prompt + fresh);
      std::vector<at::Tensor> decoded{model.prefill(ids.narrow(1, 0, prompt), cache)};
      for (std::int64_t i = 1; i < fresh; ++i)
        decoded.push_back(model.decode_step(ids.select(1, prompt + i - 1), cache));
      std::int64_t routed = 0;
      for (std::size_t k = 0; k < layers.size(); ++k) {
        CHECK(at::equal(masks["decode"][k], masks["full"][k]));
        routed += masks["full"][k].sum().item<std::int64_t>();
      }
      const auto decisions = static_cast<std::int64_t>(layers.size()) * seen.numel();
      CHECK(routed > decisions / 4);
      CHECK(routed < 3 * decisions / 4);
      CHECK(worst_ratio(c, decoded, full, prompt) <= 1.0);
      model.reset_hooks();
    }
}

TEST_CASE("generation: at one position a routed hook branches, reading one map only", "[generation]") {
  at::manual_seed(1);
  const std::int64_t d = 8;
  const AffineMap map{at::randn({d, d}), at::randn({d})};
  const at::Tensor x = at::randn({1, 1, d});
  for (const bool to_map : {false, true}) {
    MlpHook hook;
    hook.use_routed(map, [to_map](const at::Tensor& t) {
      return at::full({1, 1}, to_map, t.options().dtype(at::kBool));
    });
    int mlp_calls = 0;
    const at::Tensor y = hook.apply(x, [&](const at::Tensor& t) {
      ++mlp_calls;
      return t * 2;
    });
    CHECK(mlp_calls == (to_map ? 0 : 1));
    CHECK(at::equal(y, to_map ? at::addmm(map.bias, x.reshape({1, d}), map.weight).view({1, 1, d}) : x * 2));
  }
}
