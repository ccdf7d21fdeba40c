// Evaluation results do not depend on the batch size or on how windows are sharded.
//
// Tolerance: on the oneDNN path results are bitwise equal; through OpenBLAS, float32 GEMMs
// may sum in a different order for different row counts (a small-matrix path for a single
// short window), which moves a window's NLL sum by about 1e-9 relative. Anything that mixes
// windows or loses a position moves it by far more than the 1e-7 allowed here.
#include <catch2/catch.hpp>

#include "support/test_support.hpp"
#include "workers/corpus/npy.hpp"
#include "workers/corpus/windows.hpp"
#include "workers/eval/evaluator.hpp"
#include "workers/model/load_model.hpp"

using namespace linsweep;

TEST_CASE("per-window NLL is the same for every batch size and sharding") {
  for (const char* name : {"tiny-gpt2", "tiny-neox"}) {
    INFO(name);
    LoadedModel lm = load_model(test::model_dir(name), {"cpu", "float32"});
    const auto stream = read_npy_tokens(test::tokens_file(name));
    const Windows w = make_windows(stream, {0, 1000}, 32, name);  // 31 windows, remainder dropped
    REQUIRE(w.count == 31);
    EvalOptions one;
    one.batch = 1;
    const EvalResult ref = evaluate(*lm.model, w, one);
    for (std::int64_t batch : {2, 7, 31, 64}) {
      INFO("batch " << batch);
      EvalOptions o;
      o.batch = batch;
      const EvalResult r = evaluate(*lm.model, w, o);
      REQUIRE(r.window_nll.size() == ref.window_nll.size());
      for (std::size_t i = 0; i < r.window_nll.size(); ++i)
        CHECK(r.window_nll[i] == Approx(ref.window_nll[i]).epsilon(1e-7));
      CHECK(r.ppl() == Approx(ref.ppl()).epsilon(1e-9));
    }
    for (int ranks : {2, 3, 5}) {
      INFO("ranks " << ranks);
      EvalResult merged;
      for (int rank = 0; rank < ranks; ++rank) {
        EvalOptions o;
        o.batch = 4;
        merged.append(evaluate(*lm.model, shard_windows(w, rank, ranks), o));
      }
      CHECK(merged.tokens_scored == ref.tokens_scored);
      for (std::size_t i = 0; i < merged.window_nll.size(); ++i)
        CHECK(merged.window_nll[i] == Approx(ref.window_nll[i]).epsilon(1e-7));
      CHECK(merged.ppl() == Approx(ref.ppl()).epsilon(1e-9));
    }
  }
}
