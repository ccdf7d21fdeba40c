// Plan: stable content ids; what a spec or input change reruns; status against a store.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "orchestrator/plan.hpp"
#include "storage/store.hpp"
#include "support/test_support.hpp"

using namespace linsweep;
using linsweep::test::ScratchDir;

namespace {

struct Fixture {
  ScratchDir dir;
  Fixture() {
    test::copy_model("tiny-gpt2", dir / "gpt2");
    test::copy_model("tiny-neox", dir / "neox");
  }
  // A spec over the two copied models and two corpora, with `lambda` and `batch`.
  SweepSpec spec(const std::string& lambda = "[0.01, 0.1]", int batch = 8, const std::string& time = "01:00:00") {
    const std::string text = "store: " + (dir / "store") + "\ncontext: 32\nmodels:\n  - {name: g, path: " + (dir / "gpt2") +
                             "}\n  - {name: n, path: " + (dir / "neox") + "}\ncorpora:\n  - {name: a, path: " +
                             test::tokens_file("tiny-gpt2") + "}\n  - {name: b, path: " +
                             test::data_dir() + "/tokenizer/edge.txt, format: text}\n" +
                             "splits:\n  fit: {start: 0, tokens: 64}\n  eval: {start: 64, tokens: 64}\n" +
                             "experiments:\n  fit: {lambda: " + lambda + "}\n  all_linear: {}\n  gate: {}\n" +
                             "runtime: {batch: " + std::to_string(batch) + "}\nresources: {time: \"" + time + "\"}\n";
    test::write_text(dir / "spec.yaml", text);
    return load_spec(dir / "spec.yaml");
  }
};

std::map<std::string, std::string> ids_by_slot(const Plan& p) {
  std::map<std::string, std::string> m;
  for (const auto& u : p.units) m[u.slot] = u.id;
  return m;
}

}  // namespace

TEST_CASE("the plan has stats, fit and all_linear per model and corpus, in dependency order") {
  Fixture f;
  const Plan p = make_plan(f.spec());
  REQUIRE(p.units.size() == 2 * 2 * 3);
  CHECK(p.not_planned == std::vector<std::string>{"gate"});
  std::set<std::string> seen;
  for (const auto& u : p.units) {
    for (const auto& d : u.deps) CHECK(seen.count(d) == 1);
    seen.insert(u.id);
  }
  CHECK(p.units[0].kind == "stats");
  CHECK(p.units[1].deps == std::vector<std::string>{p.units[0].id});
  CHECK(p.units[2].params["lambda"] == 0.01);
  CHECK(p.units[0].params["layers"] == nlohmann::json({0, 1, 2}));
  CHECK(ids_by_slot(make_plan(f.spec())) == ids_by_slot(p));  // stable
}

TEST_CASE("unrelated fields rerun nothing; lambda reruns fits and what follows; weights rerun their model") {
  Fixture f;
  const auto base = ids_by_slot(make_plan(f.spec()));
  CHECK(ids_by_slot(make_plan(f.spec("[0.01, 0.1]", 2, "09:00:00"))) == base);  // batch, resources

  const auto lam = ids_by_slot(make_plan(f.spec("[0.1, 1.0]")));
  for (const auto& [slot, id] : base) {
    INFO(slot);
    CHECK((lam.at(slot) == id) == (slot.rfind("stats/", 0) == 0));
  }

  // One byte of one weight of model n changes.
  {
    std::fstream w(f.dir / "neox/model.safetensors", std::ios::in | std::ios::out | std::ios::binary);
    w.seekp(-5, std::ios::end);
    w.put('\x7f');
  }
  const auto weights = ids_by_slot(make_plan(f.spec()));
  for (const auto& [slot, id] : base) {
    INFO(slot);
    CHECK((weights.at(slot) == id) == (slot.find("/g/") != std::string::npos));
  }
}

TEST_CASE("status: done, pending, rerun with its reason, and previous failures") {
  Fixture f;
  const Plan p = make_plan(f.spec());
  {
    Store s = Store::open_write(f.dir / "store");
    for (const auto& u : p.units) {
      if (u.model != "g") continue;
      s.commit(UnitResult{u.id, u.kind, u.provenance(), {}, {}});
    }
    JournalEvent e;
    e.event = "failed";
    e.unit = p.units[3 * 2].id;  // model n, corpus a, stats
    e.error = "out of memory";
    s.journal(e);
  }
  const Store store = Store::open_read(f.dir / "store");
  auto status = plan_status(p, &store);
  std::map<std::string, int> counts;
  for (const auto& s : status) counts[unit_state_name(s.state)]++;
  CHECK(counts["done"] == 6);
  CHECK(counts["pending"] == 6);
  CHECK(status[6].reason == "previous attempt failed: out of memory");

  const Plan changed = make_plan(f.spec("[0.5]"));
  status = plan_status(changed, &store);
  for (const auto& s : status) {
    if (s.unit->model != "g") continue;
    INFO(s.unit->slot);
    if (s.unit->kind == "stats") {
      CHECK(s.state == UnitState::kDone);
    } else {
      CHECK(s.state == UnitState::kRerun);
      CHECK(s.reason == "spec changed: lambda");
    }
  }
}

TEST_CASE("two corpora with the same bytes, or one model under two names, are different units") {
  ScratchDir dir;
  const std::string text = "store: " + (dir / "store") + "\ncontext: 32\nmodels:\n  - {name: m1, path: " +
                           test::model_dir("tiny-gpt2") + "}\n  - {name: m2, path: " + test::model_dir("tiny-gpt2") +
                           "}\ncorpora:\n  - {name: a, path: " + test::tokens_file("tiny-gpt2") + "}\n  - {name: b, path: " +
                           test::tokens_file("tiny-gpt2") + "}\nsplits:\n  fit: {start: 0, tokens: 64}\n  eval: {start: 64, tokens: 64}\n" +
                           "experiments:\n  fit: {}\n  all_linear: {}\n";
  test::write_text(dir / "spec.yaml", text);
  const Plan p = make_plan(load_spec(dir / "spec.yaml"));
  REQUIRE(p.units.size() == 2 * 2 * 3);
  std::set<std::string> ids;
  for (const auto& u : p.units) ids.insert(u.id);
  CHECK(ids.size() == p.units.size());
}
