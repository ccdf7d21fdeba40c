// Field readers for tokenizer.json components.
#include "engine/tokenizer/hf_json.hpp"

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/file_io.hpp"

namespace linsweep::hf_json {

std::string type_of(const nlohmann::json& j, const std::string& path, const std::string& where) {
  if (!j.is_object()) throw InputError(path + ": " + where + " is not an object");
  if (!j.contains("type") || !j["type"].is_string()) throw InputError(path + ": " + where + " has no string 'type'");
  return j["type"].get<std::string>();
}

const nlohmann::json& array_at(const nlohmann::json& j, const char* key, const std::string& path,
                               const std::string& where) {
  if (!j.contains(key) || !j[key].is_array())
    throw InputError(path + ": " + where + ": '" + key + "' is missing or not an array");
  return j[key];
}

std::string string_at(const nlohmann::json& j, const char* key, const std::string& path, const std::string& where) {
  if (!j.contains(key) || !j[key].is_string())
    throw InputError(path + ": " + where + ": '" + key + "' is missing or not a string");
  return j[key].get<std::string>();
}

bool bool_or(const nlohmann::json& j, const char* key, bool fallback, const std::string& path,
             const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  if (!j[key].is_boolean()) throw InputError(path + ": " + where + ": '" + key + "' is not a boolean");
  return j[key].get<bool>();
}

Pattern pattern_at(const nlohmann::json& j, const std::string& path, const std::string& where) {
  if (j.contains("pattern") && j["pattern"].is_object() && j["pattern"].size() == 1) {
    const auto& p = j["pattern"];
    if (p.contains("Regex") && p["Regex"].is_string()) return Pattern{p["Regex"].get<std::string>(), true};
    if (p.contains("String") && p["String"].is_string()) return Pattern{p["String"].get<std::string>(), false};
  }
  throw InputError(path + ": " + where + ": 'pattern' must be {\"Regex\": \"…\"} or {\"String\": \"…\"}");
}

void read_vocab(const nlohmann::json& vocab, const std::string& source, std::unordered_map<std::string, TokenId>* out) {
  if (!vocab.is_object()) throw InputError(source + ": vocab is not a JSON object");
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    if (!it.value().is_number_integer())
      throw InputError(source + ": id of '" + printable(it.key()) + "' is not an integer");
    auto id = it.value().get<std::int64_t>();
    if (id < 0 || id >= (1 << 30)) throw InputError(source + ": id of '" + printable(it.key()) + "' is out of range");
    (*out)[it.key()] = static_cast<TokenId>(id);
  }
}

}  // namespace linsweep::hf_json
