// Sweep axes from the spec and the command line, and their combinations as overrides.
#include "orchestrator/spec/sweep_settings.hpp"

#include <algorithm>
#include <set>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "common/suggest.hpp"

namespace linsweep {
namespace {

constexpr std::size_t kMaxSettings = 256;

// `path=value`, replacing the key or adding it, value untouched (it may hold commas).
SpecOverride put_override(const std::string& path, const std::string& value) {
  SpecOverride o = parse_override(path + "=x");
  o.op = SpecOverride::Op::kPut;
  o.text = path + "=" + value;
  o.value = value;
  return o;
}

// `written` as a spec path below a sweepable key, with its column name; SpecError via `fail`.
template <typename Fail>
SweepAxis axis_of(const std::string& written, const YAML::Node& root, Fail fail) {
  std::vector<std::string> keys;
  try {
    keys = parse_override(written + "=x").keys;
  } catch (const SpecError&) {
    fail("not a dotted key path (letters, digits, _, -, '.' and [i])");
  }
  static const std::set<std::string> kSweepable = {"context", "layers", "splits", "experiments"};
  SweepAxis a;
  if (!kSweepable.count(keys[0])) {
    const YAML::Node ex = root["experiments"];
    if (!ex.IsMap() || !ex[keys[0]])
      fail(
          "only context, layers, splits.* and experiments.* (or <experiment>.<parameter>) are swept; models and "
          "corpora are lists already, and runtime does not change results" +
          did_you_mean(keys[0], {"context", "layers", "splits", "experiments"}));
    keys.insert(keys.begin(), "experiments");
  }
  if (keys[0] == "experiments" && keys.size() < 3) fail("name an experiment's parameter (experiments.<name>.<key>)");
  for (const auto& k : keys) a.path += (a.path.empty() || k.front() == '[' ? "" : ".") + k;
  a.key = keys[0] == "experiments" ? a.path.substr(12) : a.path;
  return a;
}

void add_axis(std::vector<SweepAxis>& axes, SweepAxis a) {
  for (auto& b : axes)
    if (b.key == a.key) {
      b = std::move(a);
      return;
    }
  axes.push_back(std::move(a));
}

}  // namespace

std::vector<SweepAxis> read_sweep_axes(const std::string& file, YAML::Node& root,
                                       const std::vector<SpecOverride>& sweeps) {
  std::vector<SweepAxis> axes;
  if (const YAML::Node block = root["sweep"]) {
    auto fail_at = [&](const YAML::Node& n, const std::string& field, const std::string& problem) {
      throw SpecError(file + ":" + std::to_string(n.Mark().line + 1) + ": " + printable(field) + ": " +
                      printable(problem));
    };
    if (!block.IsMap()) fail_at(block, "sweep", "expected a mapping of keys to lists of values");
    for (const auto& kv : block) {
      const std::string key = kv.first.as<std::string>();
      const std::string field = "sweep." + key;
      SweepAxis a = axis_of(key, root, [&](const std::string& p) { fail_at(kv.first, field, p); });
      if (!kv.second.IsSequence() || kv.second.size() == 0)
        fail_at(kv.second, field, "expected a non-empty list of values ([a, b])");
      for (const auto& v : kv.second) {
        YAML::Emitter e;
        e << YAML::Flow << v;
        if (std::count(a.values.begin(), a.values.end(), e.c_str()))
          fail_at(v, field, std::string("lists ") + e.c_str() + " twice");
        a.values.push_back(e.c_str());
      }
      add_axis(axes, std::move(a));
    }
    root.remove("sweep");
  }
  for (const auto& o : sweeps) {
    auto fail = [&](const std::string& p) {
      throw SpecError(file + ": override '" + printable(o.text) + "': " + printable(p));
    };
    SweepAxis a = axis_of(o.field, root, fail);
    for (const auto& v : o.choices) {
      if (std::count(a.values.begin(), a.values.end(), v)) fail("lists " + v + " twice");
      a.values.push_back(v);
    }
    add_axis(axes, std::move(a));
  }
  std::size_t settings = 1;
  for (const auto& a : axes)
    if ((settings *= a.values.size()) > kMaxSettings)
      throw SpecError(file + ": the sweep has more than " + std::to_string(kMaxSettings) +
                      " settings; split it into several specs or stores");
  return axes;
}

std::vector<SettingOverrides> sweep_combinations(const std::vector<SweepAxis>& axes) {
  std::vector<SettingOverrides> out(1, SettingOverrides{nlohmann::json::object(), {}});
  for (const auto& a : axes) {
    std::vector<SettingOverrides> next;
    for (const auto& partial : out)
      for (const auto& v : a.values) {
        SettingOverrides s = partial;
        const nlohmann::json j = nlohmann::json::parse(v, nullptr, false);
        s.values[a.key] = j.is_discarded() ? nlohmann::json(v) : j;
        s.overrides.push_back(put_override(a.path, v));
        next.push_back(std::move(s));
      }
    out = std::move(next);
  }
  return out;
}

}  // namespace linsweep
