// Spec parsing with yaml-cpp: every field typed, defaulted and validated with its line.
#include "orchestrator/spec.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "common/path_confinement.hpp"
#include "slurm/batch_script.hpp"
#include "workers/corpus/corpus.hpp"
#include "workers/corpus/npy.hpp"
#include "workers/model/model_config.hpp"

namespace linsweep {
namespace {

constexpr std::size_t kMaxSpecBytes = 4u << 20;

// Where a node sits in the file, for messages.
class Ctx {
 public:
  Ctx(std::string file) : file_(std::move(file)) {}
  [[noreturn]] void fail(const YAML::Node& node, const std::string& field, const std::string& problem) const {
    const int line = node.IsDefined() ? node.Mark().line + 1 : 0;
    // Keys and values are quoted from the file: escaped, so that a newline in one cannot cut
    // the message short (main prints one line).
    throw SpecError(file_ + (line > 0 ? ":" + std::to_string(line) : "") + ": " + printable(field) + ": " + printable(problem));
  }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

void only_keys(const Ctx& ctx, const YAML::Node& map, const std::string& field, const std::set<std::string>& allowed) {
  if (!map.IsMap()) ctx.fail(map, field, "expected a mapping");
  for (const auto& kv : map) {
    // YAML allows null, sequence and mapping keys (`? [a, b]`, `{&x : 1}`); as<std::string>()
    // would throw yaml-cpp's own exception for them.
    if (!kv.first.IsScalar()) ctx.fail(kv.first, field.empty() ? "key" : field, "expected a key that is a string");
    const std::string key = kv.first.as<std::string>();
    if (allowed.count(key) == 0) {
      std::string known;
      for (const auto& k : allowed) known += (known.empty() ? "" : ", ") + k;
      ctx.fail(kv.first, field.empty() ? key : field + "." + key, "unknown key (known: " + known + ")");
    }
  }
}

std::int64_t get_int(const Ctx& ctx, const YAML::Node& n, const std::string& field, std::int64_t lo, std::int64_t hi) {
  std::int64_t v = 0;
  if (!n.IsScalar() || !YAML::convert<std::int64_t>::decode(n, v)) ctx.fail(n, field, "expected an integer");
  if (v < lo || v > hi) ctx.fail(n, field, std::to_string(v) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
  return v;
}

double get_double(const Ctx& ctx, const YAML::Node& n, const std::string& field) {
  double v = 0;
  if (!n.IsScalar() || !YAML::convert<double>::decode(n, v) || !std::isfinite(v)) ctx.fail(n, field, "expected a number");
  return v;
}

std::string get_string(const Ctx& ctx, const YAML::Node& n, const std::string& field) {
  if (!n.IsScalar()) ctx.fail(n, field, "expected a string");
  return n.as<std::string>();
}

bool get_bool(const Ctx& ctx, const YAML::Node& n, const std::string& field) {
  bool v = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) ctx.fail(n, field, "expected true or false");
  return v;
}

std::string resolve_path(const std::string& spec_file, const std::string& p) {
  if (p.empty() || p[0] == '/') return p;
  const auto base = std::filesystem::path(spec_file).parent_path();
  return (base / p).lexically_normal().string();
}

// `all`, or a list of layer numbers and "a-b" ranges.
LayerSelection get_layers(const Ctx& ctx, const YAML::Node& n, const std::string& field) {
  LayerSelection sel;
  if (n.IsScalar() && n.as<std::string>() == "all") return sel;
  if (!n.IsSequence() || n.size() == 0) ctx.fail(n, field, "expected `all` or a non-empty list of layers and \"a-b\" ranges");
  sel.all = false;
  for (const auto& item : n) {
    std::int64_t v = 0;
    if (item.IsScalar() && YAML::convert<std::int64_t>::decode(item, v)) {
      if (v < 0) ctx.fail(item, field, "layer " + std::to_string(v) + " is negative");
      sel.ranges.emplace_back(v, v);
      continue;
    }
    const std::string s = item.IsScalar() ? item.as<std::string>() : "";
    const auto dash = s.find('-');
    std::int64_t a = -1, b = -1;
    try {
      if (dash != std::string::npos && dash > 0) {
        std::size_t ea = 0, eb = 0;
        a = std::stoll(s.substr(0, dash), &ea);
        b = std::stoll(s.substr(dash + 1), &eb);
        if (ea != dash || eb != s.size() - dash - 1) a = -1;
      }
    } catch (const std::exception&) {
      a = -1;
    }
    if (a < 0 || b < a) ctx.fail(item, field, "'" + s + "' is not a layer or an ascending \"a-b\" range");
    sel.ranges.emplace_back(a, b);
  }
  return sel;
}

// Experiment parameters: type, default, and checks.
enum class P { kFloat, kInt, kString, kBool, kFloats, kInts, kStrings, kLayers, kCorpus, kCorpora };

struct Param {
  const char* key;
  P type;
  nlohmann::json fallback;
};

struct ExperimentSchema {
  const char* name;
  std::vector<Param> params;
};

const std::vector<ExperimentSchema>& experiment_schemas() {
  static const std::vector<ExperimentSchema> s = {
      {"fit", {{"lambda", P::kFloats, {0.01}}}},
      {"all_linear", {{"bootstrap", P::kInt, 1000}, {"seed", P::kInt, 0}, {"prefix_cache", P::kBool, true}}},
      {"gate",
       {{"variants", P::kStrings, {"linear"}}, {"seed", P::kInt, 0}, {"holdout", P::kFloat, 0.3}, {"bootstrap", P::kInt, 1000},
        {"mlp_epochs", P::kInt, 300}}},
      {"token_context", {{"layers", P::kLayers, "all"}, {"seed", P::kInt, 0}, {"holdout", P::kFloat, 0.3}}},
      {"nofly",
       {{"layer", P::kInt, -1}, {"source", P::kCorpus, ""}, {"targets", P::kCorpora, nlohmann::json::array()},
        {"min_count", P::kInt, 10}, {"min_found", P::kInt, 3}, {"min_mean_delta", P::kFloat, 0.05}, {"min_positive", P::kFloat, 0.6}}},
      {"clusters",
       {{"layers", P::kLayers, "all"}, {"pca", P::kInt, 50}, {"k", P::kInt, 20}, {"n_init", P::kInt, 10}, {"seed", P::kInt, 0},
        {"holdout", P::kFloat, 0.3}}},
      {"compound", {{"bootstrap", P::kInt, 1000}, {"seed", P::kInt, 0}}},
      {"progressive",
       {{"model", P::kString, ""}, {"corpus", P::kCorpus, ""}, {"eval_corpora", P::kCorpora, nlohmann::json::array()},
        {"order", P::kInts, nlohmann::json::array()}, {"steps_per_layer", P::kInt, 50}, {"final_steps", P::kInt, 200},
        {"lr", P::kFloat, 5e-6}, {"weight_decay", P::kFloat, 0.01}, {"clip", P::kFloat, 1.0}, {"batch", P::kInt, 8},
        {"warmup", P::kInt, 0}, {"seed", P::kInt, 0}, {"trainable", P::kStrings, {"attention", "mlp", "layernorm", "head"}},
        {"checkpoint_every", P::kInt, 100}, {"save_model", P::kBool, true}}},
      {"finetune",
       {{"model", P::kString, ""}, {"corpus", P::kCorpus, ""}, {"eval_corpora", P::kCorpora, nlohmann::json::array()},
        {"layers", P::kInts, nlohmann::json::array()}, {"steps", P::kInt, 2000}, {"variants", P::kStrings, {"linearized"}},
        {"lr", P::kFloat, 5e-6}, {"weight_decay", P::kFloat, 0.01}, {"clip", P::kFloat, 1.0}, {"batch", P::kInt, 8},
        {"warmup", P::kInt, 0}, {"seed", P::kInt, 0}, {"trainable", P::kStrings, {"attention", "mlp", "layernorm", "head"}},
        {"eval_every", P::kInt, 0}, {"checkpoint_every", P::kInt, 100}, {"save_model", P::kBool, true},
        {"phase1_fraction", P::kFloat, 0.5}, {"gate_hidden", P::kInt, 32}, {"gate_bias", P::kFloat, -3.0},
        {"gate_lr", P::kFloat, 1e-3}, {"l1", P::kFloat, 0.01}, {"l1_warmup", P::kFloat, 0.1}}},
      {"noop", {{"units", P::kInt, 1}}},  // diagnostic: empty units per model and corpus
  };
  return s;
}

nlohmann::json layers_json(const LayerSelection& sel) {
  if (sel.all) return "all";
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [a, b] : sel.ranges) out.push_back(a == b ? nlohmann::json(a) : nlohmann::json(std::to_string(a) + "-" + std::to_string(b)));
  return out;
}

nlohmann::json parse_param(const Ctx& ctx, const YAML::Node& n, const std::string& field, P type,
                           const std::set<std::string>& corpora) {
  auto list = [&](const std::function<nlohmann::json(const YAML::Node&)>& one) {
    nlohmann::json out = nlohmann::json::array();
    if (n.IsSequence()) {
      for (const auto& item : n) out.push_back(one(item));
    } else {
      out.push_back(one(n));
    }
    return out;
  };
  auto corpus = [&](const YAML::Node& x) {
    const std::string c = get_string(ctx, x, field);
    if (corpora.count(c) == 0) ctx.fail(x, field, "'" + c + "' is not a corpus of this spec");
    return nlohmann::json(c);
  };
  switch (type) {
    case P::kFloat: return get_double(ctx, n, field);
    case P::kInt: return get_int(ctx, n, field, -1, std::int64_t{1} << 40);
    case P::kString: return get_string(ctx, n, field);
    case P::kBool: return get_bool(ctx, n, field);
    case P::kFloats: return list([&](const YAML::Node& x) { return nlohmann::json(get_double(ctx, x, field)); });
    case P::kInts: return list([&](const YAML::Node& x) { return nlohmann::json(get_int(ctx, x, field, 0, 1 << 20)); });
    case P::kStrings: return list([&](const YAML::Node& x) { return nlohmann::json(get_string(ctx, x, field)); });
    case P::kLayers: return layers_json(get_layers(ctx, n, field));
    case P::kCorpus: return corpus(n);
    case P::kCorpora: return list(corpus);
  }
  return nullptr;
}

// Value checks beyond types: gate variant names, fractions, sizes, layers and corpora.
void check_values(const Ctx& ctx, const std::string& name, const YAML::Node& params, const nlohmann::json& j,
                  const SweepSpec& spec) {
  auto fail = [&](const char* key, const std::string& msg) {
    ctx.fail(params[key] ? params[key] : params, "experiments." + name + "." + key, msg);
  };
  if (j.contains("holdout") && !(j["holdout"].get<double>() > 0 && j["holdout"].get<double>() < 1))
    fail("holdout", "expected a fraction between 0 and 1");
  for (const char* key : {"pca", "k", "n_init", "bootstrap", "mlp_epochs", "min_count", "min_found"})
    if (j.contains(key) && j[key].get<std::int64_t>() < 1) fail(key, "expected at least 1");
  if (name == "gate") {
    if (j["variants"].empty()) fail("variants", "expected at least one gate variant");
    for (const auto& v : j["variants"]) {
      const std::string t = v.get<std::string>();
      const auto colon = t.find(':');
      const std::string kind = t.substr(0, colon), size = colon == std::string::npos ? "" : t.substr(colon + 1);
      const bool sized = (kind == "pca" || kind == "mlp") && !size.empty() && size.size() <= 7 && size[0] != '0' &&
                         size.find_first_not_of("0123456789") == std::string::npos && std::stoll(size) <= (1 << 20);
      if (t != "linear" && !sized) fail("variants", "'" + t + "' is not a gate variant (linear, pca:K or mlp:H, 1 ≤ K, H ≤ 1048576)");
    }
    std::set<std::string> distinct;
    for (const auto& v : j["variants"]) distinct.insert(v.get<std::string>());
    if (distinct.size() != j["variants"].size()) fail("variants", "lists a gate variant twice");
  }
  if (name == "progressive" || name == "finetune") {
    for (const char* key : {"batch", "gate_hidden"})
      if (j.contains(key) && j[key].get<std::int64_t>() < 1) fail(key, "expected at least 1");
    for (const char* key : {"steps_per_layer", "final_steps", "steps", "warmup", "eval_every", "checkpoint_every"})
      if (j.contains(key) && j[key].get<std::int64_t>() < 0) fail(key, "expected 0 or more");
    for (const char* key : {"lr", "gate_lr"})
      if (j.contains(key) && !(j[key].get<double>() > 0)) fail(key, "expected a positive learning rate");
    for (const char* key : {"weight_decay", "clip", "l1"})
      if (j.contains(key) && j[key].get<double>() < 0) fail(key, "expected 0 or more");
    for (const char* key : {"phase1_fraction", "l1_warmup"})
      if (j.contains(key) && !(j[key].get<double>() >= 0 && j[key].get<double>() <= 1)) fail(key, "expected a fraction between 0 and 1");
    const std::set<std::string> known_groups = {"attention", "mlp", "layernorm", "head", "embeddings"};
    for (const auto& g : j["trainable"])
      if (!known_groups.count(g.get<std::string>()))
        fail("trainable", "'" + g.get<std::string>() + "' is not a parameter group (attention, mlp, layernorm, head, embeddings)");
    const std::string model = j["model"].get<std::string>();
    bool found = model.empty();
    for (const auto& m : spec.models) {
      if (!model.empty() && m.name != model) continue;
      found = true;
      for (const char* key : {"order", "layers"})
        if (j.contains(key))
          for (const auto& l : j[key])
            if (l.get<std::int64_t>() >= m.layers)
              fail(key, "layer " + std::to_string(l.get<std::int64_t>()) + " is outside model '" + m.name + "'");
    }
    if (!found) fail("model", "'" + model + "' is not a model of this spec");
    for (const char* key : {"order", "layers"})
      if (j.contains(key)) {
        std::set<std::int64_t> distinct;
        for (const auto& l : j[key]) distinct.insert(l.get<std::int64_t>());
        if (distinct.size() != j[key].size()) fail(key, "lists a layer twice");
      }
    if (name == "finetune") {
      std::set<std::string> distinct;
      for (const auto& v : j["variants"]) {
        const std::string t = v.get<std::string>();
        if (t != "linearized" && t != "two_phase" && t != "control")
          fail("variants", "'" + t + "' is not a finetune variant (linearized, two_phase; the control is always run)");
        if (!distinct.insert(t).second) fail("variants", "lists a variant twice");
      }
    }
  }
  if (name == "nofly") {
    const auto layer = j["layer"].get<std::int64_t>();
    if (layer < -1) fail("layer", "expected a layer, or -1 for each model's middle layer");
    for (const auto& m : spec.models)
      if (layer >= m.layers) fail("layer", "layer " + std::to_string(layer) + " is outside model '" + m.name + "'");
    for (const auto& t : j["targets"])
      if (t == j["source"]) fail("targets", "the source corpus cannot be its own target");
  }
}

}  // namespace

std::vector<std::int64_t> LayerSelection::resolve(std::int64_t n) const {
  std::vector<std::int64_t> out;
  if (all) {
    for (std::int64_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  for (const auto& [a, b] : ranges)
    for (std::int64_t i = a; i <= b && i < n; ++i) out.push_back(i);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

const std::vector<std::string>& known_experiments() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& e : experiment_schemas()) v.push_back(e.name);
    return v;
  }();
  return names;
}

namespace {

SweepSpec read_spec(const std::string& path, const std::string& store_override) {
  const Ctx ctx(path);
  SweepSpec spec;
  spec.file = path;
  spec.text = read_file(path, kMaxSpecBytes);
  require_utf8(spec.text, path);
  YAML::Node root;
  try {
    root = YAML::Load(spec.text);
  } catch (const YAML::Exception& e) {
    throw SpecError(path + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML: " + e.msg);
  }
  if (!root.IsMap()) throw SpecError(path + ": the spec must be a YAML mapping");
  only_keys(ctx, root, "", {"store", "context", "models", "corpora", "splits", "layers", "experiments", "runtime", "resources"});

  if (root["store"]) spec.store = resolve_path(path, get_string(ctx, root["store"], "store"));
  if (!store_override.empty()) spec.store = store_override;
  if (spec.store.empty()) ctx.fail(root, "store", "missing (or pass --store)");
  if (std::error_code ec; std::filesystem::exists(spec.store, ec) && !is_directory(spec.store)) {
    if (!store_override.empty()) throw SpecError("--store " + printable(spec.store) + ": exists and is not a directory");
    ctx.fail(root["store"], "store", "'" + spec.store + "' exists and is not a directory");
  }
  if (root["context"]) spec.context = get_int(ctx, root["context"], "context", 2, 1 << 20);

  // models
  const YAML::Node models = root["models"];
  if (!models || !models.IsSequence() || models.size() == 0) ctx.fail(models ? models : root, "models", "expected a non-empty list");
  std::set<std::string> names;
  for (std::size_t i = 0; i < models.size(); ++i) {
    const YAML::Node m = models[i];
    const std::string f = "models[" + std::to_string(i) + "]";
    only_keys(ctx, m, f, {"name", "path", "dtype"});
    ModelSpec ms;
    if (!m["name"]) ctx.fail(m, f + ".name", "missing");
    if (!m["path"]) ctx.fail(m, f + ".path", "missing");
    ms.name = get_string(ctx, m["name"], f + ".name");
    // Model names become directory names (STORE/models/<name>.<variant>) and HDF5 group names.
    if (const std::string why = unsafe_name_reason(ms.name); !why.empty()) ctx.fail(m["name"], f + ".name", "'" + ms.name + "' " + why);
    if (!names.insert(ms.name).second) ctx.fail(m["name"], f + ".name", "duplicate model name '" + ms.name + "'");
    ms.path = resolve_path(path, get_string(ctx, m["path"], f + ".path"));
    if (m["dtype"]) {
      ms.dtype = get_string(ctx, m["dtype"], f + ".dtype");
      if (*ms.dtype != "float32" && *ms.dtype != "bfloat16" && *ms.dtype != "float16")
        ctx.fail(m["dtype"], f + ".dtype", "expected float32, bfloat16 or float16");
    }
    try {
      const ModelConfig c = read_model_config(ms.path);
      ms.layers = c.n_layers;
      ms.max_positions = c.max_positions;
    } catch (const Error& e) {
      ctx.fail(m["path"], f + ".path", e.what());
    }
    if (root["context"] && spec.context > ms.max_positions)
      ctx.fail(root["context"] ? root["context"] : m, "context",
               std::to_string(spec.context) + " is longer than model '" + ms.name + "' allows (" +
                   std::to_string(ms.max_positions) + " positions)");
    spec.models.push_back(std::move(ms));
  }
  if (!root["context"])  // the default fits every model
    for (const auto& m : spec.models) spec.context = std::min(spec.context, m.max_positions);

  // corpora
  const YAML::Node corpora = root["corpora"];
  if (!corpora || !corpora.IsSequence() || corpora.size() == 0) ctx.fail(corpora ? corpora : root, "corpora", "expected a non-empty list");
  std::set<std::string> corpus_names;
  for (std::size_t i = 0; i < corpora.size(); ++i) {
    const YAML::Node c = corpora[i];
    const std::string f = "corpora[" + std::to_string(i) + "]";
    only_keys(ctx, c, f, {"name", "path", "format"});
    if (!c["name"]) ctx.fail(c, f + ".name", "missing");
    if (!c["path"]) ctx.fail(c, f + ".path", "missing");
    CorpusSpec cs;
    cs.name = get_string(ctx, c["name"], f + ".name");
    if (const std::string why = unsafe_name_reason(cs.name); !why.empty()) ctx.fail(c["name"], f + ".name", "'" + cs.name + "' " + why);
    if (!corpus_names.insert(cs.name).second) ctx.fail(c["name"], f + ".name", "duplicate corpus name '" + cs.name + "'");
    cs.path = resolve_path(path, get_string(ctx, c["path"], f + ".path"));
    if (!is_regular_file(cs.path) && !is_directory(cs.path)) ctx.fail(c["path"], f + ".path", "'" + cs.path + "' does not exist");
    cs.format = c["format"] ? get_string(ctx, c["format"], f + ".format") : "";
    static const std::set<std::string> formats = {"text", "wikitext", "lambada", "brown", "npy"};
    if (!cs.format.empty() && formats.count(cs.format) == 0)
      ctx.fail(c["format"], f + ".format", "'" + cs.format + "' is unknown (text, wikitext, lambada, brown, npy)");
    // A token stream's header is checked now (a few bytes), so that a broken .npy fails the
    // spec instead of every unit that reads it; text corpora are checked when tokenized.
    if (cs.format == "npy" || (cs.format.empty() && guess_corpus_format(cs.path) == CorpusFormat::kNpy)) {
      try {
        check_npy_tokens(cs.path);
      } catch (const InputError& e) {
        ctx.fail(c["path"], f + ".path", e.what());
      }
    }
    spec.corpora.push_back(std::move(cs));
  }

  // splits: disjoint token ranges
  if (root["splits"]) {
    only_keys(ctx, root["splits"], "splits", {"fit", "gate", "select", "eval", "train"});
    for (const auto& kv : root["splits"]) {
      const std::string name = kv.first.as<std::string>();
      const std::string f = "splits." + name;
      only_keys(ctx, kv.second, f, {"start", "tokens"});
      if (!kv.second["start"] || !kv.second["tokens"]) ctx.fail(kv.second, f, "needs start and tokens");
      SplitSpec s{get_int(ctx, kv.second["start"], f + ".start", 0, std::int64_t{1} << 50),
                  get_int(ctx, kv.second["tokens"], f + ".tokens", 1, std::int64_t{1} << 50)};
      if (s.tokens < spec.context)
        ctx.fail(kv.second["tokens"], f + ".tokens", std::to_string(s.tokens) + " tokens hold no window of " +
                                                          std::to_string(spec.context));
      for (const auto& [other, o] : spec.splits) {
        if (s.start < o.start + o.tokens && o.start < s.start + s.tokens)
          ctx.fail(kv.second, f, "overlaps splits." + other + " [" + std::to_string(o.start) + ", " +
                                     std::to_string(o.start + o.tokens) + ")");
      }
      spec.splits[name] = s;
    }
  }

  // layers
  if (root["layers"]) {
    spec.layers = get_layers(ctx, root["layers"], "layers");
    for (const auto& m : spec.models)
      for (const auto& [a, b] : spec.layers.ranges)
        if (b >= m.layers)
          ctx.fail(root["layers"], "layers", "layer " + std::to_string(b) + " is outside model '" + m.name + "' (layers 0.." +
                                                 std::to_string(m.layers - 1) + ")");
  }

  // experiments
  if (root["experiments"]) {
    const YAML::Node ex = root["experiments"];
    std::set<std::string> allowed(known_experiments().begin(), known_experiments().end());
    only_keys(ctx, ex, "experiments", allowed);
    for (const auto& kv : ex) {
      const std::string name = kv.first.as<std::string>();
      const auto& schema = *std::find_if(experiment_schemas().begin(), experiment_schemas().end(),
                                         [&](const ExperimentSchema& s) { return s.name == name; });
      const YAML::Node params = kv.second.IsNull() ? YAML::Node(YAML::NodeType::Map) : kv.second;
      std::set<std::string> keys;
      for (const auto& p : schema.params) keys.insert(p.key);
      only_keys(ctx, params, "experiments." + name, keys);
      nlohmann::json j = nlohmann::json::object();
      for (const auto& p : schema.params) {
        const std::string f = "experiments." + name + "." + p.key;
        j[p.key] = params[p.key] ? parse_param(ctx, params[p.key], f, p.type, corpus_names) : p.fallback;
        if (p.type == P::kLayers && params[p.key]) {
          const LayerSelection sel = get_layers(ctx, params[p.key], f);
          for (const auto& m : spec.models)
            for (const auto& [a, b] : sel.ranges)
              if (b >= m.layers) ctx.fail(params[p.key], f, "layer " + std::to_string(b) + " is outside model '" + m.name + "'");
        }
      }
      check_values(ctx, name, params, j, spec);
      spec.experiments[name] = j.dump();  // nlohmann orders keys: canonical
    }
  }

  // runtime
  if (root["runtime"]) {
    const YAML::Node r = root["runtime"];
    only_keys(ctx, r, "runtime", {"device", "dtype", "batch", "ranks_per_group", "retries", "grace_seconds", "threads", "activation_dtype"});
    if (r["device"]) spec.runtime.device = get_string(ctx, r["device"], "runtime.device");
    if (r["dtype"]) spec.runtime.dtype = get_string(ctx, r["dtype"], "runtime.dtype");
    if (spec.runtime.dtype != "float32" && spec.runtime.dtype != "bfloat16" && spec.runtime.dtype != "float16")
      ctx.fail(r["dtype"], "runtime.dtype", "expected float32, bfloat16 or float16");
    if (r["batch"]) spec.runtime.batch = get_int(ctx, r["batch"], "runtime.batch", 1, 1 << 20);
    if (r["ranks_per_group"]) spec.runtime.ranks_per_group = get_int(ctx, r["ranks_per_group"], "runtime.ranks_per_group", 1, 4096);
    if (r["retries"]) spec.runtime.retries = get_int(ctx, r["retries"], "runtime.retries", 0, 100);
    if (r["grace_seconds"]) spec.runtime.grace_seconds = get_int(ctx, r["grace_seconds"], "runtime.grace_seconds", 0, 86400);
    if (r["threads"]) spec.runtime.threads = get_int(ctx, r["threads"], "runtime.threads", 0, 4096);
    if (r["activation_dtype"]) spec.runtime.activation_dtype = get_string(ctx, r["activation_dtype"], "runtime.activation_dtype");
    if (spec.runtime.activation_dtype != "float16" && spec.runtime.activation_dtype != "float32" &&
        spec.runtime.activation_dtype != "bfloat16")
      ctx.fail(r["activation_dtype"], "runtime.activation_dtype", "expected float16, float32 or bfloat16");
    const std::string& d = spec.runtime.device;
    if (d != "auto" && d != "cpu" && d != "cuda" && d.rfind("cuda:", 0) != 0)
      ctx.fail(r["device"], "runtime.device", "expected auto, cpu, cuda or cuda:N");
  }

  // resources (Slurm)
  if (root["resources"]) {
    const YAML::Node r = root["resources"];
    only_keys(ctx, r, "resources", {"nodes", "tasks_per_node", "gpus_per_node", "cpus_per_task", "mem", "time", "partition",
                                    "account", "qos", "constraint", "extra_sbatch", "launcher", "requeue_limit"});
    auto& rs = spec.resources;
    if (r["nodes"]) rs.nodes = get_int(ctx, r["nodes"], "resources.nodes", 1, 100000);
    if (r["tasks_per_node"]) rs.tasks_per_node = get_int(ctx, r["tasks_per_node"], "resources.tasks_per_node", 1, 4096);
    if (r["gpus_per_node"]) rs.gpus_per_node = get_int(ctx, r["gpus_per_node"], "resources.gpus_per_node", 0, 64);
    if (r["cpus_per_task"]) rs.cpus_per_task = get_int(ctx, r["cpus_per_task"], "resources.cpus_per_task", 0, 4096);
    if (r["requeue_limit"]) rs.requeue_limit = get_int(ctx, r["requeue_limit"], "resources.requeue_limit", 0, 1000);
    for (auto [key, dest] : {std::pair<const char*, std::string*>{"mem", &rs.mem}, {"time", &rs.time}, {"partition", &rs.partition},
                             {"account", &rs.account}, {"qos", &rs.qos}, {"constraint", &rs.constraint}, {"launcher", &rs.launcher}})
      if (r[key]) *dest = get_string(ctx, r[key], std::string("resources.") + key);
    if (rs.launcher != "mpirun" && rs.launcher != "srun") ctx.fail(r["launcher"], "resources.launcher", "expected mpirun or srun");
    if (r["extra_sbatch"]) {
      if (!r["extra_sbatch"].IsSequence()) ctx.fail(r["extra_sbatch"], "resources.extra_sbatch", "expected a list of strings");
      for (const auto& line : r["extra_sbatch"]) rs.extra_sbatch.push_back(get_string(ctx, line, "resources.extra_sbatch"));
    }
    try {
      check_resources(rs, path);  // values that reach #SBATCH lines: no shell or sbatch syntax
    } catch (const SpecError& e) {
      const std::string msg = e.what();
      const auto field = msg.find("resources.");
      const std::string key = field == std::string::npos ? "" : msg.substr(field + 10, msg.find(':', field) - field - 10);
      const YAML::Node at = !key.empty() && r[key] ? r[key] : r;
      ctx.fail(at, msg.substr(field == std::string::npos ? 0 : field, msg.find(':', field) - field),
               msg.substr(msg.find(':', field) + 2));
    }
  }
  return spec;
}

}  // namespace

SweepSpec load_spec(const std::string& path, const std::string& store_override) {
  try {
    return read_spec(path, store_override);
  } catch (const YAML::Exception& e) {
    // A conversion the checks above did not foresee (yaml-cpp throws from as<T>() and from
    // iterating a node of the wrong kind): still a problem of the spec, never a crash.
    throw SpecError(path + (e.mark.line >= 0 ? ":" + std::to_string(e.mark.line + 1) : "") + ": " + printable(e.msg));
  }
}

}  // namespace linsweep
