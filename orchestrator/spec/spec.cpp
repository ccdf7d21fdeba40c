// Spec parsing with yaml-cpp: every field typed, defaulted and validated with its line.
#include "orchestrator/spec/spec.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "common/path_confinement.hpp"
#include "common/suggest.hpp"
#include "engine/corpus/corpus.hpp"
#include "engine/corpus/npy.hpp"
#include "engine/model/model_config.hpp"
#include "experiments/framework/experiment.hpp"
#include "orchestrator/spec/spec_overrides.hpp"
#include "orchestrator/spec/sweep_settings.hpp"
#include "slurm/batch_script.hpp"
#include "storage/setting_columns.hpp"

namespace linsweep {
namespace {

constexpr std::size_t kMaxSpecBytes = 4u << 20;

// Where a node sits in the file (or which override gave it), for messages.
class Ctx {
 public:
  Ctx(std::string file, const std::vector<SpecOverride>& overrides) : file_(std::move(file)), overrides_(overrides) {}
  [[noreturn]] void fail(const YAML::Node& node, const std::string& field, const std::string& problem) const {
    // Keys and values are quoted from the file: escaped, so that a newline in one cannot cut
    // the message short (main prints one line).
    // The last override of a field decides; a removal only when the field it removed is missing.
    for (auto it = overrides_.rbegin(); it != overrides_.rend(); ++it)
      if (it->op == SpecOverride::Op::kRemove ? field == it->field : field_under(field, it->field))
        throw SpecError(file_ + ": override '" + printable(it->text) + "': " + printable(field) + ": " +
                        printable(problem));
    const int line = node.IsDefined() ? node.Mark().line + 1 : 0;
    throw SpecError(file_ + (line > 0 ? ":" + std::to_string(line) : "") + ": " + printable(field) + ": " +
                    printable(problem));
  }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  const std::vector<SpecOverride>& overrides_;
};

// yaml-cpp's message in plain words, the parser's own after them ("a '[' is never closed by ']'
// (end of sequence flow not found)"); messages without a plainer form as they are.
std::string plain_yaml_error(const std::string& msg) {
  static const std::map<std::string, std::string> kPlain = {
      {"end of map flow not found", "a '{' is never closed by '}'"},
      {"end of sequence flow not found", "a '[' is never closed by ']'"},
      {"end of map not found", "a mapping ends where an entry was expected (check the indentation)"},
      {"end of sequence not found", "a list ends where an item was expected (check the indentation)"},
      {"illegal map value", "a ':' where no key can end (quote a value that holds ': ')"},
      {"illegal map key", "a key where none can start (check the indentation)"},
      {"illegal block entry", "a '- ' list item where none can start (check the indentation)"},
      {"illegal flow end", "a ']' or '}' that closes nothing"},
      {"illegal EOF in scalar", "a quoted value is never closed (a missing \" or ')"},
      {"illegal tab when looking for indentation", "a tab in the indentation (YAML indents with spaces)"},
      {"unknown escape character: ", "an unknown \\ escape in a double-quoted value"},
  };
  for (const auto& [parser, plain] : kPlain)
    if (msg.rfind(parser, 0) == 0) return plain + " (" + msg + ")";
  return msg;
}

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
      ctx.fail(kv.first, field.empty() ? key : field + "." + key,
               "unknown key" + did_you_mean(key, {allowed.begin(), allowed.end()}) + " (known: " + known + ")");
    }
  }
}

