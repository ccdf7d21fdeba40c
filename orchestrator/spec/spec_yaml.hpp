// Reading a spec's YAML: where a node sits (for messages that name the file and line, or the
// override that gave the value), typed scalars, layer selections, and a mapping read against
// declared parameters (experiments/framework/params.hpp). Every problem is a SpecError
// "<file>:<line>: <field>: <problem>" (exit 2). Used by the spec reader only.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "experiments/framework/params.hpp"
#include "experiments/framework/sweep.hpp"
#include "orchestrator/spec/spec_overrides.hpp"

namespace linsweep {

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

// yaml-cpp's message in plain words, the parser's own after them.
std::string plain_yaml_error(const std::string& msg);

// Fails on a key of `map` outside `allowed` (naming the closest), or when `map` is not a mapping.
void only_keys(const Ctx& ctx, const YAML::Node& map, const std::string& field, const std::set<std::string>& allowed);
std::int64_t get_int(const Ctx& ctx, const YAML::Node& n, const std::string& field, std::int64_t lo, std::int64_t hi);
double get_double(const Ctx& ctx, const YAML::Node& n, const std::string& field);  // finite
std::string get_string(const Ctx& ctx, const YAML::Node& n, const std::string& field);
bool get_bool(const Ctx& ctx, const YAML::Node& n, const std::string& field);
// `p` relative to the spec file's directory (absolute paths unchanged).
std::string resolve_path(const std::string& spec_file, const std::string& p);
// `all`, or a list of layer numbers and "a-b" ranges.
LayerSelection get_layers(const Ctx& ctx, const YAML::Node& n, const std::string& field);
// One parameter's value as canonical JSON: its type and range checked; corpus names must be
// among `corpora`.
nlohmann::json parse_param(const Ctx& ctx, const YAML::Node& n, const std::string& field, const ParamField& p,
                           const std::set<std::string>& corpora);
// The mapping `node` (null: empty) read against `fields`: unknown keys refused, every value
// parsed, absent keys their default; keys in canonical (sorted) order. `field` prefixes messages.
nlohmann::json read_params(const Ctx& ctx, const YAML::Node& node, const std::string& field,
                           const std::vector<ParamField>& fields, const std::set<std::string>& corpora);

}  // namespace linsweep
