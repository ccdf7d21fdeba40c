// Plan expansion and comparison with a store.
#include "orchestrator/plan.hpp"

#include <algorithm>
#include <filesystem>
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

std::vector<std::int64_t> experiment_layers(const nlohmann::json& p, const std::vector<std::int64_t>& sweep_layers,
                                            std::int64_t model_layers);
nlohmann::json experiment_params(const SweepSpec& spec, const char* name);

// The measurement experiments' parameters, parsed once per plan (null when not requested).
struct Measurements {
  nlohmann::json gate, token_context, nofly, clusters, compound;
  explicit Measurements(const SweepSpec& spec)
      : gate(experiment_params(spec, "gate")), token_context(experiment_params(spec, "token_context")),
        nofly(experiment_params(spec, "nofly")), clusters(experiment_params(spec, "clusters")),
        compound(experiment_params(spec, "compound")) {}
  // Whether any of them reads captured activations.
  bool need_capture() const { return !gate.is_null() || !token_context.is_null() || !nofly.is_null() || !clusters.is_null(); }
  // The nofly layer of a model: -1 means its middle layer.
  std::int64_t nofly_layer(const ModelSpec& m) const {
    const auto l = nofly["layer"].get<std::int64_t>();
    return l < 0 ? m.layers / 2 : l;
  }
  // The layers of token_context or clusters (empty when not requested).
  std::vector<std::int64_t> layers_of(const nlohmann::json& p, const ModelSpec& m, const std::vector<std::int64_t>& sweep_layers) const {
    return p.is_null() ? std::vector<std::int64_t>{} : experiment_layers(p["layers"], sweep_layers, m.layers);
  }
};

// Layers in middle-out order from the central layer: L/2, L/2−1, L/2+1, L/2−2, ...
std::vector<std::int64_t> middle_out_order(std::int64_t n) {
  std::vector<std::int64_t> out;
  const std::int64_t c = n / 2;
  for (std::int64_t k = 0; static_cast<std::int64_t>(out.size()) < n; ++k) {
    if (c - k >= 0) out.push_back(c - k);
    if (k > 0 && c + k < n) out.push_back(c + k);
  }
  return out;
}

// The training experiments' parameters (null when not requested) and their layers per model.
struct Training {
  nlohmann::json progressive, finetune;
  explicit Training(const SweepSpec& spec)
      : progressive(experiment_params(spec, "progressive")), finetune(experiment_params(spec, "finetune")) {}
  bool wanted() const { return !progressive.is_null() || !finetune.is_null(); }
  static bool applies(const nlohmann::json& p, const ModelSpec& m) {
    return !p.is_null() && (p["model"].get<std::string>().empty() || p["model"].get<std::string>() == m.name);
  }
  // Progressive: the given order, or every layer middle-out.
  std::vector<std::int64_t> order(const ModelSpec& m) const {
    const auto o = progressive["order"].get<std::vector<std::int64_t>>();
    return o.empty() ? middle_out_order(m.layers) : o;
  }
  // Finetune: the given layers, or the first third (at least one) of the middle-out order.
  std::vector<std::int64_t> finetune_layers(const ModelSpec& m) const {
    auto l = finetune["layers"].get<std::vector<std::int64_t>>();
    if (!l.empty()) return l;
    l = middle_out_order(m.layers);
    l.resize(static_cast<std::size_t>(std::max<std::int64_t>(1, m.layers / 3)));
    return l;
  }
  // Every layer a training unit of `m` linearizes (the fit must cover them).
  std::vector<std::int64_t> layers(const ModelSpec& m) const {
    std::vector<std::int64_t> out;
    if (applies(progressive, m)) out = order(m);
    if (applies(finetune, m)) {
      const auto f = finetune_layers(m);
      out.insert(out.end(), f.begin(), f.end());
    }
    return out;
  }
};

// The layers the stats, fit and capture units cover: the sweep's, plus every layer of a
// measurement experiment outside them (token_context and clusters layers, the nofly layer).
std::vector<std::int64_t> covered_layers(const Measurements& x, const ModelSpec& m, const std::vector<std::int64_t>& sweep_layers) {
  std::set<std::int64_t> out(sweep_layers.begin(), sweep_layers.end());
  for (const nlohmann::json* p : {&x.token_context, &x.clusters}) {
    const auto l = x.layers_of(*p, m, sweep_layers);
    out.insert(l.begin(), l.end());
  }
  if (!x.nofly.is_null()) out.insert(x.nofly_layer(m));
  return {out.begin(), out.end()};
}

