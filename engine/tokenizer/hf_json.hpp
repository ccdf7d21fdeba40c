// Reading the fields of tokenizer.json components with one-line errors naming the file and key.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <unordered_map>

#include "engine/tokenizer/tokenizer.hpp"

namespace linsweep::hf_json {

// Each throws InputError "<path>: <where>: …" naming the key when it is missing or mistyped.
// `where` names the component ("pre_tokenizer Split", "normalizer", …).

// The string "type" of an object component.
std::string type_of(const nlohmann::json& j, const std::string& path, const std::string& where);
// j[key], which must be an array.
const nlohmann::json& array_at(const nlohmann::json& j, const char* key, const std::string& path,
                               const std::string& where);
// j[key], which must be a string.
std::string string_at(const nlohmann::json& j, const char* key, const std::string& path, const std::string& where);
// j[key] if present and not null (then it must be a boolean), else `fallback`.
bool bool_or(const nlohmann::json& j, const char* key, bool fallback, const std::string& path,
             const std::string& where);

// A vocab object {"token": id, …} into `out`; ids must be integers in [0, 2^30).
void read_vocab(const nlohmann::json& vocab, const std::string& source, std::unordered_map<std::string, TokenId>* out);

// A "pattern" field: {"String": "…"} or {"Regex": "…"}.
struct Pattern {
  std::string text;
  bool is_regex = false;
};
Pattern pattern_at(const nlohmann::json& j, const std::string& path, const std::string& where);

}  // namespace linsweep::hf_json