std::int64_t get_int(const Ctx& ctx, const YAML::Node& n, const std::string& field, std::int64_t lo, std::int64_t hi) {
  std::int64_t v = 0;
  if (!n.IsScalar() || !YAML::convert<std::int64_t>::decode(n, v)) ctx.fail(n, field, "expected an integer");
  if (v < lo || v > hi)
    ctx.fail(n, field, std::to_string(v) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
  return v;
}

double get_double(const Ctx& ctx, const YAML::Node& n, const std::string& field) {
  double v = 0;
  if (!n.IsScalar() || !YAML::convert<double>::decode(n, v) || !std::isfinite(v))
    ctx.fail(n, field, "expected a number");
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

// One entry of a list of named things in the spec (models, corpora).
struct NamedEntry {
  YAML::Node node;
  std::string field;  // "models[2]", for messages
  std::string name;
  std::string path;  // resolved relative to the spec file
};

// For each entry of `root[key]`, a non-empty list of maps with the fields `keys`, among them a
// name and a path: checks the entry's fields and its name (a safe file name: names become
// directory and HDF5 group names; unique in the list, else "duplicate <what> name"), then calls
// read(entry). Returns the names.
std::set<std::string> for_each_named(const Ctx& ctx, const YAML::Node& root, const std::string& key,
                                     const std::string& what, const std::set<std::string>& keys,
                                     const std::function<void(const NamedEntry&)>& read) {
  const YAML::Node list = root[key];
  if (!list || !list.IsSequence() || list.size() == 0) ctx.fail(list ? list : root, key, "expected a non-empty list");
  std::set<std::string> names;
  for (std::size_t i = 0; i < list.size(); ++i) {
    NamedEntry e{list[i], key + "[" + std::to_string(i) + "]", "", ""};
    only_keys(ctx, e.node, e.field, keys);
    if (!e.node["name"]) ctx.fail(e.node, e.field + ".name", "missing");
    if (!e.node["path"]) ctx.fail(e.node, e.field + ".path", "missing");
    e.name = get_string(ctx, e.node["name"], e.field + ".name");
    if (const std::string why = unsafe_name_reason(e.name); !why.empty())
      ctx.fail(e.node["name"], e.field + ".name", "'" + e.name + "' " + why);
    if (!names.insert(e.name).second)
      ctx.fail(e.node["name"], e.field + ".name", "duplicate " + what + " name '" + e.name + "'");
    e.path = resolve_path(ctx.file(), get_string(ctx, e.node["path"], e.field + ".path"));
    read(e);
  }
  return names;
}

// A model entry, its config read for the layer count and positions.
ModelSpec read_model(const Ctx& ctx, const NamedEntry& e) {
  ModelSpec ms;
  ms.name = e.name;
  ms.path = e.path;
  if (const YAML::Node dtype = e.node["dtype"]) {
    ms.dtype = get_string(ctx, dtype, e.field + ".dtype");
    if (*ms.dtype != "float32" && *ms.dtype != "bfloat16" && *ms.dtype != "float16")
      ctx.fail(dtype, e.field + ".dtype", "expected float32, bfloat16 or float16");
  }
  try {
    const ModelConfig c = read_model_config(ms.path);
    ms.layers = c.n_layers;
    ms.max_positions = c.max_context();
    ms.export_problem = affine_export_problem(c);
  } catch (const Error& err) {
    ctx.fail(e.node["path"], e.field + ".path", err.what());
  }
  return ms;
}

// A corpus entry, its format named or guessed from the path.
CorpusSpec read_corpus(const Ctx& ctx, const NamedEntry& e) {
  if (!is_regular_file(e.path) && !is_directory(e.path))
    ctx.fail(e.node["path"], e.field + ".path", "'" + e.path + "' does not exist");
  std::string format;
  if (const YAML::Node f = e.node["format"]) {
    format = get_string(ctx, f, e.field + ".format");
    if (!format.empty() && !parse_enum(kCorpusFormats, format))
      ctx.fail(f, e.field + ".format", "'" + format + "' is unknown (" + enum_names_list(kCorpusFormats) + ")");
  }
  if (format.empty()) format = corpus_format_name(guess_corpus_format(e.path));
  // A token stream's header is checked now (a few bytes), so that a broken .npy fails the
  // spec instead of every unit that reads it; text corpora are checked when tokenized.
  if (format == "npy") {
    try {
      check_npy_tokens(e.path);
    } catch (const InputError& err) {
      ctx.fail(e.node["path"], e.field + ".path", err.what());
    }
  }
  return CorpusSpec{.name = e.name, .path = e.path, .format = format};
}

// `all`, or a list of layer numbers and "a-b" ranges.
LayerSelection get_layers(const Ctx& ctx, const YAML::Node& n, const std::string& field) {
  LayerSelection sel;
  if (n.IsScalar() && n.as<std::string>() == "all") return sel;
  if (!n.IsSequence() || n.size() == 0)
    ctx.fail(n, field, "expected `all` or a non-empty list of layers and \"a-b\" ranges");
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

// One element of a parameter: its type and range. Integers are bounded to ±2^50 whatever
// the range (they become counts and offsets).
nlohmann::json parse_number(const Ctx& ctx, const YAML::Node& n, const std::string& field, bool integer,
                            const ParamRange& range) {
  const double v = integer
                       ? static_cast<double>(get_int(ctx, n, field, -(std::int64_t{1} << 50), std::int64_t{1} << 50))
                       : get_double(ctx, n, field);
  if (const std::string why = range.problem(v); !why.empty()) ctx.fail(n, field, why);
  return integer ? nlohmann::json(static_cast<std::int64_t>(v)) : nlohmann::json(v);
}

nlohmann::json parse_param(const Ctx& ctx, const YAML::Node& n, const std::string& field, const ParamField& p,
                           const std::set<std::string>& corpora) {
  auto list = [&](const std::function<nlohmann::json(const YAML::Node&)>& one) {
    nlohmann::json out = nlohmann::json::array();
    if (n.IsSequence()) {
      for (const auto& item : n) out.push_back(one(item));
    } else if (n.IsNull()) {
      // `key:` with nothing after it: an empty list
    } else {
      out.push_back(one(n));
    }
    if (p.range.non_empty && out.empty()) ctx.fail(n, field, "expected at least one value");
    if (p.range.distinct)
      for (std::size_t i = 0; i < out.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
          if (out[i] == out[j]) ctx.fail(n, field, "lists " + out[i].dump() + " twice");
    return out;
  };
  auto text = [&](const YAML::Node& x) {
    const std::string v = get_string(ctx, x, field);
    if (const std::string why = p.range.problem(v); !why.empty()) ctx.fail(x, field, why);
    return nlohmann::json(v);
  };
  auto corpus = [&](const YAML::Node& x) {
    const std::string c = get_string(ctx, x, field);
    if (corpora.count(c) == 0)
      ctx.fail(x, field,
               "'" + c + "' is not a corpus of this spec" + did_you_mean(c, {corpora.begin(), corpora.end()}));
    return nlohmann::json(c);
  };
  switch (p.type) {
    case ParamType::kFloat:
      return parse_number(ctx, n, field, false, p.range);
    case ParamType::kInt:
      return parse_number(ctx, n, field, true, p.range);
    case ParamType::kString:
      return text(n);
    case ParamType::kBool:
      return get_bool(ctx, n, field);
    case ParamType::kFloats:
      return list([&](const YAML::Node& x) { return parse_number(ctx, x, field, false, p.range); });
    case ParamType::kInts:
      return list([&](const YAML::Node& x) { return parse_number(ctx, x, field, true, p.range); });
    case ParamType::kStrings:
      return list(text);
    case ParamType::kLayers:
      return get_layers(ctx, n, field).to_json();
    case ParamType::kCorpus: {
      const std::string c = get_string(ctx, n, field);
      return c.empty() ? nlohmann::json(c) : corpus(n);
    }
    case ParamType::kCorpora:
      return list(corpus);
  }
  return nullptr;
}

// The experiments section: every registered experiment's parameters, typed and range-checked,
// defaults filled in, then the experiment's own checks against the sweep.
void read_experiments(const Ctx& ctx, const YAML::Node& ex, const std::set<std::string>& corpus_names,
                      SweepSpec* spec) {
  const auto& registry = ExperimentRegistry::instance();
  const std::vector<std::string> names = registry.experiment_names();
  only_keys(ctx, ex, "experiments", {names.begin(), names.end()});
  for (const auto& kv : ex) {
    const std::string name = kv.first.as<std::string>();
    const ExperimentDef& def = *registry.experiment(name);
    const YAML::Node params = kv.second.IsNull() ? YAML::Node(YAML::NodeType::Map) : kv.second;
    std::set<std::string> keys;
    for (const auto& p : def.params) keys.insert(p.key);
    only_keys(ctx, params, "experiments." + name, keys);
    nlohmann::json j = nlohmann::json::object();
    for (const auto& p : def.params) {
      const std::string f = "experiments." + name + "." + p.key;
      j[p.key] = params[p.key] ? parse_param(ctx, params[p.key], f, p, corpus_names) : p.fallback;
    }
    spec->experiments[name] = j;  // nlohmann orders keys: canonical
  }
  // Cross-field checks run once every experiment is known (compound needs gate, ...).
  for (const auto& kv : ex) {
    const std::string name = kv.first.as<std::string>();
    const ExperimentDef& def = *registry.experiment(name);
    if (!def.validate) continue;
    const YAML::Node params = kv.second;
    for (const auto& problem : def.validate(spec->experiments.at(name), *spec)) {
      const YAML::Node at =
          !problem.key.empty() && params.IsMap() && params[problem.key] ? params[problem.key] : kv.first;
      ctx.fail(at, "experiments." + name + (problem.key.empty() ? "" : "." + problem.key), problem.message);
    }
  }
}

}  // namespace

std::vector<std::string> known_experiments() { return ExperimentRegistry::instance().experiment_names(); }

namespace {

// The spec's text with the overrides applied: what the store freezes and `plan --show-spec`
// prints (the file's own text when there are none).
std::string resolved_text(const std::string& path, const std::string& text, const YAML::Node& root,
                          const std::vector<SpecOverride>& overrides, const std::vector<SpecOverride>& sweeps) {
  std::string header;
  if (!overrides.empty()) {
    header = "# " + path + " with overrides:";
    for (const auto& o : overrides) header += " " + o.text;
    header += "\n";
  }
  if (!sweeps.empty()) {
    header += "# " + path + " swept:";
    for (const auto& o : sweeps) header += " " + o.text;
    header += "\n";
  }
  if (overrides.empty()) return header + text;
  YAML::Emitter out;
  out << root;
  return header + out.c_str() + "\n";
}

// Reads `root` (the spec's tree, overrides applied) into `spec`, whose file, text and overrides
// are set.
void read_tree(const Ctx& ctx, const YAML::Node& root, const std::string& path, const std::string& store_override,
               SweepSpec& spec) {
  only_keys(ctx, root, "",
            {"store", "context", "models", "corpora", "splits", "layers", "experiments", "runtime", "resources"});

  if (root["store"]) spec.store = resolve_path(path, get_string(ctx, root["store"], "store"));
  if (!store_override.empty()) spec.store = store_override;
  if (spec.store.empty()) ctx.fail(root, "store", "missing (or pass --store)");
  if (std::error_code ec; std::filesystem::exists(spec.store, ec) && !is_directory(spec.store)) {
    if (!store_override.empty())
      throw SpecError("--store " + printable(spec.store) + ": exists and is not a directory");
    ctx.fail(root["store"], "store", "'" + spec.store + "' exists and is not a directory");
  }
  if (root["context"]) spec.context = get_int(ctx, root["context"], "context", 2, 1 << 20);

  // models
  for_each_named(ctx, root, "models", "model", {"name", "path", "dtype"}, [&](const NamedEntry& e) {
    ModelSpec ms = read_model(ctx, e);
    if (root["context"] && spec.context > ms.max_positions)
      ctx.fail(root["context"], "context",
               std::to_string(spec.context) + " is longer than model '" + ms.name + "' allows (" +
                   std::to_string(ms.max_positions) + " positions)");
    spec.models.push_back(std::move(ms));
  });
  if (!root["context"])  // the default fits every model
    for (const auto& m : spec.models) spec.context = std::min(spec.context, m.max_positions);

  // corpora
  const std::set<std::string> corpus_names =
      for_each_named(ctx, root, "corpora", "corpus", {"name", "path", "format"},
                     [&](const NamedEntry& e) { spec.corpora.push_back(read_corpus(ctx, e)); });

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
        ctx.fail(kv.second["tokens"], f + ".tokens",
                 std::to_string(s.tokens) + " tokens hold no window of " + std::to_string(spec.context));
      for (const auto& [other, o] : spec.splits) {
        if (s.start < o.start + o.tokens && o.start < s.start + s.tokens)
          ctx.fail(kv.second, f,
                   "overlaps splits." + other + " [" + std::to_string(o.start) + ", " +
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
          ctx.fail(root["layers"], "layers",
                   "layer " + std::to_string(b) + " is outside model '" + m.name + "' (layers 0.." +
                       std::to_string(m.layers - 1) + ")");
  }

  // experiments
  if (root["experiments"]) read_experiments(ctx, root["experiments"], corpus_names, &spec);

  // runtime
  if (root["runtime"]) {
    const YAML::Node r = root["runtime"];
    only_keys(ctx, r, "runtime",
              {"device", "dtype", "batch", "ranks_per_group", "retries", "grace_seconds", "threads", "activation_dtype",
               "groups_span_nodes", "communicator"});
    if (r["device"]) spec.runtime.device = get_string(ctx, r["device"], "runtime.device");
    if (r["dtype"]) spec.runtime.dtype = get_string(ctx, r["dtype"], "runtime.dtype");
    if (spec.runtime.dtype != "float32" && spec.runtime.dtype != "bfloat16" && spec.runtime.dtype != "float16")
      ctx.fail(r["dtype"], "runtime.dtype", "expected float32, bfloat16 or float16");
    if (r["batch"]) spec.runtime.batch = get_int(ctx, r["batch"], "runtime.batch", 1, 1 << 20);
    if (r["ranks_per_group"])
      spec.runtime.ranks_per_group = get_int(ctx, r["ranks_per_group"], "runtime.ranks_per_group", 1, 4096);
    if (r["retries"]) spec.runtime.retries = get_int(ctx, r["retries"], "runtime.retries", 0, 100);
    if (r["grace_seconds"])
      spec.runtime.grace_seconds = get_int(ctx, r["grace_seconds"], "runtime.grace_seconds", 0, 86400);
    if (r["threads"]) spec.runtime.threads = get_int(ctx, r["threads"], "runtime.threads", 0, 4096);
    if (r["groups_span_nodes"])
      spec.runtime.groups_span_nodes = get_bool(ctx, r["groups_span_nodes"], "runtime.groups_span_nodes");
    if (r["activation_dtype"])
      spec.runtime.activation_dtype = get_string(ctx, r["activation_dtype"], "runtime.activation_dtype");
    if (spec.runtime.activation_dtype != "float16" && spec.runtime.activation_dtype != "float32" &&
        spec.runtime.activation_dtype != "bfloat16")
      ctx.fail(r["activation_dtype"], "runtime.activation_dtype", "expected float16, float32 or bfloat16");
    if (r["communicator"]) spec.runtime.communicator = get_string(ctx, r["communicator"], "runtime.communicator");
    const std::string& c = spec.runtime.communicator;
    if (c != "auto" && c != "mpi" && c != "nccl")
      ctx.fail(r["communicator"], "runtime.communicator", "expected auto, mpi or nccl");
    const std::string& d = spec.runtime.device;
    if (d != "auto" && d != "cpu" && d != "cuda" && d.rfind("cuda:", 0) != 0)
      ctx.fail(r["device"], "runtime.device", "expected auto, cpu, cuda or cuda:N");
  }

  // resources (Slurm)
  if (root["resources"]) {
    const YAML::Node r = root["resources"];
    only_keys(ctx, r, "resources",
              {"nodes", "tasks_per_node", "gpus_per_node", "cpus_per_task", "mem", "time", "partition", "account",
               "qos", "constraint", "extra_sbatch", "launcher", "launcher_args", "requeue_limit"});
    auto& rs = spec.resources;
    if (r["nodes"]) rs.nodes = get_int(ctx, r["nodes"], "resources.nodes", 1, 100000);
    if (r["tasks_per_node"]) rs.tasks_per_node = get_int(ctx, r["tasks_per_node"], "resources.tasks_per_node", 1, 4096);
    if (r["gpus_per_node"]) rs.gpus_per_node = get_int(ctx, r["gpus_per_node"], "resources.gpus_per_node", 0, 64);
    if (r["cpus_per_task"]) rs.cpus_per_task = get_int(ctx, r["cpus_per_task"], "resources.cpus_per_task", 0, 4096);
    if (r["requeue_limit"]) rs.requeue_limit = get_int(ctx, r["requeue_limit"], "resources.requeue_limit", 0, 1000);
    for (auto [key, dest] : {std::pair<const char*, std::string*>{"mem", &rs.mem},
                             {"time", &rs.time},
                             {"partition", &rs.partition},
                             {"account", &rs.account},
                             {"qos", &rs.qos},
                             {"constraint", &rs.constraint},
                             {"launcher", &rs.launcher}})
      if (r[key]) *dest = get_string(ctx, r[key], std::string("resources.") + key);
    if (rs.launcher != "mpirun" && rs.launcher != "srun")
      ctx.fail(r["launcher"], "resources.launcher", "expected mpirun or srun");
    if (r["extra_sbatch"]) {
      if (!r["extra_sbatch"].IsSequence())
        ctx.fail(r["extra_sbatch"], "resources.extra_sbatch", "expected a list of strings");
      for (const auto& line : r["extra_sbatch"])
        rs.extra_sbatch.push_back(get_string(ctx, line, "resources.extra_sbatch"));
    }
    if (r["launcher_args"]) {
      if (!r["launcher_args"].IsSequence())
        ctx.fail(r["launcher_args"], "resources.launcher_args", "expected a list of strings");
      rs.launcher_args.emplace();
      for (const auto& arg : r["launcher_args"])
        rs.launcher_args->push_back(get_string(ctx, arg, "resources.launcher_args"));
    }
    try {
      check_resources(rs, path);  // values that reach #SBATCH lines: no shell or sbatch syntax
    } catch (const SpecError& e) {
      const std::string msg = e.what();
      const auto field = msg.find("resources.");
      const std::string key =
          field == std::string::npos ? "" : msg.substr(field + 10, msg.find(':', field) - field - 10);
      const YAML::Node at = !key.empty() && r[key] ? r[key] : r;
      ctx.fail(at, msg.substr(field == std::string::npos ? 0 : field, msg.find(':', field) - field),
               msg.substr(msg.find(':', field) + 2));
    }
  }
}

// Each combination of the swept values, read as a spec of its own from a copy of `root`.
void read_settings(const std::vector<SweepAxis>& axes, const YAML::Node& root, const std::string& path,
                   const std::string& store_override, SweepSpec& spec) {
  for (SettingOverrides& c : sweep_combinations(axes)) {
    YAML::Node tree = YAML::Clone(root);
    try {
      apply_overrides(tree, c.overrides);
    } catch (const SpecError& e) {
      throw SpecError(path + ": setting '" + setting_name(c.values) + "': " + e.what());
    }
    const Ctx ctx(path, c.overrides);
    SweepSpec one;
    one.file = path;
    read_tree(ctx, tree, path, store_override, one);
    spec.settings.push_back(SweepSetting{std::move(c.values), static_cast<Sweep&&>(std::move(one))});
  }
}

SweepSpec read_spec(const std::string& path, const std::string& store_override,
                    const std::vector<std::string>& override_texts) {
  std::vector<SpecOverride> overrides, sweeps;
  for (const auto& t : override_texts) {
    SpecOverride o;
    try {
      o = parse_override(t);
    } catch (const SpecError& e) {
      throw SpecError(path + ": " + e.what());
    }
    (o.choices.empty() ? overrides : sweeps).push_back(std::move(o));
  }
  const Ctx ctx(path, overrides);
  SweepSpec spec;
  spec.file = path;
  spec.text = read_file(path, kMaxSpecBytes);
  require_utf8(spec.text, path);
  YAML::Node root;
  try {
    root = YAML::Load(spec.text);
  } catch (const YAML::Exception& e) {
    throw SpecError(path + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML: " + plain_yaml_error(e.msg));
  }
  if (!root.IsMap()) throw SpecError(path + ": the spec must be a YAML mapping");
  try {
    apply_overrides(root, overrides);
  } catch (const SpecError& e) {
    throw SpecError(path + ": " + e.what());
  }
  spec.text = resolved_text(path, spec.text, root, overrides, sweeps);
  spec.overrides = override_texts;
  const std::vector<SweepAxis> axes = read_sweep_axes(path, root, sweeps);
  read_tree(ctx, root, path, store_override, spec);
  if (!axes.empty()) read_settings(axes, root, path, store_override, spec);
  return spec;
}

}  // namespace

SweepSpec load_spec(const std::string& path, const std::string& store_override,
                    const std::vector<std::string>& overrides) {
  try {
    return read_spec(path, store_override, overrides);
  } catch (const YAML::Exception& e) {
    // A conversion the checks above did not foresee (yaml-cpp throws from as<T>() and from
    // iterating a node of the wrong kind): still a problem of the spec, never a crash.
    throw SpecError(path + (e.mark.line >= 0 ? ":" + std::to_string(e.mark.line + 1) : "") + ": " + printable(e.msg));
  }
}

}  // namespace linsweep