// The capture unit of (model, corpus) and the units that read its shards: gate (per layer),
// token_context and clusters (per layer of their own selection), compound. Returns the
// capture unit's id (nofly, per model, is added by the caller).
std::string add_capture_units(const SweepSpec& spec, const Measurements& x, const ModelSpec& m, const std::string& corpus,
                              const std::string& format, const std::vector<std::int64_t>& sweep_layers,
                              const std::vector<std::int64_t>& layers, const std::map<std::string, std::string>& inputs,
                              const std::string& fit_id, const nlohmann::json& lambda, Plan* plan) {
  const nlohmann::json &gate_p = x.gate, &tc_p = x.token_context, &clusters_p = x.clusters, &compound_p = x.compound;
  const std::vector<std::int64_t> gate_layers = gate_p.is_null() ? std::vector<std::int64_t>{} : sweep_layers;
  const auto tc_layers = x.layers_of(tc_p, m, sweep_layers);
  const auto cl_layers = x.layers_of(clusters_p, m, sweep_layers);
  // What is captured must not depend on which experiment reads it, so that changing one
  // experiment's layers or adding one reruns only that experiment: every layer of the sweep
  // plus any experiment layer outside it, and every one of the gate, select and eval splits
  // the spec defines.
  Unit cap;
  cap.kind = "capture";
  cap.model = m.name;
  cap.corpus = corpus;
  nlohmann::json splits = {{"gate", split_json(spec, "gate")}};
  for (const char* name : {"select", "eval"})
    if (spec.splits.count(name)) splits[name] = split_json(spec, name);
  cap.params = {{"splits", splits}, {"context", spec.context}, {"layers", layers},
                {"lambda", lambda}, {"format", format}, {"activation_dtype", spec.runtime.activation_dtype}};
  cap.inputs = inputs;
  cap.deps = {fit_id};
  finish(cap);
  const std::string cap_id = cap.id;
  plan->units.push_back(std::move(cap));

  auto layer_unit = [&](const char* kind, std::int64_t layer, nlohmann::json params, std::vector<std::string> deps) {
    Unit u;
    u.kind = kind;
    u.model = m.name;
    u.corpus = corpus;
    params["layer"] = layer;
    u.params = std::move(params);
    u.inputs = inputs;
    u.deps = std::move(deps);
    finish(u, "/layer" + std::to_string(layer));
    plan->units.push_back(u);
    return u.id;
  };
  std::vector<std::string> gate_ids;
  for (std::int64_t layer : gate_layers) {
    nlohmann::json p = gate_p;
    p["split"] = split_json(spec, "eval");
    p["context"] = spec.context;
    p["lambda"] = lambda;
    p["format"] = format;
    gate_ids.push_back(layer_unit("gate", layer, p, {cap_id, fit_id}));
  }
  for (std::int64_t layer : tc_layers) {
    nlohmann::json p = tc_p;
    p.erase("layers");
    layer_unit("token_context", layer, p, {cap_id});
  }
  for (std::int64_t layer : cl_layers) {
    nlohmann::json p = clusters_p;
    p.erase("layers");
    layer_unit("clusters", layer, p, {cap_id});
  }
  if (!compound_p.is_null() && !gate_layers.empty()) {
    Unit u;
    u.kind = "compound";
    u.model = m.name;
    u.corpus = corpus;
    u.params = compound_p;
    u.params["layers"] = gate_layers;
    u.params["split"] = split_json(spec, "eval");
    u.params["context"] = spec.context;
    u.params["lambda"] = lambda;
    u.params["format"] = format;
    u.inputs = inputs;
    u.deps = {fit_id};
    u.deps.insert(u.deps.end(), gate_ids.begin(), gate_ids.end());
    finish(u);
    plan->units.push_back(std::move(u));
  }
  return cap_id;
}

// The layers of an experiment's `layers` parameter: "all" means the sweep's layers.
std::vector<std::int64_t> experiment_layers(const nlohmann::json& p, const std::vector<std::int64_t>& sweep_layers,
                                            std::int64_t model_layers) {
  if (p.is_string() && p.get<std::string>() == "all") return sweep_layers;
  LayerSelection sel;
  sel.all = false;
  for (const auto& x : p) {
    if (x.is_number_integer()) {
      sel.ranges.emplace_back(x.get<std::int64_t>(), x.get<std::int64_t>());
    } else {
      const std::string r = x.get<std::string>();
      const auto dash = r.find('-');
      sel.ranges.emplace_back(std::stoll(r.substr(0, dash)), std::stoll(r.substr(dash + 1)));
    }
  }
  return sel.resolve(model_layers);
}

nlohmann::json experiment_params(const SweepSpec& spec, const char* name) {
  auto it = spec.experiments.find(name);
  return it == spec.experiments.end() ? nlohmann::json() : nlohmann::json::parse(it->second);
}

