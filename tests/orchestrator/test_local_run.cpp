// Single-process runs: fits and all-linear costs against the golden values; resume runs nothing twice.
#include "common/errors.hpp"
#include "orchestrator/plan/plan.hpp"
#include "orchestrator/run/deadline_guard.hpp"
#include "orchestrator/run/local_run.hpp"
#include "orchestrator/run/sweep_setup.hpp"
#include "orchestrator/spec/spec.hpp"
#include "storage/store.hpp"
#include "support/catch.hpp"
#include "support/test_support.hpp"

using namespace linsweep;
using Catch::Matchers::ContainsSubstring;
using linsweep::test::ScratchDir;

namespace {

std::string golden_spec(const ScratchDir& dir, const std::string& model) {
  const auto& g = test::golden()[model];
  const std::string text = "store: " + (dir / "store") + "\ncontext: " + std::to_string(g["context"].get<int>()) +
                           "\nmodels:\n  - {name: " + model + ", path: " + test::model_dir(model) +
                           "}\ncorpora:\n  - {name: stream, path: " + test::tokens_file(model) +
                           "}\nsplits:\n  eval: {start: " + std::to_string(g["eval"]["start"].get<int>()) +
                           ", tokens: " + std::to_string(g["eval"]["tokens"].get<int>()) +
                           "}\n  fit: {start: " + std::to_string(g["fit"]["start"].get<int>()) +
                           ", tokens: " + std::to_string(g["fit"]["tokens"].get<int>()) +
                           "}\nexperiments:\n  fit: {lambda: [0.01, 0.5]}\n  all_linear: {bootstrap: 200}\n";
  test::write_text(dir / "spec.yaml", text);
  return dir / "spec.yaml";
}

}  // namespace

TEST_CASE("run: every layer's fit and all-linear cost; layer 1 matches the golden values") {
  for (const char* model : {"tiny-gpt2", "tiny-neox", "tiny-neox-seq"}) {
    INFO(model);
    ScratchDir dir;
    const auto& g = test::golden()[model];
    const std::string spec = golden_spec(dir, model);
    RunOptions quiet;
    quiet.quiet = true;
    REQUIRE(run_sweep_local(spec, quiet) == 0);
    const Store store = Store::open_read(dir / "store");
    const Table al = read_consolidated_table(store.consolidated_path(), "all_linear");
    const Table fits = store.read_table("fits");
    const std::int64_t layers = std::string(model) == "tiny-neox-seq" ? 2 : 3;
    CHECK(static_cast<std::int64_t>(al.rows.size()) == layers);
    CHECK(static_cast<std::int64_t>(fits.rows.size()) == 2 * layers);
    bool found = false;
    for (const auto& r : al.rows) {
      if (std::get<std::int64_t>(r[1]) != g["layer"].get<int>()) continue;
      found = true;
      CHECK(std::abs(std::get<double>(r[5]) - g["delta_pct"].get<double>()) < 1e-4);
      CHECK(std::get<double>(r[4]) == Catch::Approx(g["ppl_all_linear"].get<double>()).epsilon(1e-5));
      CHECK(std::get<double>(r[3]) == Catch::Approx(g["ppl"].get<double>()).epsilon(1e-5));
      CHECK(std::get<double>(r[6]) <= std::get<double>(r[5]));  // the interval holds the estimate
      CHECK(std::get<double>(r[7]) >= std::get<double>(r[5]));
    }
    CHECK(found);
    for (const auto& r : fits.rows) {
      CHECK(std::get<double>(r[5]) > 0.5);  // R²
      CHECK(std::get<double>(r[5]) < 1.0);
    }
    // A second run finds everything committed and runs nothing.
    const std::size_t committed = store.committed_units().size();
    const std::size_t events = store.journal_events().size();
    REQUIRE(run_sweep_local(spec, quiet) == 0);
    CHECK(store.committed_units().size() == committed);
    CHECK(store.journal_events().size() == events);
  }
}

#include <filesystem>

#include "storage/store_status.hpp"

TEST_CASE("run: a failing unit is retried (bad input is not), recorded, its dependents skipped; exit 1") {
  // `toy` (tests/support/test_experiments.cpp) fails on request: two toy units per model and
  // corpus after the fit, and a toy_after unit that depends on both.
  ScratchDir dir;
  const std::string base = test::read_text(golden_spec(dir, "tiny-gpt2"));
  const std::string spec = dir / "spec.yaml";
  test::write_text(spec, base + "  toy: {units: 2, fail: true, after_fit: true}\nruntime: {retries: 1}\n");
  RunOptions quiet;
  quiet.quiet = true;
  CHECK(run_sweep_local(spec, quiet) == 1);
  const Store store = Store::open_read(dir / "store");
  const StoreStatus st = summarize_store(store);
  CHECK(st.by_kind.at("stats").committed == 1);
  CHECK(st.by_kind.at("fit").committed == 1);
  CHECK(st.by_kind.at("all_linear").committed == 1);
  CHECK(st.by_kind.at("toy").failed == 2);
  CHECK(st.by_kind.at("toy_after").pending == 1);  // skipped, never started: still to run
  CHECK(st.by_kind.at("toy_after").committed == 0);
  REQUIRE(st.failures.size() == 2);
  for (const auto& f : st.failures) {
    CHECK(f.attempts == 2);  // the first try and one retry
    CHECK(f.error.find("fails on purpose") != std::string::npos);
  }
  // Bad input fails the same way every time: no retry, however many the spec allows.
  test::write_text(spec, base + "  toy: {units: 2, fail_input: true, after_fit: true}\nruntime: {retries: 2}\n");
  CHECK(run_sweep_local(spec, quiet) == 1);
  int bad_input = 0;
  for (const auto& f : summarize_store(store).failures) {
    if (f.error.find("bad input on purpose") == std::string::npos) continue;
    ++bad_input;
    CHECK(f.attempts == 1);
  }
  CHECK(bad_input == 2);
  // Once the toy units stop failing, the rerun completes what is missing and reruns nothing else.
  test::write_text(spec, base + "  toy: {units: 2, after_fit: true}\n");
  CHECK(run_sweep_local(spec, quiet) == 0);
  const StoreStatus after = summarize_store(store);
  CHECK(after.by_kind.at("stats").committed == 1);
  CHECK(after.by_kind.at("toy").committed == 2);
  CHECK(after.by_kind.at("toy_after").committed == 1);
}

