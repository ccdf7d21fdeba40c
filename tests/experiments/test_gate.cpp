// The gate experiment end to end on a fixture model; selection never reads the eval split.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <variant>

#include "experiments/framework/capture_data.hpp"
#include "experiments/numerics/gate_model.hpp"
#include "experiments/numerics/window_nll.hpp"
#include "orchestrator/plan/plan.hpp"
#include "orchestrator/run/local_run.hpp"
#include "orchestrator/run/unit_executor.hpp"
#include "orchestrator/spec/spec.hpp"
#include "storage/activation_shard.hpp"
#include "storage/store.hpp"
#include "support/catch.hpp"
#include "support/test_support.hpp"

using namespace linsweep;
using linsweep::test::ScratchDir;

namespace {

struct GateRow {
  std::string gate;
  std::int64_t selected;
  double auc, select_auc, eval_auc;
};

std::vector<GateRow> gate_rows(const UnitResult& u) {
  std::vector<GateRow> out;
  for (const auto& t : u.tables) {
    if (t.name != "gates") continue;
    auto col = [&](const char* c) { return static_cast<std::size_t>(t.column_index(c)); };
    for (const auto& r : t.rows)
      out.push_back({std::get<std::string>(r[col("gate")]), std::get<std::int64_t>(r[col("selected")]),
                     std::get<double>(r[col("auc")]), std::get<double>(r[col("select_auc")]),
                     std::get<double>(r[col("eval_auc")])});
  }
  return out;
}

const Unit& unit_of_kind(const Plan& plan, const std::string& kind) {
  for (const auto& u : plan.units)
    if (u.kind == kind) return u;
  FAIL("no " << kind << " unit");
  throw;
}

// Writes dir/spec.yaml (tiny-gpt2, layer 1, its store in dir/store) with `experiments` (YAML
// lines under `experiments:`) and runs it.
void run_gate_sweep(const ScratchDir& dir, const std::string& experiments) {
  test::write_text(dir / "spec.yaml",
                   "store: " + (dir / "store") +
                       "\ncontext: 32\nmodels: [{name: m, path: " + test::model_dir("tiny-gpt2") +
                       "}]\ncorpora: [{name: c, path: " + test::tokens_file("tiny-gpt2") +
                       "}]\nsplits:\n  fit: {start: 0, tokens: 1024}\n  gate: {start: 1024, tokens: 1024}\n"
                       "  select: {start: 2048, tokens: 512}\n  eval: {start: 2560, tokens: 1024}\n"
                       "layers: [1]\nexperiments:\n" +
                       experiments);
  RunOptions quiet;
  quiet.quiet = true;
  REQUIRE(run_sweep_local(dir / "spec.yaml", quiet) == 0);
}

}  // namespace

TEST_CASE("gate: poisoning the eval split's labels does not change the selected variant") {
  ScratchDir dir;
  run_gate_sweep(dir, "  gate: {variants: [linear, \"pca:4\", \"mlp:8\"], mlp_epochs: 60, bootstrap: 50}\n");
  const SweepSpec spec = load_spec(dir / "spec.yaml");
  const Plan plan = make_plan(spec);
  const Unit& gate = unit_of_kind(plan, "gate");
  const Unit& capture = unit_of_kind(plan, "capture");
  const Store store = Store::open_read(dir / "store");
  const UnitResult before = store.read_unit(gate.id);
  const std::vector<GateRow> rows = gate_rows(before);
  REQUIRE(rows.size() == 3);
  std::size_t chosen = 0, target = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) chosen = rows[i].selected ? i : chosen;
  target = (chosen + 1) % rows.size();  // a variant that was not chosen
  int selected_count = 0;
  for (const auto& r : rows) selected_count += static_cast<int>(r.selected);
  CHECK(selected_count == 1);

  // Poison: the eval split's δ made to agree perfectly with the unchosen variant's routing, so
  // a selection that looked at eval labels would pick it.
  const std::string shard = store.layout().activation_shard(capture.id, "eval", 1, 0);
  {
    const ActivationReader r(shard);
    const std::int64_t n = r.rows();
    const std::vector<float> x = r.x(0, n);
    const Gate g = Gate::load(before, gate_key("m", "c", 1) + "/" + rows[target].gate);
    const at::Tensor logits = g.logits(at::from_blob(const_cast<float*>(x.data()), {n, r.d()}, at::kFloat));
    std::vector<float> delta(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i)
      delta[static_cast<std::size_t>(i)] = logits[i].item<double>() > 0 ? -1.0f : 1.0f;
    ActivationOptions opt;
    opt.with_delta = true;
    ActivationWriter w(shard, r.d(), opt);
    w.append({.x = x.data(),
              .delta = delta.data(),
              .token_ids = r.token_ids(0, n).data(),
              .next_token_ids = r.next_token_ids(0, n).data(),
              .window = r.window(0, n).data(),
              .position = r.position(0, n).data(),
              .rows = n});
    w.close();
  }
  UnitExecutor executor(spec);
  const std::vector<GateRow> after = gate_rows(executor.run(gate, store, nullptr));
  REQUIRE(after.size() == rows.size());
  CHECK(after[target].eval_auc == Catch::Approx(1.0));  // the poison reached the eval split...
  CHECK(after[target].eval_auc > after[chosen].eval_auc);
  for (std::size_t i = 0; i < rows.size(); ++i) {  // ...and nothing that selection reads changed
    INFO(rows[i].gate);
    CHECK(after[i].selected == rows[i].selected);
    CHECK(after[i].select_auc == rows[i].select_auc);
    CHECK(after[i].auc == rows[i].auc);
  }
}