// progressive (per model) and finetune (per model and variant, the control always included):
// trained on the train split of `corpus` (default: the first corpus), evaluated on the eval
// split of every eval corpus (default: all), with the surrogates of the fit on `corpus`.
void add_training_units(const SweepSpec& spec, const Training& t, const ModelSpec& m, const std::map<std::string, std::string>& fit_ids,
                        const std::map<std::string, std::string>& streams, const std::string& model_fp, const nlohmann::json& lambda,
                        Plan* plan) {
  auto base = [&](const nlohmann::json& p, const char* kind) {
    Unit u;
    u.kind = kind;
    u.model = m.name;
    u.corpus = p["corpus"].get<std::string>().empty() ? spec.corpora.front().name : p["corpus"].get<std::string>();
    u.params = p;
    for (const char* k : {"model", "corpus", "eval_corpora", "order", "layers", "variants"}) u.params.erase(k);
    u.params["train"] = split_json(spec, "train");
    u.params["context"] = spec.context;
    u.params["lambda"] = lambda;
    nlohmann::json evals = nlohmann::json::array();
    std::vector<std::string> names;
    for (const auto& c : p["eval_corpora"]) names.push_back(c.get<std::string>());
    if (names.empty())
      for (const auto& c : spec.corpora) names.push_back(c.name);
    u.inputs = {{"model", model_fp}, {"stream", streams.at(u.corpus)}};
    for (const auto& n : names) {
      evals.push_back({{"corpus", n}, {"split", split_json(spec, "eval")}});
      u.inputs["stream:" + n] = streams.at(n);
    }
    u.params["eval"] = evals;
    return u;
  };
  if (Training::applies(t.progressive, m)) {
    Unit u = base(t.progressive, "progressive");
    u.params["order"] = t.order(m);
    u.deps = {fit_ids.at(u.corpus)};
    finish(u);
    plan->units.push_back(std::move(u));
  }
  if (Training::applies(t.finetune, m)) {
    std::vector<std::string> variants;
    for (const auto& v : t.finetune["variants"]) variants.push_back(v.get<std::string>());
    if (std::find(variants.begin(), variants.end(), "control") == variants.end()) variants.push_back("control");
    for (const auto& v : variants) {
      Unit u = base(t.finetune, "finetune");
      u.params["variant"] = v;
      if (v != "two_phase")
        for (const char* k : {"phase1_fraction", "gate_hidden", "gate_bias", "gate_lr", "l1", "l1_warmup"}) u.params.erase(k);
      if (v == "control") u.params.erase("lambda");
      if (v != "control") {
        u.params["layers"] = t.finetune_layers(m);
        u.deps = {fit_ids.at(u.corpus)};
      }
      finish(u, "/" + v);
      plan->units.push_back(std::move(u));
    }
  }
}

}  // namespace

std::int64_t Unit::tokens() const {
  if (!params.is_object()) return 0;
  if (params.contains("split") && params["split"].contains("tokens")) return params["split"]["tokens"].get<std::int64_t>();
  std::int64_t sum = 0;  // capture units read several splits
  if (params.contains("splits"))
    for (const auto& [name, split] : params["splits"].items()) sum += split.value("tokens", std::int64_t{0});
  return sum;
}

std::string Unit::label() const {
  // The slot without its kind: "tiny-gpt2/stream-a", or ".../layer3" for per-layer units.
  return kind + " " + (slot.size() > kind.size() + 1 ? slot.substr(kind.size() + 1) : model + "/" + corpus);
}

std::string Unit::provenance() const {
  return nlohmann::json({{"slot", slot}, {"params", params}, {"inputs", inputs}, {"deps", deps}}).dump();
}

