// tokenizer_config.json: add_bos_token, add_eos_token, bos_token, eos_token.
#include "engine/tokenizer/tokenizer_config.hpp"

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/file_io.hpp"

namespace linsweep {
namespace {

constexpr std::size_t kMaxTokenizerConfigBytes = 16u << 20;

std::optional<bool> optional_bool(const nlohmann::json& j, const char* key, const std::string& path) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  if (!j[key].is_boolean()) throw InputError(path + ": '" + key + "' is not a boolean");
  return j[key].get<bool>();
}

// A token written as "…" or as an AddedToken object {"content": "…", …}.
std::optional<std::string> optional_token(const nlohmann::json& j, const char* key, const std::string& path) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  const auto& v = j[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  throw InputError(path + ": '" + key + "' is neither a string nor an object with a string \"content\"");
}

}  // namespace

TokenizerConfig read_tokenizer_config(const std::string& path) {
  TokenizerConfig c;
  if (!is_regular_file(path)) return c;
  c.path = path;
  const nlohmann::json j = read_json_file(path, kMaxTokenizerConfigBytes);
  if (!j.is_object()) throw InputError(path + ": not a JSON object");
  c.add_bos_token = optional_bool(j, "add_bos_token", path);
  c.add_eos_token = optional_bool(j, "add_eos_token", path);
  c.bos_token = optional_token(j, "bos_token", path);
  c.eos_token = optional_token(j, "eos_token", path);
  return c;
}

}  // namespace linsweep
