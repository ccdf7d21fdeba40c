// Pretraining from scratch: config.json round trips, seeded initialisation, an interrupted
// run that resumes to the same weights, the cache stamp, and the unigram perplexity.
#include <ATen/ATen.h>

#include <cmath>
#include <filesystem>

#include "common/errors.hpp"
#include "engine/corpus/corpus.hpp"
#include "engine/model/load_model.hpp"
#include "engine/model/model_config.hpp"
#include "engine/pretrain/pretrain.hpp"
#include "engine/safetensors.hpp"
#include "support/catch.hpp"
#include "support/test_support.hpp"

using namespace linsweep;

namespace {

// "gpt2", "gpt2-untied" (GPT2LMHeadModel with tie_word_embeddings false) or "gpt_neox".
ModelConfig small_config(const std::string& arch) {
  // vocab_size 1088: the fixture streams' ids fit.
  ModelConfig c =
      model_config(arch == "gpt2-untied" ? "gpt2" : arch,
                   {.vocab_size = 1088, .d_model = 32, .n_layers = 2, .n_heads = 4, .d_ff = 128, .max_positions = 64});
  c.eos_token_id = 1023;
  if (arch == "gpt_neox") {
    c.rotary_pct = 0.25;
    c.parallel_residual = false;
    c.tied_head = false;
    c.activation = Activation::kGeluExact;
  } else {
    c.tied_head = arch == "gpt2";
  }
  return c;
}

Windows fixture_train(std::int64_t context) {
  const std::vector<TokenId> stream =
      read_token_stream(test::tokens_file("tiny-gpt2"), CorpusFormat::kNpy, nullptr, {});
  return make_windows(stream, {0, 2048}, context, "fixture");
}

std::vector<std::uint8_t> file_bytes(const std::string& path) {
  const std::string s = test::read_text(path);
  return {s.begin(), s.end()};
}

}  // namespace

TEST_CASE("write_model_config round-trips through read_model_config", "[pretrain]") {
  test::ScratchDir dir;
  for (const std::string arch : {"gpt2", "gpt_neox"}) {
    const ModelConfig c = small_config(arch);
    write_model_config(c, dir.path() + "/" + arch);
    const ModelConfig r = read_model_config(dir.path() + "/" + arch);
    CHECK(r == c);  // every field, so that one the writer forgets fails here
  }
  ModelConfig untied = small_config("gpt2");
  untied.tied_head = false;
  write_model_config(untied, dir.path() + "/untied");
  CHECK_FALSE(read_model_config(dir.path() + "/untied").tied_head);
  ModelConfig unknown = small_config("gpt2");
  unknown.architecture = "mamba";
  CHECK_THROWS_AS(write_model_config(unknown, dir.path() + "/bad"), ModelError);
}

TEST_CASE("initialise_weights is a function of the seed", "[pretrain]") {
  const ModelConfig c = small_config("gpt2");
  auto a = build_model(c), b = build_model(c), d = build_model(c);
  initialise_weights(*a, 7);
  initialise_weights(*b, 7);
  initialise_weights(*d, 8);
  const auto pa = a->named_parameters(), pb = b->named_parameters(), pd = d->named_parameters();
  bool any_different = false;
  for (std::size_t i = 0; i < pa.size(); ++i) {
    CHECK(at::equal(pa[i].value(), pb[i].value()));
    if (pa[i].value().dim() >= 2) any_different = any_different || !at::equal(pa[i].value(), pd[i].value());
    if (pa[i].key().find("ln") != std::string::npos && pa[i].key().find("weight") != std::string::npos)
      CHECK(pa[i].value().eq(1).all().item<bool>());
  }
  CHECK(any_different);
  // GPT-2's residual projections are scaled by 1/√(2L).
  for (const auto& p : pa)
    if (p.key() == "h.0.mlp.c_proj.weight") CHECK(p.value().std().item<double>() < 0.013);
}