Plan make_plan(const SweepSpec& spec) {
  Plan plan;
  const bool want_fit = spec.experiments.count("fit") > 0;
  const bool want_all_linear = spec.experiments.count("all_linear") > 0;
  const Measurements measure(spec);
  const nlohmann::json& nofly_p = measure.nofly;
  const bool want_capture = measure.need_capture();
  const Training training(spec);
  if (spec.experiments.count("noop")) add_noop_units(spec, &plan);
  if (!measure.compound.is_null() && measure.gate.is_null())
    throw SpecError(spec.file + ": experiments.compound: needs experiments.gate (it combines every layer's chosen gate)");
  std::string nofly_source;
  std::vector<std::string> nofly_targets;
  if (!nofly_p.is_null()) {
    nofly_source = nofly_p["source"].get<std::string>();
    if (nofly_source.empty()) nofly_source = spec.corpora.front().name;
    for (const auto& t : nofly_p["targets"]) nofly_targets.push_back(t.get<std::string>());
    if (nofly_targets.empty())
      for (const auto& c : spec.corpora)
        if (c.name != nofly_source) nofly_targets.push_back(c.name);
    if (nofly_targets.empty())
      throw SpecError(spec.file + ": experiments.nofly: needs a target corpus other than its source '" + nofly_source + "'");
    for (const auto& t : nofly_targets)
      if (t == nofly_source) throw SpecError(spec.file + ": experiments.nofly.targets: '" + t + "' is also the source corpus");
  }
  if (!want_fit && !want_all_linear && !want_capture && !training.wanted()) return plan;

  const nlohmann::json fit_params =
      nlohmann::json::parse(want_fit ? spec.experiments.at("fit") : std::string(R"({"lambda":[0.01]})"));
  std::map<std::string, std::string> model_fp, tok_fp;
  for (const auto& m : spec.models) {
    model_fp[m.name] = model_fingerprint(m.path);
    tok_fp[m.name] = tokenizer_fingerprint(m.path);
  }
  for (const auto& m : spec.models) {
    const auto layers = spec.layers.resolve(m.layers);
    const auto fit_layers = want_capture ? covered_layers(measure, m, layers) : layers;
    std::map<std::string, std::string> capture_ids;  // corpus -> capture unit
    std::map<std::string, std::string> fit_ids, streams;  // corpus -> fit unit, stream fingerprint
    for (const auto& c : spec.corpora) {
      const std::string format = c.format.empty() ? corpus_format_name(guess_corpus_format(c.path)) : c.format;
      const std::string stream = stream_fingerprint(c.path, format, tok_fp[m.name]);
      Unit stats;
      stats.kind = "stats";
      stats.model = m.name;
      stats.corpus = c.name;
      stats.params = {{"split", split_json(spec, "fit")}, {"context", spec.context}, {"layers", fit_layers}, {"format", format}};
      stats.inputs = {{"model", model_fp[m.name]}, {"stream", stream}};
      finish(stats);
      Unit fit;
      fit.kind = "fit";
      fit.model = m.name;
      fit.corpus = c.name;
      fit.params = {{"lambda", fit_params["lambda"]}, {"layers", fit_layers}};
      fit.deps = {stats.id};
      finish(fit);
      const std::string fit_id = fit.id;
      fit_ids[c.name] = fit_id;
      streams[c.name] = stream;
      plan.units.push_back(std::move(stats));
      plan.units.push_back(std::move(fit));
      if (want_capture)
        capture_ids[c.name] = add_capture_units(spec, measure, m, c.name, format, layers, fit_layers,
                                                {{"model", model_fp[m.name]}, {"stream", stream}}, fit_id, fit_params["lambda"][0], &plan);
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
    if (training.wanted()) {
      // Training units use the sweep's fit when it covers their layers; otherwise a fit of their
      // own, so that adding a training experiment never changes the measurement units' ids.
      const auto train_layers = training.layers(m);
      const std::set<std::int64_t> covered(fit_layers.begin(), fit_layers.end());
      bool inside = true;
      for (std::int64_t l : train_layers) inside = inside && covered.count(l) > 0;
      std::map<std::string, std::string> train_fit_ids = fit_ids;
      if (!inside) {
        const std::set<std::int64_t> own(train_layers.begin(), train_layers.end());
        for (const auto& c : spec.corpora) {
          const Unit* main_stats = nullptr;
          for (const auto& u : plan.units)
            if (u.kind == "stats" && u.model == m.name && u.corpus == c.name) main_stats = &u;
          Unit stats = *main_stats;
          stats.params["layers"] = std::vector<std::int64_t>(own.begin(), own.end());
          finish(stats, "/training");
          Unit fit;
          fit.kind = "fit";
          fit.model = m.name;
          fit.corpus = c.name;
          fit.params = {{"lambda", fit_params["lambda"]}, {"layers", stats.params["layers"]}, {"report", false}};
          fit.deps = {stats.id};
          finish(fit, "/training");
          train_fit_ids[c.name] = fit.id;
          plan.units.push_back(std::move(stats));
          plan.units.push_back(std::move(fit));
        }
      }
      add_training_units(spec, training, m, train_fit_ids, streams, model_fp[m.name], fit_params["lambda"][0], &plan);
    }
    if (!nofly_p.is_null()) {
      Unit u;
      u.kind = "nofly";
      u.model = m.name;
      u.corpus = nofly_source;
      const std::int64_t layer = measure.nofly_layer(m);
      nlohmann::json corpora = {nofly_source};
      u.deps = {capture_ids.at(nofly_source)};
      for (const auto& t : nofly_targets) corpora.push_back(t), u.deps.push_back(capture_ids.at(t));
      u.params = {{"layer", layer}, {"corpora", corpora}};
      for (const char* k : {"min_count", "min_found", "min_mean_delta", "min_positive"}) u.params[k] = nofly_p[k];
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
      std::error_code ec;
      if (store != nullptr && std::filesystem::is_directory(store->dir() + "/checkpoints/" + u.id, ec) &&
          !std::filesystem::is_empty(store->dir() + "/checkpoints/" + u.id, ec))
        p.reason += std::string(p.reason.empty() ? "" : "; ") + "resumes from its last checkpoint";
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace linsweep
