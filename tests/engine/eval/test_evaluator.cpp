// Evaluation results do not depend on the batch size or on how windows are sharded.
//
// Tolerance: another batch size changes the GEMMs' row count, and oneDNN and OpenBLAS may then
// block (and sum) differently on some CPUs, so each window's mean NLL agrees within the float32
// forward bound of docs/numerics.md (about 3e-4 for these models), not bitwise. A window that
// lost or gained a position, or scored another window's tokens, moves by orders more.
#include "engine/corpus/npy.hpp"
#include "engine/corpus/windows.hpp"
#include "engine/eval/evaluator.hpp"
#include "engine/model/load_model.hpp"
#include "support/catch.hpp"
#include "support/numerics.hpp"
#include "support/test_support.hpp"

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
    const double mean_nll = ref.nll_sum / static_cast<double>(ref.tokens_scored);
    const double bound = test::forward_bound(lm.config(), mean_nll);  // on one window's mean NLL
    const double per_window = bound * static_cast<double>(w.context - 1);
    const double on_ppl = 2.0 * bound;  // relative, numerics.md
    for (std::int64_t batch : {2, 7, 31, 64}) {
      INFO("batch " << batch);
      EvalOptions o;
      o.batch = batch;
      const EvalResult r = evaluate(*lm.model, w, o);
      REQUIRE(r.window_nll.size() == ref.window_nll.size());
      for (std::size_t i = 0; i < r.window_nll.size(); ++i)
        CHECK(r.window_nll[i] == Catch::Approx(ref.window_nll[i]).margin(per_window));
      CHECK(r.tokens_scored == ref.tokens_scored);
      CHECK(r.ppl() == Catch::Approx(ref.ppl()).epsilon(on_ppl));
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
        CHECK(merged.window_nll[i] == Catch::Approx(ref.window_nll[i]).margin(per_window));
      CHECK(merged.ppl() == Catch::Approx(ref.ppl()).epsilon(on_ppl));
    }
  }
}
