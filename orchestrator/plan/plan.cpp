// Plan expansion through the experiment registry, and comparison with a store.
#include "orchestrator/plan/plan.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "common/enum_names.hpp"
#include "common/errors.hpp"
#include "experiments/framework/experiment.hpp"
#include "experiments/framework/plan_builder.hpp"
#include "orchestrator/plan/fingerprint.hpp"
#include "storage/setting_columns.hpp"
#include "storage/store.hpp"
#include "storage/store_layout.hpp"

namespace linsweep {
namespace {

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

// "lambda [0.01,0.1] → [0.5], bootstrap 200 → 500": each differing key with its old and new
// value ("unset" where one side lacks it).
std::string changed_values(const nlohmann::json& a, const nlohmann::json& b) {
  std::set<std::string> keys;
  for (auto it = a.begin(); it != a.end(); ++it) keys.insert(it.key());
  for (auto it = b.begin(); it != b.end(); ++it) keys.insert(it.key());
  auto value = [](const nlohmann::json& j, const std::string& k) { return j.contains(k) ? j[k].dump() : "unset"; };
  std::string out;
  for (const auto& k : keys)
    if (!a.contains(k) || !b.contains(k) || a[k] != b[k])
      out += (out.empty() ? "" : ", ") + k + " " + value(a, k) + " → " + value(b, k);
  return out;
}

// Fingerprints of file contents (orchestrator/plan/fingerprint.hpp), the tokenizer's once per model.
Fingerprinter fingerprinter(FileHashCache& files) {
  auto tokenizers = std::make_shared<std::map<std::string, std::string>>();
  return {[&files](const ModelSpec& m) { return model_fingerprint(m.path, files); },
          [&files, tokenizers](const ModelSpec& m, const CorpusSpec& c) {
            auto it = tokenizers->find(m.name);
            if (it == tokenizers->end()) it = tokenizers->emplace(m.name, tokenizer_fingerprint(m.path, files)).first;
            return stream_fingerprint(c.path, c.format, it->second, files);
          }};
}

}  // namespace

FileHashCache fingerprint_cache(const SweepSpec& spec) {
  return FileHashCache(StoreLayout(spec.store).fingerprint_cache());
}

void save_fingerprint_cache(FileHashCache& files, const SweepSpec& spec) {
  if (!std::filesystem::is_regular_file(StoreLayout(spec.store).marker())) return;
  try {
    files.save();
  } catch (const Error& e) {
    std::fprintf(stderr, "warning: fingerprint cache not saved: %s\n", e.what());
  }
}

namespace {

// The units of one sweep (a spec, or one setting of it), in dependency order.
std::vector<Unit> expand(const Sweep& sweep, const Fingerprinter& fingerprints) {
  const auto& registry = ExperimentRegistry::instance();
  PlanNeeds needs;
  for (const ExperimentDef* def : registry.experiments())
    if (const nlohmann::json* params = sweep.requested(def->name); params != nullptr && def->needs)
      def->needs(*params, sweep, needs);
  PlanBuilder builder(sweep, fingerprints, std::move(needs));
  for (const ExperimentDef* def : registry.experiments())
    if (const nlohmann::json* params = sweep.requested(def->name)) def->expand(*params, builder);
  return builder.take_units();
}

// Whether settings a and b differ in `key` alone.
bool differ_only_in(const nlohmann::json& a, const nlohmann::json& b, const std::string& key) {
  for (auto it = a.begin(); it != a.end(); ++it)
    if ((it.key() == key) == (it.value() == b.at(it.key()))) return false;
  return true;
}

// slot -> the swept keys its unit depends on: a key matters when two settings that differ in it
// alone plan different units for the slot. Where settings agreeing on those keys still differ
// (a slot some settings lack), every key matters.
std::map<std::string, std::vector<std::string>> slot_keys(const std::vector<SweepSetting>& settings,
                                                          const std::vector<std::vector<Unit>>& units) {
  std::map<std::string, std::vector<const Unit*>> by_slot;  // slot -> its unit in each setting (or null)
  for (std::size_t s = 0; s < units.size(); ++s)
    for (const Unit& u : units[s]) {
      auto& v = by_slot[u.slot];
      v.resize(settings.size(), nullptr);
      v[s] = &u;
    }
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [slot, per] : by_slot) {
    std::vector<std::string> keys;
    for (auto it = settings[0].values.begin(); it != settings[0].values.end(); ++it) {
      bool matters = false;
      for (std::size_t a = 0; a < per.size() && !matters; ++a)
        for (std::size_t b = a + 1; b < per.size() && !matters; ++b)
          matters = per[a] && per[b] && per[a]->id != per[b]->id &&
                    differ_only_in(settings[a].values, settings[b].values, it.key());
      if (matters) keys.push_back(it.key());
    }
    std::map<std::string, std::string> id_of;  // the settings' values of `keys` -> unit id
    bool consistent = true;
    for (std::size_t a = 0; a < per.size(); ++a) {
      if (!per[a]) continue;
      nlohmann::json sub = nlohmann::json::object();
      for (const auto& k : keys) sub[k] = settings[a].values[k];
      auto [it, fresh] = id_of.emplace(sub.dump(), per[a]->id);
      consistent = consistent && (fresh || it->second == per[a]->id);
    }
    if (!consistent) {
      keys.clear();
      for (auto k = settings[0].values.begin(); k != settings[0].values.end(); ++k) keys.push_back(k.key());
    }
    out[slot] = std::move(keys);
  }
  return out;
}

// The settings' units as one plan: a unit the settings share once, the others with their
// setting in the slot ("…@context=32") and hence their own ids.
std::vector<Unit> merge_settings(const std::vector<SweepSetting>& settings, std::vector<std::vector<Unit>> units) {
  const auto keys = slot_keys(settings, units);
  std::vector<Unit> out;
  std::set<std::string> added;
  for (std::size_t s = 0; s < units.size(); ++s) {
    std::map<std::string, std::string> renamed;  // this setting's planned id -> merged id
    for (Unit& u : units[s]) {
      for (const auto& k : keys.at(u.slot)) u.setting[k] = settings[s].values[k];
      if (!u.setting.empty()) u.slot += "@" + setting_name(u.setting);
      for (auto& d : u.deps) d = renamed.at(d);
      const std::string planned = u.id;
      u.id = unit_content_id(u);
      renamed[planned] = u.id;
      if (added.insert(u.id).second) out.push_back(std::move(u));
    }
  }
  return out;
}

}  // namespace

