// Adding an experiment is one file: `toy`, registered by this test binary alone
// (tests/support/test_experiments.cpp), is validated by the spec reader, planned, run,
// committed, read back through its table and summarized through its section.
#include "common/errors.hpp"
#include "orchestrator/plan/plan.hpp"
#include "orchestrator/run/local_run.hpp"
#include "orchestrator/spec/spec.hpp"
#include "presentation/report.hpp"
#include "storage/store.hpp"
#include "support/catch.hpp"
#include "support/test_support.hpp"

using namespace linsweep;
using Catch::Matchers::ContainsSubstring;
using linsweep::test::ScratchDir;

namespace {

std::string toy_spec(const ScratchDir& dir, const std::string& toy) {
  test::write_text(dir / "spec.yaml", "store: " + (dir / "store") + "\ncontext: 32\nmodels:\n  - {name: m, path: " +
                                          test::model_dir("tiny-gpt2") + "}\ncorpora:\n  - {name: c, path: " +
                                          test::tokens_file("tiny-gpt2") + "}\nexperiments:\n  toy: " + toy + "\n");
  return dir / "spec.yaml";
}

}  // namespace

TEST_CASE("toy: a test-registered experiment is planned, run, tabled and summarized like the built-in ones") {
  ScratchDir dir;
  const std::string spec = toy_spec(dir, "{units: 3, scale: 5}");
  const SweepSpec s = load_spec(spec);
  CHECK(s.experiments.at("toy")["sleep"] == 0.0);  // defaults filled in
  const Plan plan = make_plan(s);
  REQUIRE(plan.units.size() == 4);  // three toy units, then toy_after
  CHECK(plan.units[3].kind == "toy_after");
  CHECK(plan.units[3].deps.size() == 3);
  CHECK(plan.units[1].slot == "toy/m/c/1");
  RunOptions quiet;
  quiet.quiet = true;
  REQUIRE(run_sweep_local(spec, quiet) == 0);
  const Store store = Store::open_read(dir / "store");
  const Table t = store.read_table("toy");
  REQUIRE(t.rows.size() == 4);
  std::int64_t sum = 0;
  for (const auto& r : t.rows) sum += std::get<std::int64_t>(r[static_cast<std::size_t>(t.column_index("value"))]);
  CHECK(sum == (0 + 1 + 2) * 5 + 3);  // index · scale, and toy_after's count of dependencies
  bool section = false;
  for (const auto& r : build_report(store)) section = section || (r.name == "toy" && r.rows.size() == 4);
  CHECK(section);
}

TEST_CASE("bad_: the toy experiment's parameters are checked against their declared ranges") {
  ScratchDir dir;
  CHECK_THROWS_WITH(load_spec(toy_spec(dir, "{scale: 0}")),
                    ContainsSubstring("spec.yaml:8: experiments.toy.scale: 0 is out of range (expected in [1, 1000])"));
  CHECK_THROWS_WITH(load_spec(toy_spec(dir, "{sleep: -1}")),
                    ContainsSubstring("experiments.toy.sleep: -1 is out of range"));
  CHECK_THROWS_WITH(load_spec(toy_spec(dir, "{units: 2, colour: red}")),
                    ContainsSubstring("experiments.toy.colour: unknown key"));
}
