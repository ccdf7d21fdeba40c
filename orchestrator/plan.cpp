// Plan expansion and comparison with a store.
#include "orchestrator/plan.hpp"

#include <map>
#include <set>

#include "common/errors.hpp"
#include "common/sha256.hpp"
#include "orchestrator/fingerprint.hpp"
#include "storage/store.hpp"
#include "storage/table.hpp"
#include "workers/corpus/corpus.hpp"

namespace linsweep {
namespace {

// Sets the unit's slot (kind/model/corpus, plus `slot_suffix` for kinds with several units
// per model and corpus) and its content id.
void finish(Unit& u, const std::string& slot_suffix = "") {
  u.slot = u.kind + "/" + u.model + "/" + u.corpus + slot_suffix;
  // The slot names the model and corpus, which the unit's rows and surrogate keys carry: two
  // corpora with the same contents (or two names for one model) are still different units.
  const nlohmann::json key = {{"kind", u.kind}, {"slot", u.slot}, {"params", u.params}, {"inputs", u.inputs},
                              {"deps", u.deps}, {"schema", kStoreSchemaVersion}};
  u.id = u.kind + "-" + sha256_hex(key.dump()).substr(0, 24);
}

nlohmann::json split_json(const SweepSpec& spec, const char* name) {
  auto it = spec.splits.find(name);
  if (it == spec.splits.end())
    throw SpecError(spec.file + ": splits." + name + ": missing (needed by the requested experiments)");
  return {{"start", it->second.start}, {"tokens", it->second.tokens}};
}

// The keys whose values differ between two JSON objects.
std::string changed_keys(const nlohmann::json& a, const nlohmann::json& b) {
  std::set<std::string> keys;
  for (auto it = a.begin(); it != a.end(); ++it) keys.insert(it.key());
  for (auto it = b.begin(); it != b.end(); ++it) keys.insert(it.key());
  std::string out;
  for (const auto& k : keys)
    if (!a.contains(k) || !b.contains(k) || a[k] != b[k]) out += (out.empty() ? "" : ", ") + k;
  return out;
}

// `noop` units: `units` empty units per model and corpus, independent of their contents.
void add_noop_units(const SweepSpec& spec, Plan* plan) {
  const auto n = nlohmann::json::parse(spec.experiments.at("noop"))["units"].get<std::int64_t>();
  for (const auto& m : spec.models)
    for (const auto& c : spec.corpora)
      for (std::int64_t i = 0; i < n; ++i) {
        Unit u;
        u.kind = "noop";
        u.model = m.name;
        u.corpus = c.name;
        u.params = {{"index", i}};
        finish(u, "/" + std::to_string(i));
        plan->units.push_back(std::move(u));
      }
}

}  // namespace

std::int64_t Unit::tokens() const {
  if (params.is_object() && params.contains("split") && params["split"].contains("tokens"))
    return params["split"]["tokens"].get<std::int64_t>();
  return 0;
}

std::string Unit::label() const { return kind + " " + model + "/" + corpus; }

std::string Unit::provenance() const {
  return nlohmann::json({{"slot", slot}, {"params", params}, {"inputs", inputs}, {"deps", deps}}).dump();
}

Plan make_plan(const SweepSpec& spec) {
  Plan plan;
  const bool want_fit = spec.experiments.count("fit") > 0;
  const bool want_all_linear = spec.experiments.count("all_linear") > 0;
  for (const auto& name : known_experiments())
    if (spec.experiments.count(name) && name != "fit" && name != "all_linear" && name != "noop") plan.not_planned.push_back(name);
  if (spec.experiments.count("noop")) add_noop_units(spec, &plan);
  if (!want_fit && !want_all_linear) return plan;

  const nlohmann::json fit_params =
      nlohmann::json::parse(want_fit ? spec.experiments.at("fit") : std::string(R"({"lambda":[0.01]})"));
  std::map<std::string, std::string> model_fp, tok_fp;
  for (const auto& m : spec.models) {
    model_fp[m.name] = model_fingerprint(m.path);
    tok_fp[m.name] = tokenizer_fingerprint(m.path);
  }
  for (const auto& m : spec.models) {
    const auto layers = spec.layers.resolve(m.layers);
    for (const auto& c : spec.corpora) {
      const std::string format = c.format.empty() ? corpus_format_name(guess_corpus_format(c.path)) : c.format;
      const std::string stream = stream_fingerprint(c.path, format, tok_fp[m.name]);
      Unit stats;
      stats.kind = "stats";
      stats.model = m.name;
      stats.corpus = c.name;
      stats.params = {{"split", split_json(spec, "fit")}, {"context", spec.context}, {"layers", layers}, {"format", format}};
      stats.inputs = {{"model", model_fp[m.name]}, {"stream", stream}};
      finish(stats);
      Unit fit;
      fit.kind = "fit";
      fit.model = m.name;
      fit.corpus = c.name;
      fit.params = {{"lambda", fit_params["lambda"]}, {"layers", layers}};
      fit.deps = {stats.id};
      finish(fit);
      const std::string fit_id = fit.id;
      plan.units.push_back(std::move(stats));
      plan.units.push_back(std::move(fit));
      if (!want_all_linear) continue;
      nlohmann::json al = nlohmann::json::parse(spec.experiments.at("all_linear"));
      Unit u;
      u.kind = "all_linear";
      u.model = m.name;
      u.corpus = c.name;
      u.params = {{"split", split_json(spec, "eval")}, {"context", spec.context}, {"layers", layers},
                  {"lambda", fit_params["lambda"][0]}, {"bootstrap", al["bootstrap"]}, {"seed", al["seed"]}, {"prefix_cache", al["prefix_cache"]},
                  {"format", format}};
      u.inputs = {{"model", model_fp[m.name]}, {"stream", stream}};
      u.deps = {fit_id};
      finish(u);
      plan.units.push_back(std::move(u));
    }
  }
  return plan;
}

nlohmann::json plan_to_json(const Plan& plan) {
  nlohmann::json units = nlohmann::json::array();
  for (const auto& u : plan.units)
    units.push_back({{"id", u.id}, {"kind", u.kind}, {"slot", u.slot}, {"model", u.model}, {"corpus", u.corpus},
                     {"params", u.params}, {"inputs", u.inputs}, {"deps", u.deps}});
  return {{"units", units}, {"not_planned", plan.not_planned}};
}

Plan plan_from_json(const nlohmann::json& j) {
  Plan p;
  for (const auto& x : j.at("units")) {
    Unit u;
    u.id = x.at("id");
    u.kind = x.at("kind");
    u.slot = x.at("slot");
    u.model = x.at("model");
    u.corpus = x.at("corpus");
    u.params = x.at("params");
    u.inputs = x.at("inputs").get<std::map<std::string, std::string>>();
    u.deps = x.at("deps").get<std::vector<std::string>>();
    p.units.push_back(std::move(u));
  }
  p.not_planned = j.at("not_planned").get<std::vector<std::string>>();
  return p;
}

const char* unit_state_name(UnitState s) noexcept {
  switch (s) {
    case UnitState::kDone: return "done";
    case UnitState::kPending: return "pending";
    case UnitState::kRerun: return "rerun";
  }
  return "?";
}

std::vector<PlannedUnit> plan_status(const Plan& plan, const Store* store) {
  std::set<std::string> committed;
  std::map<std::string, nlohmann::json> by_slot;  // slot -> provenance of a committed unit
  std::map<std::string, std::string> failures;    // unit id -> last error
  if (store != nullptr) {
    for (const auto& id : store->committed_units()) {
      committed.insert(id);
      const auto p = nlohmann::json::parse(store->read_unit_params(id), nullptr, false);
      if (p.is_object() && p.contains("slot")) by_slot[p["slot"].get<std::string>()] = p;
    }
    for (const auto& e : store->journal_events()) {
      if (e.event == "failed") failures[e.unit] = e.error;
      if (e.event == "committed") failures.erase(e.unit);
    }
  }
  std::set<std::string> rerunning;
  std::vector<PlannedUnit> out;
  for (const auto& u : plan.units) {
    PlannedUnit p{&u, UnitState::kPending, ""};
    if (committed.count(u.id)) {
      p.state = UnitState::kDone;
    } else if (auto it = by_slot.find(u.slot); it != by_slot.end()) {
      p.state = UnitState::kRerun;
      const nlohmann::json& old = it->second;
      std::string reason;
      if (old["params"] != u.params) reason = "spec changed: " + changed_keys(old["params"], u.params);
      else if (old["inputs"] != nlohmann::json(u.inputs)) reason = "input changed: " + changed_keys(old["inputs"], u.inputs);
      else reason = "a unit it depends on reruns";
      p.reason = reason;
      rerunning.insert(u.id);
    }
    if (p.state != UnitState::kDone) {
      if (auto f = failures.find(u.id); f != failures.end()) p.reason += (p.reason.empty() ? "" : "; ") + ("previous attempt failed: " + f->second);
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace linsweep