namespace {

Plan expand_plan(const SweepSpec& spec, const Fingerprinter& fingerprints) {
  Plan plan;
  if (spec.settings.empty()) {
    plan.units = expand(spec, fingerprints);
  } else {
    std::vector<std::vector<Unit>> units;
    for (const auto& s : spec.settings) units.push_back(expand(s.sweep, fingerprints));
    plan.units = merge_settings(spec.settings, std::move(units));
  }
  // Grouped by model, in the spec's order: a single process then loads each model once. Units
  // depend only on units of their own model, so the dependency order holds.
  std::map<std::string, std::size_t> rank;
  for (std::size_t i = 0; i < spec.models.size(); ++i) rank[spec.models[i].name] = i;
  std::stable_sort(plan.units.begin(), plan.units.end(),
                   [&](const Unit& a, const Unit& b) { return rank[a.model] < rank[b.model]; });
  return plan;
}

}  // namespace

Plan make_plan(const SweepSpec& spec, FileHashCache& files) { return expand_plan(spec, fingerprinter(files)); }

Plan make_unfingerprinted_plan(const SweepSpec& spec) {
  const auto none = [](const auto&...) { return std::string("unfingerprinted"); };
  return expand_plan(spec, Fingerprinter{none, none});
}

Plan make_plan(const SweepSpec& spec) {
  FileHashCache files;
  return make_plan(spec, files);
}

// The plan crosses from the coordinator to the workers as JSON: one field list for both ways.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Unit, id, kind, slot, model, corpus, params, inputs, deps, setting)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Plan, units, not_planned)

nlohmann::json plan_to_json(const Plan& plan) { return plan; }

Plan plan_from_json(const nlohmann::json& j) { return j.get<Plan>(); }

const char* unit_state_name(UnitState s) noexcept {
  static constexpr EnumName<UnitState> kNames[] = {
      {UnitState::kDone, "done"}, {UnitState::kPending, "pending"}, {UnitState::kRerun, "rerun"}};
  return enum_name(kNames, s);
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
      if (old["params"] != u.params)
        reason = "spec changed: " + changed_values(old["params"], u.params);
      else if (old["inputs"] != nlohmann::json(u.inputs))
        reason = "input changed: " + changed_keys(old["inputs"], u.inputs);
      else
        reason = "a unit it depends on reruns";
      p.reason = reason;
      rerunning.insert(u.id);
    }
    if (p.state != UnitState::kDone) {
      if (auto f = failures.find(u.id); f != failures.end())
        p.reason += (p.reason.empty() ? "" : "; ") + ("previous attempt failed: " + f->second);
      std::error_code ec;
      if (store != nullptr && std::filesystem::is_directory(store->layout().unit_checkpoints(u.id), ec) &&
          !std::filesystem::is_empty(store->layout().unit_checkpoints(u.id), ec))
        p.reason += std::string(p.reason.empty() ? "" : "; ") + "resumes from its last checkpoint";
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace linsweep