TEST_CASE("pretrain_model: an interrupted run resumes to the same weights and writes an HF directory", "[pretrain]") {
  test::ScratchDir dir;
  const Windows train = fixture_train(32);
  const std::string tok = test::model_dir("tiny-gpt2");
  for (const std::string arch : {"gpt2", "gpt2-untied", "gpt_neox"}) {
    const ModelConfig c = small_config(arch);
    PretrainOptions o;
    o.steps = 30;
    o.batch = 8;
    o.lr = 1e-2;
    o.warmup = 2;
    o.checkpoint_every = 5;
    o.seed = 3;
    const nlohmann::json recipe = {{"arch", arch}, {"v", 1}};
    const std::string base = dir.path() + "/" + arch;

    std::vector<double> losses;
    const PretrainOutcome full = pretrain_model(c, train, o, tok, base + "/ck-a", base + "/a", recipe,
                                                [&](const PretrainStatus& s) { losses.push_back(s.loss); }, {});
    REQUIRE(full.completed);
    CHECK(full.resumed_at == 0);
    CHECK(full.steps_done == 30);
    REQUIRE(losses.size() == 30);
    CHECK(losses[27] + losses[28] + losses[29] < losses[0] + losses[1] + losses[2] - 0.3);
    CHECK(is_pretrained(base + "/a", recipe));
    CHECK_FALSE(is_pretrained(base + "/a", nlohmann::json{{"arch", arch}, {"v", 2}}));
    CHECK_FALSE(std::filesystem::exists(base + "/ck-a"));  // checkpoints go once the model is written
    const ModelConfig back = read_model_config(base + "/a");
    CHECK(back.d_model == c.d_model);
    CHECK(std::filesystem::exists(base + "/a/vocab.json"));

    // Stop after step 7: a checkpoint at step 7 (the stop) and one at 5 remain.
    int calls = 0;
    const PretrainOutcome first =
        pretrain_model(c, train, o, tok, base + "/ck-b", base + "/b", recipe, {}, [&] { return ++calls >= 7; });
    CHECK_FALSE(first.completed);
    CHECK(first.steps_done == 7);
    CHECK(std::filesystem::exists(base + "/ck-b/step-000000000007.safetensors"));
    CHECK_FALSE(is_pretrained(base + "/b", recipe));
    CHECK_THROWS_AS(pretrain_model(c, train, o, tok, base + "/ck-b", base + "/b", nlohmann::json{{"other", 1}}, {}, {}),
                    ModelError);
    const PretrainOutcome second = pretrain_model(c, train, o, tok, base + "/ck-b", base + "/b", recipe, {}, {});
    CHECK(second.completed);
    CHECK(second.resumed_at == 7);
    // Same weights, bit for bit, as the uninterrupted run.
    CHECK(file_bytes(base + "/a/model.safetensors") == file_bytes(base + "/b/model.safetensors"));
    // The exported model loads and scores the stream.
    const double ppl = model_ppl(
        base + "/a", make_windows(read_token_stream(test::tokens_file("tiny-gpt2"), CorpusFormat::kNpy, nullptr, {}),
                                  {2048, 512}, 32, "eval"));
    CHECK(std::isfinite(ppl));
    CHECK(ppl > 1);
  }
}

TEST_CASE("unigram_ppl is the exponentiated entropy of the scored tokens", "[pretrain]") {
  // Window [9, 1, 1, 2]: scored tokens 1, 1, 2 (the first token of a window is never scored).
  Windows w;
  w.context = 4;
  w.count = 2;
  w.ids = {9, 1, 1, 2, 9, 3, 3, 3};
  // Scored: 1,1,2,3,3,3 → p = {1: 2/6, 2: 1/6, 3: 3/6}.
  const double h = -(2.0 / 6 * std::log(2.0 / 6) + 1.0 / 6 * std::log(1.0 / 6) + 3.0 / 6 * std::log(3.0 / 6));
  CHECK(unigram_ppl(w) == Catch::Approx(std::exp(h)).epsilon(1e-14));
  Windows empty;
  empty.context = 4;
  CHECK_THROWS_AS(unigram_ppl(empty), InputError);
}
