// Typed reading of a spec's YAML nodes.
#include "orchestrator/spec/spec_yaml.hpp"

#include <cmath>
#include <filesystem>
#include <functional>
#include <map>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "common/suggest.hpp"

namespace linsweep {
namespace {

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

}  // namespace

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

nlohmann::json read_params(const Ctx& ctx, const YAML::Node& node, const std::string& field,
                           const std::vector<ParamField>& fields, const std::set<std::string>& corpora) {
  const YAML::Node params = node.IsNull() ? YAML::Node(YAML::NodeType::Map) : node;
  std::set<std::string> keys;
  for (const auto& p : fields) keys.insert(p.key);
  only_keys(ctx, params, field, keys);
  nlohmann::json j = nlohmann::json::object();  // nlohmann orders keys: canonical
  for (const auto& p : fields)
    j[p.key] = params[p.key] ? parse_param(ctx, params[p.key], field + "." + p.key, p, corpora) : p.fallback;
  return j;
}

}  // namespace linsweep
