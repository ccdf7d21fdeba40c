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
#include "common/hf_cache.hpp"
#include "common/path_confinement.hpp"
#include "engine/corpus/corpus.hpp"
#include "engine/corpus/npy.hpp"
#include "engine/model/model_config.hpp"
#include "experiments/framework/experiment.hpp"
#include "orchestrator/spec/spec_overrides.hpp"
#include "orchestrator/spec/spec_sections.hpp"
#include "orchestrator/spec/spec_yaml.hpp"
#include "orchestrator/spec/sweep_settings.hpp"
#include "slurm/batch_script.hpp"
#include "storage/setting_columns.hpp"

namespace linsweep {
namespace {

constexpr std::size_t kMaxSpecBytes = 4u << 20;

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
  std::string revision;
  if (const YAML::Node r = e.node["revision"]) revision = get_string(ctx, r, e.field + ".revision");
  // A directory, a hub id or a hub cache folder: the snapshot's own path, never the name, is
  // what the model is read from (its unit ids hash the files' contents).
  try {
    ms.path = resolve_model_dir(get_string(ctx, e.node["path"], e.field + ".path"),
                                std::filesystem::path(ctx.file()).parent_path().string(), revision);
  } catch (const InputError& err) {
    ctx.fail(e.node["path"], e.field + ".path", err.what());
  }
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
    ms.experts = c.moe.experts;
    for (std::int64_t l = 0; l < c.n_layers; ++l)
      if (c.sparse(l)) ms.sparse_layers.push_back(l);
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
    spec->experiments[name] = read_params(ctx, kv.second, "experiments." + name, def.params, corpus_names);
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

// The store directory: the spec's, or --store's.
void read_store(const Ctx& ctx, const YAML::Node& root, const std::string& path, const std::string& store_override,
                SweepSpec& spec) {
  if (root["store"]) spec.store = resolve_path(path, get_string(ctx, root["store"], "store"));
  if (!store_override.empty()) spec.store = store_override;
  if (spec.store.empty()) ctx.fail(root, "store", "missing (or pass --store)");
  if (std::error_code ec; std::filesystem::exists(spec.store, ec) && !is_directory(spec.store)) {
    if (!store_override.empty())
      throw SpecError("--store " + printable(spec.store) + ": exists and is not a directory");
    ctx.fail(root["store"], "store", "'" + spec.store + "' exists and is not a directory");
  }
}

// The models, and the context: the spec's (at most every model's positions) or the largest that
// fits every model.
void read_models(const Ctx& ctx, const YAML::Node& root, SweepSpec& spec) {
  if (root["context"]) spec.context = get_int(ctx, root["context"], "context", 2, 1 << 20);
  for_each_named(ctx, root, "models", "model", {"name", "path", "revision", "dtype"}, [&](const NamedEntry& e) {
    ModelSpec ms = read_model(ctx, e);
    if (root["context"] && spec.context > ms.max_positions)
      ctx.fail(root["context"], "context",
               std::to_string(spec.context) + " is longer than model '" + ms.name + "' allows (" +
                   std::to_string(ms.max_positions) + " positions)");
    spec.models.push_back(std::move(ms));
  });
  if (!root["context"])  // the default fits every model
    for (const auto& m : spec.models) spec.context = std::min(spec.context, m.max_positions);
}

// splits: disjoint token ranges, each holding at least one window.
void read_splits(const Ctx& ctx, const YAML::Node& splits, SweepSpec& spec) {
  only_keys(ctx, splits, "splits", {"fit", "gate", "select", "eval", "train"});
  for (const auto& kv : splits) {
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

// layers: every one inside every model.
void read_layers(const Ctx& ctx, const YAML::Node& layers, SweepSpec& spec) {
  spec.layers = get_layers(ctx, layers, "layers");
  for (const auto& m : spec.models)
    for (const auto& [a, b] : spec.layers.ranges)
      if (b >= m.layers)
        ctx.fail(layers, "layers",
                 "layer " + std::to_string(b) + " is outside model '" + m.name + "' (layers 0.." +
                     std::to_string(m.layers - 1) + ")");
}

// resources: the declared fields, then what check_resources asks of values that reach #SBATCH
// lines (its message names the field, whose line is given).
void read_resources(const Ctx& ctx, const YAML::Node& r, const std::string& path, SweepSpec& spec) {
  const auto& schema = resources_schema();
  spec.resources = schema.from_json(read_params(ctx, r, "resources", schema.fields(), {}));
  try {
    check_resources(spec.resources, path);  // values that reach #SBATCH lines: no shell or sbatch syntax
  } catch (const SpecError& e) {
    const std::string msg = e.what();
    const auto field = msg.find("resources.");
    const std::string key = field == std::string::npos ? "" : msg.substr(field + 10, msg.find(':', field) - field - 10);
    const YAML::Node at = !key.empty() && r[key] ? r[key] : r;
    ctx.fail(at, msg.substr(field == std::string::npos ? 0 : field, msg.find(':', field) - field),
             msg.substr(msg.find(':', field) + 2));
  }
}

// Reads `root` (the spec's tree, overrides applied) into `spec`, whose file, text and overrides
// are set.
void read_tree(const Ctx& ctx, const YAML::Node& root, const std::string& path, const std::string& store_override,
               SweepSpec& spec) {
  only_keys(ctx, root, "",
            {"store", "context", "models", "corpora", "splits", "layers", "experiments", "runtime", "resources"});
  read_store(ctx, root, path, store_override, spec);
  read_models(ctx, root, spec);
  const std::set<std::string> corpus_names =
      for_each_named(ctx, root, "corpora", "corpus", {"name", "path", "format"},
                     [&](const NamedEntry& e) { spec.corpora.push_back(read_corpus(ctx, e)); });
  if (root["splits"]) read_splits(ctx, root["splits"], spec);
  if (root["layers"]) read_layers(ctx, root["layers"], spec);
  if (root["experiments"]) read_experiments(ctx, root["experiments"], corpus_names, &spec);
  if (root["runtime"])
    spec.runtime =
        runtime_schema().from_json(read_params(ctx, root["runtime"], "runtime", runtime_schema().fields(), {}));
  if (root["resources"]) read_resources(ctx, root["resources"], path, spec);
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