TEST_CASE("run: one log per unit, tokens in the journal, run.json for resume") {
  ScratchDir dir;
  const std::string spec = golden_spec(dir, "tiny-gpt2");
  RunOptions quiet;
  quiet.quiet = true;
  REQUIRE(run_sweep_local(spec, quiet) == 0);
  const Store store = Store::open_read(dir / "store");
  for (const auto& id : store.committed_units()) {
    const std::string log = test::read_text(store.unit_log_path(id));
    CHECK(log.find("attempt 1 assigned to group 0 (rank 0, 1 rank)") != std::string::npos);
    CHECK(log.find("committed after ") != std::string::npos);
  }
  const StoreStatus st = summarize_store(store);
  CHECK(st.by_kind.at("stats").tokens == test::golden()["tiny-gpt2"]["fit"]["tokens"].get<std::int64_t>());
  CHECK(st.by_kind.at("fit").tokens == 0);
  CHECK(st.by_kind.at("all_linear").tokens_per_second() > 0);
  RunOptions resumed;
  CHECK(recorded_spec(dir / "store", &resumed) == spec);
  CHECK(resumed.store_override == dir / "store");
  SECTION("bad_: resume without run.json or with the spec gone") {
    std::filesystem::remove(spec);
    CHECK_THROWS_WITH(recorded_spec(dir / "store", &resumed), ContainsSubstring("no longer exists"));
    std::filesystem::remove(dir / "store/run.json");
    CHECK_THROWS_WITH(recorded_spec(dir / "store", &resumed), ContainsSubstring("run.json: missing"));
  }
}

TEST_CASE("run: near the Slurm time limit no unit starts that would not finish; exit 3, then resumable") {
  ScratchDir dir;
  const std::string spec = golden_spec(dir, "tiny-gpt2");
  RunOptions quiet;
  quiet.quiet = true;
  const auto now = static_cast<long long>(std::time(nullptr));
  ::setenv("LINSWEEP_DEADLINE", std::to_string(now - 1).c_str(), 1);  // already past: nothing may start
  CHECK(run_sweep_local(spec, quiet) == 3);
  CHECK(Store::open_read(dir / "store").committed_units().empty());
  ::setenv("LINSWEEP_DEADLINE", std::to_string(now + 3600).c_str(), 1);  // an hour: everything fits
  CHECK(run_sweep_local(spec, quiet) == 0);
  const Store store = Store::open_read(dir / "store");
  Plan plan = make_plan(load_spec(spec));
  {
    // With history, a kind whose mean duration would overrun is refused, others are not.
    ::setenv("LINSWEEP_DEADLINE", std::to_string(now + 100).c_str(), 1);
    DeadlineGuard guard(store, plan);
    CHECK(guard.active());
    guard.record("all_linear", 1e6);
    CHECK_FALSE(guard.fits("all_linear"));
    CHECK(guard.fits("some_new_kind"));
  }
  ::setenv("LINSWEEP_DEADLINE", "soon", 1);
  CHECK_THROWS_AS(DeadlineGuard(store, plan), InputError);
  ::unsetenv("LINSWEEP_DEADLINE");
  CHECK_FALSE(DeadlineGuard(store, plan).active());
}

TEST_CASE("run --units: only the listed units run; the others are left for their own job") {
  ScratchDir dir;
  const std::string spec = golden_spec(dir, "tiny-gpt2");
  const Plan plan = make_plan(load_spec(spec));
  // The first two units (stats, then fit on it) of the plan.
  test::write_text(dir / "units.txt", plan.units[0].id + "\n" + plan.units[1].id + "\n");
  RunOptions o;
  o.quiet = true;
  o.units_file = dir / "units.txt";
  CHECK(run_sweep_local(spec, o) == 0);
  CHECK(Store::open_read(dir / "store").committed_units().size() == 2);
  test::write_text(dir / "bad.txt", "fit-000000000000000000000000\n");
  o.units_file = dir / "bad.txt";
  CHECK_THROWS_WITH(run_sweep_local(spec, o), ContainsSubstring("is not in this spec's plan"));
}
