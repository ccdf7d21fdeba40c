// Plan: stable content ids; what a spec or input change reruns; status against a store.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "common/errors.hpp"
#include "orchestrator/plan/plan.hpp"
#include "orchestrator/spec/spec_overrides.hpp"
#include "storage/store.hpp"
#include "support/catch.hpp"
#include "support/test_support.hpp"

using namespace linsweep;
using Catch::Matchers::ContainsSubstring;
using linsweep::test::ScratchDir;

namespace {

struct Fixture {
  ScratchDir dir;
  Fixture() {
    test::copy_model("tiny-gpt2", dir / "gpt2");
    test::copy_model("tiny-neox", dir / "neox");
  }
  // A spec over the two copied models and two corpora, with `lambda` and `batch`.
  SweepSpec spec(const std::string& lambda = "[0.01, 0.1]", int batch = 8, const std::string& time = "01:00:00",
                 const std::string& extra = "", const std::string& splits = "") {
    const std::string text = "store: " + (dir / "store") +
                             "\ncontext: 32\nmodels:\n  - {name: g, path: " + (dir / "gpt2") +
                             "}\n  - {name: n, path: " + (dir / "neox") +
                             "}\ncorpora:\n  - {name: a, path: " + test::tokens_file("tiny-gpt2") +
                             "}\n  - {name: b, path: " + test::data_dir() + "/tokenizer/edge.txt, format: text}\n" +
                             "splits:\n  fit: {start: 0, tokens: 64}\n  eval: {start: 64, tokens: 64}\n" + splits +
                             "experiments:\n  fit: {lambda: " + lambda + "}\n  all_linear: {}\n" + extra +
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
  CHECK(p.not_planned.empty());
  std::set<std::string> seen;
  for (const auto& u : p.units) {
    for (const auto& d : u.deps) CHECK(seen.count(d) == 1);
    seen.insert(u.id);
  }
  CHECK(p.units[0].kind == "stats");
  CHECK(p.units[1].deps == std::vector<std::string>{p.units[0].id});
  for (const auto& u : p.units)
    if (u.kind == "all_linear") CHECK(u.params["lambda"] == 0.01);
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

TEST_CASE("the fingerprint cache: replanning reads no weight bytes; a changed weight file is hashed again") {
  Fixture f;
  const std::string cache = f.dir / "fingerprints.json";
  FileHashCache first(cache);
  const auto base = ids_by_slot(make_plan(f.spec(), first));
  const auto weights = static_cast<std::uint64_t>(std::filesystem::file_size(f.dir / "neox/model.safetensors"));
  CHECK(first.bytes_hashed() > weights);
  first.save();
  FileHashCache second(cache);
  CHECK(ids_by_slot(make_plan(f.spec(), second)) == base);
  CHECK(second.bytes_hashed() == 0);

  {  // one byte of model n's weights, saved a second later
    std::fstream w(f.dir / "neox/model.safetensors", std::ios::in | std::ios::out | std::ios::binary);
    w.seekp(-5, std::ios::end);
    w.put('\x7f');
  }
  const std::string path = f.dir / "neox/model.safetensors";
  std::filesystem::last_write_time(path, std::filesystem::last_write_time(path) + std::chrono::seconds(1));
  FileHashCache third(cache);
  const auto changed = ids_by_slot(make_plan(f.spec(), third));
  CHECK(third.bytes_hashed() == weights);  // that file only
  for (const auto& [slot, id] : base) {
    INFO(slot);
    CHECK((changed.at(slot) == id) == (slot.find("/g/") != std::string::npos));
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
      // Old and new values, as each unit holds them: the fit's λ grid, all_linear's one λ.
      CHECK(s.reason ==
            (s.unit->kind == "fit" ? "spec changed: lambda [0.01,0.1] → [0.5]" : "spec changed: lambda 0.01 → 0.5"));
    }
  }
}

TEST_CASE("two corpora with the same bytes, or one model under two names, are different units") {
  ScratchDir dir;
  const std::string text = "store: " + (dir / "store") +
                           "\ncontext: 32\nmodels:\n  - {name: m1, path: " + test::model_dir("tiny-gpt2") +
                           "}\n  - {name: m2, path: " + test::model_dir("tiny-gpt2") +
                           "}\ncorpora:\n  - {name: a, path: " + test::tokens_file("tiny-gpt2") +
                           "}\n  - {name: b, path: " + test::tokens_file("tiny-gpt2") +
                           "}\nsplits:\n  fit: {start: 0, tokens: 64}\n  eval: {start: 64, tokens: 64}\n" +
                           "experiments:\n  fit: {}\n  all_linear: {}\n";
  test::write_text(dir / "spec.yaml", text);
  const Plan p = make_plan(load_spec(dir / "spec.yaml"));
  REQUIRE(p.units.size() == 2 * 2 * 3);
  std::set<std::string> ids;
  for (const auto& u : p.units) ids.insert(u.id);
  CHECK(ids.size() == p.units.size());
}

TEST_CASE("measurement experiments: capture, per-layer gate/token_context/clusters, compound and nofly units") {
  ScratchDir dir;
  const std::string m = test::model_dir("tiny-gpt2"), c = test::tokens_file("tiny-gpt2");
  const std::string head = "store: " + (dir / "store") + "\ncontext: 32\nmodels:\n  - {name: a, path: " + m +
                           "}\ncorpora:\n  - {name: s, path: " + c + "}\n  - {name: t, path: " + c +
                           "}\nsplits:\n  fit: {start: 0, tokens: 512}\n  gate: {start: 512, tokens: 512}\n"
                           "  select: {start: 1024, tokens: 256}\n  eval: {start: 1280, tokens: 256}\nlayers: [0, 2]\n";
  test::write_text(dir / "spec.yaml", head +
                                          "experiments:\n  gate: {}\n  token_context: {layers: [1]}\n  clusters: {}\n"
                                          "  nofly: {}\n  compound: {}\n");
  const Plan plan = make_plan(load_spec(dir / "spec.yaml"));
  std::map<std::string, int> kinds;
  std::map<std::string, const Unit*> by_id;
  for (const auto& u : plan.units) {
    ++kinds[u.kind];
    for (const auto& d : u.deps) CHECK(by_id.count(d) == 1);  // dependencies come first
    by_id[u.id] = &u;
  }
  CHECK(kinds == std::map<std::string, int>{{"stats", 2},
                                            {"fit", 2},
                                            {"capture", 2},
                                            {"gate", 4},
                                            {"token_context", 2},
                                            {"clusters", 4},
                                            {"compound", 2},
                                            {"nofly", 1}});
  for (const auto& u : plan.units) {
    if (u.kind == "capture") {
      // Layers: the sweep's (0, 2) plus token_context's 1 and the middle nofly layer (1); the
      // fit it reads from covers them all.
      CHECK(u.params["layers"] == nlohmann::json({0, 1, 2}));
      CHECK(by_id.at(u.deps[0])->params["layers"] == u.params["layers"]);
      CHECK(u.params["splits"].size() == 3);
      CHECK(u.tokens() == 512 + 256 + 256);
    }
    if (u.kind == "gate") CHECK(u.label().find("/layer") != std::string::npos);
    if (u.kind == "compound") CHECK(u.deps.size() == 3);  // fit + two gate layers
    if (u.kind == "nofly") {
      CHECK(u.params["corpora"] == nlohmann::json({"s", "t"}));
      CHECK(by_id.at(u.deps[0])->corpus == "s");
      CHECK(by_id.at(u.deps[1])->corpus == "t");
    }
  }
  // Captures do not depend on which experiments read them: adding gates or changing the
  // clusters' layers (within the sweep's) reruns neither the captures nor the other units.
  auto ids_of = [&](const std::string& experiments) {
    test::write_text(dir / "spec.yaml", head + "experiments:\n" + experiments);
    std::map<std::string, std::string> ids;
    for (const auto& u : make_plan(load_spec(dir / "spec.yaml")).units) ids[u.slot] = u.id;
    return ids;
  };
  const auto before = ids_of("  clusters: {layers: [2]}\n  token_context: {}\n");
  const auto after = ids_of("  clusters: {layers: [0, 2]}\n  token_context: {}\n  gate: {}\n");
  for (const auto& [slot, id] : before) {
    INFO(slot);
    CHECK(after.at(slot) == id);
  }
  // Compound alone, and nofly with one corpus or its source as a target, are refused.
  test::write_text(dir / "spec.yaml", head + "experiments:\n  nofly: {targets: [s]}\n");
  CHECK_THROWS_WITH(make_plan(load_spec(dir / "spec.yaml")),
                    ContainsSubstring("experiments.nofly.targets: the source corpus cannot be its own target"));
  test::write_text(dir / "spec.yaml", head + "experiments:\n  compound: {}\n");
  CHECK_THROWS_WITH(make_plan(load_spec(dir / "spec.yaml")),
                    ContainsSubstring("experiments.compound: needs experiments.gate"));
  test::write_text(dir / "one.yaml",
                   "store: " + (dir / "store") + "\ncontext: 32\nmodels:\n  - {name: a, path: " + m +
                       "}\ncorpora:\n  - {name: s, path: " + c +
                       "}\nsplits:\n  fit: {start: 0, tokens: 512}\n  gate: {start: 512, tokens: 512}\n"
                       "experiments:\n  nofly: {}\n");
  CHECK_THROWS_WITH(
      make_plan(load_spec(dir / "one.yaml")),
      ContainsSubstring("one.yaml:11: experiments.nofly.targets: needs a target corpus other than its source 's'"));
}

TEST_CASE("training units: progressive and its control per model, finetune per variant with the control") {
  Fixture f;
  const std::string train = "  train: {start: 128, tokens: 64}\n";
  const std::string select = "  select: {start: 192, tokens: 32}\n";
  const Plan p = make_plan(f.spec(
      "[0.01]", 8, "01:00:00", "  progressive: {}\n  finetune: {variants: [two_phase], steps: 10}\n", train + select));
  std::map<std::string, const Unit*> by_slot;
  for (const auto& u : p.units) by_slot[u.slot] = &u;
  for (const std::string m : {"g", "n"}) {
    const Unit* prog = by_slot.at("progressive/" + m + "/a");
    CHECK(prog->params["order"] == nlohmann::json({1, 0, 2}));  // the layers; sorted when it runs
    // The spec runs all_linear and has a select split: cheapest first by its Δ% there, so the
    // unit waits for it.
    CHECK(prog->params["order_by"] == "all_linear");
    CHECK(prog->deps ==
          std::vector<std::string>{by_slot.at("fit/" + m + "/a")->id, by_slot.at("all_linear/" + m + "/a")->id});
    CHECK(prog->params["surrogates"] == "refit");
    CHECK(prog->params["fit"] == nlohmann::json({{"start", 0}, {"tokens", 64}}));
    CHECK(prog->params["eval"].size() == 2);  // every corpus by default
    CHECK(prog->inputs.count("stream:b") == 1);
    const Unit* prog_control = by_slot.at("progressive/" + m + "/a/control");
    CHECK(prog_control->params["variant"] == "control");
    CHECK(prog_control->deps.empty());
    CHECK(prog_control->params["steps_per_layer"] == prog->params["steps_per_layer"]);
    CHECK(prog_control->params["order"].size() == prog->params["order"].size());
    const Unit* two = by_slot.at("finetune/" + m + "/a/two_phase");
    CHECK(two->params["layers"] == nlohmann::json({1}));  // a third of the layers, middle-out
    CHECK(two->params.contains("gate_hidden"));
    const Unit* control = by_slot.at("finetune/" + m + "/a/control");
    CHECK(control->deps.empty());
    CHECK_FALSE(control->params.contains("layers"));
    CHECK_FALSE(control->params.contains("gate_hidden"));
    CHECK(control->params["steps"] == two->params["steps"]);
    CHECK(control->params["seed"] == two->params["seed"]);
  }
  CHECK_THROWS_WITH(make_plan(f.spec("[0.01]", 8, "01:00:00", "  progressive: {}\n")),
                    ContainsSubstring("splits.train"));
  // No select split: nothing but eval measures all_linear, so the order stays middle-out.
  for (const auto& u : make_plan(f.spec("[0.01]", 8, "01:00:00", "  progressive: {}\n", train)).units)
    if (u.kind == "progressive" && u.params["variant"] == "progressive") {
      CHECK(u.params["order_by"] == "given");
      CHECK(u.deps.size() == 1);
    }
  // Only the model it names, with its own order.
  const Plan one =
      make_plan(f.spec("[0.01]", 8, "01:00:00", "  progressive: {model: n, order: [2, 0], control: false}\n", train));
  std::size_t n_prog = 0;
  for (const auto& u : one.units)
    if (u.kind == "progressive") {
      ++n_prog;
      CHECK(u.model == "n");
      CHECK(u.params["order"] == nlohmann::json({2, 0}));
      CHECK(u.params["order_by"] == "given");
    }
  CHECK(n_prog == 1);
}

TEST_CASE("adding a training experiment changes no measurement unit's id; its layers get their own fit") {
  Fixture f;
  const std::string train = "  train: {start: 128, tokens: 64}\n";
  const auto without = ids_by_slot(make_plan(f.spec("[0.01]", 8, "01:00:00", "", train)));
  const Plan with = make_plan(f.spec("[0.01]", 8, "01:00:00", "  progressive: {order: [1, 0, 2]}\n", train));
  const auto ids = ids_by_slot(with);
  for (const auto& [slot, id] : without) {
    INFO(slot);
    CHECK(ids.at(slot) == id);
  }
  // The sweep fits every layer here (layers: all), so the training units reuse its fit.
  for (const auto& u : with.units)
    if (u.kind == "progressive" && u.params["variant"] == "progressive")
      CHECK(u.deps == std::vector<std::string>{ids.at("fit/" + u.model + "/a")});
}

namespace {

// The units of `p` of `kind`.
std::vector<const Unit*> of_kind(const Plan& p, const std::string& kind) {
  std::vector<const Unit*> out;
  for (const auto& u : p.units)
    if (u.kind == kind) out.push_back(&u);
  return out;
}

}  // namespace

TEST_CASE("a swept key plans each setting; units it does not change are shared") {
  Fixture f;
  const SweepSpec spec = f.spec("[0.01, 0.1]", 8, "01:00:00", "", "sweep:\n  all_linear.bootstrap: [200, 500]\n");
  REQUIRE(spec.settings.size() == 2);
  CHECK(spec.settings[0].values == nlohmann::json{{"all_linear.bootstrap", 200}});
  const Plan p = make_plan(spec);
  // stats and fit per model and corpus once; all_linear once per setting.
  REQUIRE(of_kind(p, "stats").size() == 4);
  REQUIRE(of_kind(p, "fit").size() == 4);
  REQUIRE(of_kind(p, "all_linear").size() == 8);
  for (const Unit* u : of_kind(p, "fit")) {
    CHECK(u->setting.empty());
    CHECK(u->slot.find('@') == std::string::npos);
  }
  std::set<std::string> ids, slots;
  for (const Unit* u : of_kind(p, "all_linear")) {
    const std::int64_t b = u->setting.at("all_linear.bootstrap").get<std::int64_t>();
    CHECK(u->params.at("bootstrap").get<std::int64_t>() == b);
    CHECK(u->slot.substr(u->slot.find('@')) == "@all_linear.bootstrap=" + std::to_string(b));
    CHECK(u->provenance().find("\"setting\"") != std::string::npos);
    slots.insert(u->slot);
  }
  CHECK(slots.size() == 8);
  for (const auto& u : p.units) {
    for (const auto& d : u.deps) CHECK(ids.count(d) == 1);  // dependencies first, by their merged ids
    CHECK(ids.insert(u.id).second);
    CHECK(u.id == unit_content_id(u));
  }
}

TEST_CASE("two swept keys make every combination; each unit names only the keys it depends on") {
  Fixture f;
  f.spec("[0.01, 0.1]", 8, "01:00:00", "", "sweep:\n  context: [16, 32]\n");  // writes spec.yaml
  const SweepSpec spec =
      load_spec(f.dir / "spec.yaml", "", {multirun_override("experiments.all_linear.bootstrap=100,300")});
  REQUIRE(spec.settings.size() == 4);
  const Plan p = make_plan(spec);
  REQUIRE(of_kind(p, "stats").size() == 8);  // 4 (model, corpus) x 2 contexts
  for (const Unit* u : of_kind(p, "stats")) {
    CHECK(u->setting.size() == 1);
    CHECK(u->params.at("context") == u->setting.at("context"));
  }
  REQUIRE(of_kind(p, "all_linear").size() == 16);
  for (const Unit* u : of_kind(p, "all_linear")) CHECK(u->setting.size() == 2);
  // The same sweep written in the spec plans the same units.
  const SweepSpec written = f.spec("[0.01, 0.1]", 8, "01:00:00", "",
                                   "sweep:\n  context: [16, 32]\n  experiments.all_linear.bootstrap: [100, 300]\n");
  CHECK(ids_by_slot(make_plan(written)) == ids_by_slot(p));
}

TEST_CASE("a setting's units keep their ids when the sweep's other values change") {
  Fixture f;
  const auto plain = ids_by_slot(make_plan(f.spec()));
  const auto one = ids_by_slot(make_plan(f.spec("[0.01, 0.1]", 8, "01:00:00", "", "sweep:\n  context: [16]\n")));
  for (const auto& [slot, id] : one) CHECK(plain.count(slot) == 1);  // one value: nothing differs, nothing named
  const auto a = ids_by_slot(make_plan(f.spec("[0.01, 0.1]", 8, "01:00:00", "", "sweep:\n  context: [16, 24]\n")));
  const auto b = ids_by_slot(make_plan(f.spec("[0.01, 0.1]", 8, "01:00:00", "", "sweep:\n  context: [32, 16]\n")));
  std::size_t same = 0;
  for (const auto& [slot, id] : a)
    if (slot.find("@context=16") != std::string::npos) same += b.count(slot) && b.at(slot) == id;
  CHECK(same == plain.size());  // every unit reads windows of the context
}

TEST_CASE("sweep keys and values are checked before any work") {
  Fixture f;
  f.spec();
  const std::string spec = f.dir / "spec.yaml";
  auto fails = [&](const std::vector<std::string>& overrides) {
    try {
      load_spec(spec, "", overrides);
    } catch (const SpecError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(fails({"context=16,32"}), ContainsSubstring("add -m"));
  CHECK_THAT(fails({"runtime.batch=choice(1,2)"}),
             ContainsSubstring("only context, layers, splits.* and experiments.*"));
  CHECK_THAT(fails({"context=choice(16,16)"}), ContainsSubstring("lists 16 twice"));
  CHECK_THAT(fails({"context=choice(16,100000)"}), ContainsSubstring("context=100000"));
  CHECK_THAT(fails({"experiments.fit=choice(1,2)"}), ContainsSubstring("experiments.<name>.<key>"));
  CHECK_THAT(fails({"context=choice(16,)"}), ContainsSubstring("empty value"));
  CHECK(multirun_override("context=16,32") == "context=choice(16,32)");
  CHECK(multirun_override("experiments.fit.lambda=[0.1,1]") == "experiments.fit.lambda=[0.1,1]");
  CHECK(multirun_override("experiments.fit.lambda=[0.1],[1]") == "experiments.fit.lambda=choice([0.1],[1])");
  CHECK(multirun_override("~layers") == "~layers");
  const std::string text = f.dir / "sweep.yaml";
  test::write_text(text, test::read_text(spec) + "sweep:\n  context: []\n");
  CHECK_THROWS_WITH(load_spec(text), ContainsSubstring("sweep.context: expected a non-empty list"));
  test::write_text(text, test::read_text(spec) + "sweep:\n  runtime.batch: [1, 2]\n");
  CHECK_THROWS_WITH(load_spec(text), ContainsSubstring("sweep.runtime.batch: only context"));
}
