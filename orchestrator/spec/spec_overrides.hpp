// Command-line overrides of a spec (Hydra's syntax): `key.path=value` replaces an existing
// value, `+key.path=value` adds a key that is not there, `~key.path` removes one. Paths are
// dotted keys with [i] for list items (`models[1].path`); values are YAML
// (`experiments.fit.lambda=[0.01,0.1]`, `+experiments.clusters={k: 10}`).
// `key.path=choice(a,b)` sweeps the key over a and b (Hydra's multirun; docs/spec.md, "Sweeps");
// under `-m`, `key.path=a,b` means the same (multirun_override).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace linsweep {

struct SpecOverride {
  // kPut (never parsed; a sweep's setting uses it): kSet where the key exists, else kAdd.
  enum class Op { kSet, kAdd, kRemove, kPut };
  std::string text;  // as given, for messages
  Op op = Op::kSet;
  std::string field;                 // the path as the spec reader names fields ("models[1].path")
  std::vector<std::string> keys;     // path steps: a key, or "[i]"
  std::string value;                 // YAML text (empty for kRemove)
  std::vector<std::string> choices;  // a sweep's values (YAML texts), from choice(...); empty otherwise
};

// Parses one override. Throws SpecError("override 'text': <problem>") on bad syntax, and for
// a value with a comma outside brackets and quotes (a sweep written without -m).
SpecOverride parse_override(const std::string& text);

// What `-m` makes of an override: `key.path=a,b` becomes `key.path=choice(a,b)`; any other
// override is returned as it is.
std::string multirun_override(const std::string& text);

// Applies the overrides in order to `root` (the spec's YAML tree). Throws SpecError naming the
// override when a path does not exist (for =, ~), already exists (for +), steps through a
// scalar, or the value is not YAML. Sweeps (choices) are not applied here: std::logic_error.
void apply_overrides(YAML::Node& root, const std::vector<SpecOverride>& overrides);

// Whether `field` (a field name of the spec reader) is `override_field` or lies below it.
bool field_under(const std::string& field, const std::string& override_field);

}  // namespace linsweep