namespace {

// Column `c` of table `name` in the unit's tables, as doubles (integers converted), row by row.
std::vector<double> column_of(const UnitResult& u, const std::string& name, const char* c) {
  std::vector<double> out;
  for (const auto& t : u.tables) {
    if (t.name != name) continue;
    const auto i = static_cast<std::size_t>(t.column_index(c));
    for (const auto& r : t.rows)
      out.push_back(std::holds_alternative<double>(r[i]) ? std::get<double>(r[i])
                                                         : static_cast<double>(std::get<std::int64_t>(r[i])));
  }
  return out;
}

}  // namespace

TEST_CASE("gate: the threshold curve runs from all-linear through the gate to the untouched model") {
  ScratchDir dir;
  run_gate_sweep(
      dir,
      "  all_linear: {bootstrap: 50}\n  gate: {variants: [linear, \"pca:4\"], bootstrap: 50, curve_steps: 4, "
      "random_draws: 4}\n");
  const Plan plan = make_plan(load_spec(dir / "spec.yaml"));
  const Store store = Store::open_read(dir / "store");
  const UnitResult gate = store.read_unit(unit_of_kind(plan, "gate").id);
  const UnitResult all_linear = store.read_unit(unit_of_kind(plan, "all_linear").id);

  const std::vector<double> step = column_of(gate, "gate_curve", "step"),
                            share = column_of(gate, "gate_curve", "pct_linear"),
                            delta = column_of(gate, "gate_curve", "delta_pct");
  REQUIRE(step == std::vector<double>{0, 1, 2, 3, 4});
  // p > 0: every position, the all-linear substitution: the same affine map on the same windows
  // in the same batches, selected whole by the routing, so the same floating-point operations.
  CHECK(share[0] == 100.0);
  REQUIRE(column_of(all_linear, "all_linear", "delta_pct").size() == 1);
  CHECK(delta[0] == column_of(all_linear, "all_linear", "delta_pct")[0]);
  // Raising the threshold only removes positions; p > 1 removes every one: the untouched model.
  for (std::size_t k = 1; k < share.size(); ++k) CHECK(share[k] <= share[k - 1]);
  CHECK(share[4] == 0.0);
  CHECK(delta[4] == 0.0);
  // p > 0.5 is the gate's own routing: its row, exactly.
  const std::vector<GateRow> rows = gate_rows(gate);
  const std::vector<double> selected = column_of(gate, "gates", "selected"),
                            gate_share = column_of(gate, "gates", "pct_linear"),
                            gate_delta = column_of(gate, "gates", "delta_pct");
  const auto chosen = static_cast<std::size_t>(std::find(selected.begin(), selected.end(), 1.0) - selected.begin());
  REQUIRE(chosen < rows.size());
  CHECK(share[2] == gate_share[chosen]);
  CHECK(delta[2] == gate_delta[chosen]);

  // Random routing at each gate's share: a finite cost inside its own interval.
  const std::vector<double> random = column_of(gate, "gates", "random_delta_pct"),
                            low = column_of(gate, "gates", "random_ci_low"),
                            high = column_of(gate, "gates", "random_ci_high");
  REQUIRE(random.size() == rows.size());
  for (std::size_t v = 0; v < rows.size(); ++v) {
    INFO(rows[v].gate);
    CHECK(std::isfinite(random[v]));
    CHECK(low[v] <= random[v]);
    CHECK(random[v] <= high[v]);
  }

  // Four draws on the same windows, each kept as per-window NLL: their mean and spread, the
  // gate against their mean with a paired interval, the share of draws the gate beats.
  const std::string nll = window_nll_key("m", "c", "gate", 1);
  const std::vector<double>& base = gate.arrays.at(nll + "/base").values;
  auto delta_of = [&](const std::string& series) {
    double sb = 0, ss = 0;
    for (std::size_t i = 0; i < base.size(); ++i) sb += base[i], ss += gate.arrays.at(nll + "/" + series).values[i];
    return 100.0 * (std::exp((ss - sb) / static_cast<double>(base.size() * 31)) - 1.0);
  };
  const std::vector<double> draws = column_of(gate, "gates", "random_draws"),
                            mean = column_of(gate, "gates", "random_mean_delta_pct"),
                            sd = column_of(gate, "gates", "random_sd_pct"),
                            vs = column_of(gate, "gates", "vs_random_pct"),
                            vs_low = column_of(gate, "gates", "vs_random_ci_low"),
                            vs_high = column_of(gate, "gates", "vs_random_ci_high"),
                            beats = column_of(gate, "gates", "beats_random");
  REQUIRE(draws.size() == rows.size());
  for (std::size_t v = 0; v < rows.size(); ++v) {
    INFO(rows[v].gate);
    CHECK(draws[v] == 4);
    std::vector<double> d = {delta_of("random/" + rows[v].gate)};
    for (int k = 1; k < 4; ++k) d.push_back(delta_of("random_draws/" + rows[v].gate + "/" + std::to_string(k)));
    double m = 0, ss = 0, beaten = 0;
    for (double x : d) m += x / 4, beaten += x > gate_delta[v] ? 0.25 : 0.0;
    for (double x : d) ss += (x - m) * (x - m);
    CHECK(d[0] == Catch::Approx(random[v]).epsilon(1e-12));
    CHECK(mean[v] == Catch::Approx(m).epsilon(1e-12));
    CHECK(sd[v] == Catch::Approx(std::sqrt(ss / 3)).epsilon(1e-9));
    CHECK(sd[v] > 0);  // the draws differ
    CHECK(vs[v] == Catch::Approx(gate_delta[v] - m).margin(1e-12));
    CHECK(vs_low[v] <= vs[v]);
    CHECK(vs[v] <= vs_high[v]);
    CHECK(beats[v] == beaten);
  }
}
