// Nothing is chosen on the eval split: planted eval numbers that would reverse a choice leave
// progressive's layer order, and every layer a report table, finding or opening sentence names
// as best, cheapest or most expensive, as the select split chose them. (The gate variant and the
// label threshold: test_gate.cpp poisons the eval split's δ.)
#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <variant>

#include "orchestrator/plan/plan.hpp"
#include "orchestrator/run/local_run.hpp"
#include "orchestrator/run/unit_executor.hpp"
#include "orchestrator/spec/spec.hpp"
#include "presentation/findings.hpp"
#include "presentation/report.hpp"
#include "storage/store.hpp"
#include "support/catch.hpp"
#include "support/test_support.hpp"

using namespace linsweep;
using linsweep::test::ScratchDir;

namespace {

const Unit& unit_of_kind(const Plan& plan, const std::string& kind) {
  for (const auto& u : plan.units)
    if (u.kind == kind) return u;
  FAIL("no " << kind << " unit");
  throw;
}

double number(const Row& r, int c) {
  const auto& v = r[static_cast<std::size_t>(c)];
  return std::holds_alternative<double>(v) ? std::get<double>(v) : static_cast<double>(std::get<std::int64_t>(v));
}

Table& table_named(std::vector<Table>& tables, const std::string& name) {
  for (Table& t : tables)
    if (t.name == name) return t;
  FAIL("no table " << name);
  throw;
}

// The layers of a progressive unit's final row, in the order it replaced them ("1,0,2").
std::string progressive_order(const UnitResult& u) {
  std::string layers;
  for (const Table& t : u.tables)
    if (t.name == "progressive")
      for (const Row& r : t.rows)
        if (std::get<std::string>(r[static_cast<std::size_t>(t.column_index("phase"))]) == "final")
          layers = std::get<std::string>(r[static_cast<std::size_t>(t.column_index("layers"))]);
  return layers;
}

// Layers of `delta` (layer → value) sorted by value, joined as progressive joins them.
std::string order_by(const std::map<std::int64_t, double>& delta) {
  std::vector<std::pair<double, std::int64_t>> v;
  for (const auto& [layer, d] : delta) v.emplace_back(d, layer);
  std::sort(v.begin(), v.end());
  std::string out;
  for (const auto& [d, layer] : v) out += (out.empty() ? "" : ",") + std::to_string(layer);
  return out;
}

// The report cell under `header` of table `name`'s first row.
std::string report_cell(const std::vector<ReportTable>& report, const std::string& name, const std::string& header) {
  for (const ReportTable& t : report)
    if (t.name == name) {
      REQUIRE(!t.rows.empty());
      const auto h = std::find(t.headers.begin(), t.headers.end(), header);
      REQUIRE(h != t.headers.end());
      return t.rows.front()[static_cast<std::size_t>(h - t.headers.begin())];
    }
  FAIL("no report table " << name);
  throw;
}

// Reverses the order of `table`'s eval Δ% (delta_pct := −select_delta_pct) on the rows where
// `row_counts` holds; returns the select Δ% by layer.
std::map<std::int64_t, double> plant_reversed_eval(Table& t, const std::function<bool(const Row&)>& row_counts) {
  const int layer = t.column_index("layer"), eval = t.column_index("delta_pct"),
            select = t.column_index("select_delta_pct");
  REQUIRE(select >= 0);
  std::map<std::int64_t, double> by_select;
  for (Row& r : t.rows)
    if (row_counts(r)) {
      const auto l = static_cast<std::int64_t>(number(r, layer));
      by_select[l] = number(r, select);
      r[static_cast<std::size_t>(eval)] = -by_select[l];  // the best on eval is the worst on select
    }
  return by_select;
}

// The report columns and findings topics that name a chosen layer or gate: each is checked
// below, and a new one must be added here (and checked) before its table passes.
bool names_a_choice(const std::string& header) {
  for (const char* word : {"best", "cheapest", "most expensive", "worst", "lowest", "highest", "chosen"})
    if (header.find(word) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("choices: planted eval costs change neither progressive's order nor the best layer") {
  ScratchDir dir;
  test::write_text(dir / "spec.yaml",
                   "store: " + (dir / "store") +
                       "\ncontext: 32\nmodels: [{name: m, path: " + test::model_dir("tiny-gpt2") +
                       "}]\ncorpora: [{name: c, path: " + test::tokens_file("tiny-gpt2") +
                       "}]\nsplits:\n  fit: {start: 0, tokens: 1024}\n  gate: {start: 1024, tokens: 1024}\n"
                       "  select: {start: 2048, tokens: 512}\n  eval: {start: 2560, tokens: 1024}\n"
                       "  train: {start: 3584, tokens: 512}\nlayers: all\nexperiments:\n"
                       "  all_linear: {bootstrap: 20}\n  gate: {variants: [linear], bootstrap: 20, curve_steps: 0}\n"
                       "  progressive: {steps_per_layer: 0, final_steps: 0, control: false, surrogates: frozen, "
                       "batch: 4}\n");
  RunOptions quiet;
  quiet.quiet = true;
  REQUIRE(run_sweep_local(dir / "spec.yaml", quiet) == 0);
  const SweepSpec spec = load_spec(dir / "spec.yaml");
  const Plan plan = make_plan(spec);

  {  // progressive orders its layers by the select split's all-linear costs
    const Unit& all_linear = unit_of_kind(plan, "all_linear");
    const Unit& progressive = unit_of_kind(plan, "progressive");
    UnitResult costs = Store::open_read(dir / "store").read_unit(all_linear.id);
    Table& t = table_named(costs.tables, "all_linear");
    const int layer = t.column_index("layer"), eval = t.column_index("delta_pct"),
              select = t.column_index("select_delta_pct");
    REQUIRE(select >= 0);
    std::map<std::int64_t, double> by_select, planted;
    for (Row& r : t.rows) {
      const auto l = static_cast<std::int64_t>(number(r, layer));
      by_select[l] = number(r, select);
      r[static_cast<std::size_t>(eval)] = -by_select[l];  // the eval split's costs ranked backwards
      planted[l] = -by_select[l];
    }
    REQUIRE(by_select.size() == 3);
    const std::string chosen = order_by(by_select);
    REQUIRE(order_by(planted) != chosen);  // an order read from eval would change
    CHECK(progressive_order(Store::open_read(dir / "store").read_unit(progressive.id)) == chosen);
    {
      Store store = Store::open_write(dir / "store");
      store.commit(costs);
    }
    UnitExecutor executor(spec);
    CHECK(progressive_order(executor.run(progressive, Store::open_read(dir / "store"), nullptr)) == chosen);
  }

  {  // every table, finding and sentence that names a layer picks it on select
    std::map<std::string, Table> tables = Store::open_read(dir / "store").read_tables();
    Table& g = tables.at("gates");
    const int selected = g.column_index("selected");
    const auto gate_select = plant_reversed_eval(g, [&](const Row& r) { return number(r, selected) == 1; });
    const auto layer_select = plant_reversed_eval(tables.at("all_linear"), [](const Row&) { return true; });
    REQUIRE(gate_select.size() == 3);
    REQUIRE(layer_select.size() == 3);
    const std::string best = order_by(gate_select).substr(0, 1);
    const std::string cheapest = order_by(layer_select).substr(0, 1);
    const std::string dearest = order_by(layer_select).substr(order_by(layer_select).size() - 1);
    REQUIRE(cheapest != dearest);  // the planted eval order would swap them

    const std::vector<ReportTable> report = build_report(tables);
    const std::map<std::pair<std::string, std::string>, std::string> expected = {
        {{"all_linear_extremes", "cheapest layer"}, cheapest},
        {{"all_linear_extremes", "most expensive layer"}, dearest},
        {{"gating_summary", "best layer"}, best},
        {{"cross_scale", "best gated layer (Δ%)"}, "L" + best},
    };
    for (const auto& [where, want] : expected)
      CHECK(report_cell(report, where.first, where.second).substr(0, want.size()) == want);
    // Columns that name the variant chosen at a given layer (test_gate.cpp checks that choice).
    const std::set<std::pair<std::string, std::string>> variants = {{"gating_summary", "best gate"},
                                                                    {"layer0", "chosen gate"}};
    for (const ReportTable& t : report)
      for (const auto& h : t.headers)
        if (names_a_choice(h) && !variants.count({t.name, h}))
          CHECK(expected.count({t.name, h}) == 1);  // a new column that names a choice: check it above

    std::map<std::string, std::string> findings;  // topic -> text (one model and corpus)
    for (const Finding& f : collect_findings(tables)) findings[f.topic] = f.text;
    CHECK(findings.at("cheapest layer, all-linear Δ%").rfind("L" + cheapest + ":", 0) == 0);
    CHECK(findings.at("most expensive layer").rfind("L" + dearest + ":", 0) == 0);
    CHECK(findings.at("chosen gate vs random routing, Δ% difference").find("best layer L" + best + " ") !=
          std::string::npos);
    for (const auto& [topic, text] : findings) CHECK(text.find("chosen on eval") == std::string::npos);

    const std::vector<std::string> headlines = collect_headlines(tables);
    REQUIRE(headlines.size() == 2);  // all_linear's and gate's
    CHECK(headlines[0].find("costs least at layer " + cheapest + " of m on c") != std::string::npos);
    CHECK(headlines[0].find("the most expensive, layer " + dearest + " of m on c") != std::string::npos);
    CHECK(headlines[1].find("layer " + best + " of m on c") != std::string::npos);
  }
}
