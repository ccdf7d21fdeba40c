// Parsing and applying spec overrides on yaml-cpp trees.
#include "orchestrator/spec/spec_overrides.hpp"

#include <cctype>
#include <stdexcept>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "common/suggest.hpp"

namespace linsweep {
namespace {

[[noreturn]] void bad(const std::string& text, const std::string& problem) {
  throw SpecError("override '" + printable(text) + "': " + problem);
}

bool is_index(const std::string& step) { return step.size() > 2 && step.front() == '['; }

std::size_t index_of(const std::string& step) { return std::stoul(step.substr(1, step.size() - 2)); }

// "models[1].path" -> {"models", "[1]", "path"}.
std::vector<std::string> split_path(const std::string& text, const std::string& path) {
  std::vector<std::string> steps;
  std::string key;
  for (std::size_t i = 0; i < path.size(); ++i) {
    const char c = path[i];
    if (c == '.') {
      if (key.empty()) bad(text, "empty key in '" + path + "'");
      steps.push_back(key), key.clear();
    } else if (c == '[') {
      if (!key.empty()) steps.push_back(key), key.clear();
      const auto close = path.find(']', i);
      const std::string digits = close == std::string::npos ? "" : path.substr(i + 1, close - i - 1);
      if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos)
        bad(text, "'" + path + "' has a list index that is not a number");
      steps.push_back("[" + digits + "]");
      i = close;
      if (i + 1 < path.size() && path[i + 1] == '.') ++i;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') {
      key += c;
    } else {
      bad(text, "'" + path + "' is not a dotted key path (letters, digits, _, -, '.' and [i])");
    }
  }
  if (!key.empty()) steps.push_back(key);
  if (steps.empty()) bad(text, "no key");
  return steps;
}

// The keys of a mapping node, for "did you mean".
std::vector<std::string> keys_of(const YAML::Node& map) {
  std::vector<std::string> keys;
  if (map.IsMap())
    for (const auto& kv : map) keys.push_back(kv.first.as<std::string>());
  return keys;
}

// The node at `steps` (all but the last), without creating anything.
YAML::Node parent_of(YAML::Node root, const SpecOverride& o) {
  YAML::Node cur = root;
  std::string where;
  for (std::size_t i = 0; i + 1 < o.keys.size(); ++i) {
    const std::string& step = o.keys[i];
    where += (is_index(step) || where.empty() ? "" : ".") + step;
    YAML::Node next;
    if (is_index(step)) {
      if (!cur.IsSequence() || index_of(step) >= cur.size()) bad(o.text, "'" + where + "' is not in the spec");
      next.reset(cur[index_of(step)]);
    } else {
      if (!cur.IsMap() || !cur[step])
        bad(o.text, "'" + where + "' is not in the spec" + did_you_mean(step, keys_of(cur)));
      next.reset(cur[step]);
    }
    cur.reset(next);
  }
  return cur;
}

// `value` split at its commas outside brackets, braces and quotes ({value} when it has none).
std::vector<std::string> top_level_items(const std::string& value) {
  std::vector<std::string> items(1);
  int depth = 0;
  char quote = 0;
  for (const char c : value) {
    if (quote != 0) {
      quote = c == quote ? 0 : quote;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{' || c == '(') {
      ++depth;
    } else if ((c == ']' || c == '}' || c == ')') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      items.emplace_back();
      continue;
    }
    items.back() += c;
  }
  return items;
}

}  // namespace

SpecOverride parse_override(const std::string& text) {
  SpecOverride o;
  o.text = text;
  std::string path = text;
  if (!path.empty() && path[0] == '~') {
    o.op = SpecOverride::Op::kRemove;
    path = path.substr(1);
    if (path.find('=') != std::string::npos) bad(text, "~key removes a key and takes no value");
  } else {
    if (!path.empty() && path[0] == '+') o.op = SpecOverride::Op::kAdd, path = path.substr(1);
    const auto eq = path.find('=');
    if (eq == std::string::npos) bad(text, "expected key.path=value, +key.path=value or ~key.path");
    o.value = path.substr(eq + 1);
    path = path.substr(0, eq);
  }
  o.keys = split_path(text, path);
  for (const auto& step : o.keys) o.field += (is_index(step) || o.field.empty() ? "" : ".") + step;
  if (o.op == SpecOverride::Op::kSet && o.value.rfind("choice(", 0) == 0 && o.value.back() == ')') {
    for (const auto& item : top_level_items(o.value.substr(7, o.value.size() - 8))) {
      const auto b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
      if (b == std::string::npos) bad(text, "choice(...) has an empty value");
      o.choices.push_back(item.substr(b, e - b + 1));
    }
  } else if (o.op != SpecOverride::Op::kRemove && top_level_items(o.value).size() > 1) {
    bad(text, "a list of values sweeps the key: add -m (linsweep run SPEC -m " + printable(text) + "); write [" +
                  printable(o.value) + "] for a YAML list, or quote a string that holds commas");
  }
  return o;
}

std::string multirun_override(const std::string& text) {
  if (text.empty() || text[0] == '~' || text[0] == '+') return text;
  const auto eq = text.find('=');
  if (eq == std::string::npos) return text;
  const std::string value = text.substr(eq + 1);
  if (value.rfind("choice(", 0) == 0 || top_level_items(value).size() < 2) return text;
  return text.substr(0, eq) + "=choice(" + value + ")";
}

void apply_overrides(YAML::Node& root, const std::vector<SpecOverride>& overrides) {
  for (const auto& o : overrides) {
    if (!o.choices.empty()) throw std::logic_error("apply_overrides: '" + o.text + "' is a sweep");
    YAML::Node parent = parent_of(root, o);
    const std::string& last = o.keys.back();
    YAML::Node value;
    if (o.op != SpecOverride::Op::kRemove) {
      try {
        value = YAML::Load(o.value);
      } catch (const YAML::Exception& e) {
        bad(o.text, "the value is not YAML: " + e.msg);
      }
    }
    if (is_index(last)) {
      const std::size_t i = index_of(last);
      if (!parent.IsSequence() || i >= parent.size()) bad(o.text, "'" + o.field + "' is not in the spec");
      if (o.op == SpecOverride::Op::kAdd) bad(o.text, "a list item cannot be added by index; override the whole list");
      if (o.op == SpecOverride::Op::kRemove)
        parent.remove(i);
      else
        parent[i] = value;
      continue;
    }
    if (!parent.IsMap()) bad(o.text, "'" + o.field + "' is below a value that is not a mapping");
    const bool exists = static_cast<bool>(parent[last]);
    if (o.op == SpecOverride::Op::kPut) {
      parent[last] = value;
      continue;
    }
    if (o.op == SpecOverride::Op::kSet && !exists)
      bad(o.text, "'" + o.field + "' is not in the spec" + did_you_mean(last, keys_of(parent)) + "; write +" + o.field +
                      "=... to add it");
    if (o.op == SpecOverride::Op::kAdd && exists)
      bad(o.text, "'" + o.field + "' is in the spec already; write " + o.field + "=... to replace it");
    if (o.op == SpecOverride::Op::kRemove) {
      if (!exists) bad(o.text, "'" + o.field + "' is not in the spec" + did_you_mean(last, keys_of(parent)));
      parent.remove(last);
    } else {
      parent[last] = value;
    }
  }
}

bool field_under(const std::string& field, const std::string& override_field) {
  if (field.rfind(override_field, 0) != 0) return false;
  return field.size() == override_field.size() || field[override_field.size()] == '.' ||
         field[override_field.size()] == '[';
}

}  // namespace linsweep
