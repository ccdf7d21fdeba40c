// The parameters every unit kind that reads a corpus through a model shares, in one struct, and
// the JSON forms of a unit's parameters. Each kind declares its own parameter struct next to its
// code, holding a UnitBasics as `basics` plus its own fields, and reads it once per unit.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/corpus/windows.hpp"

namespace linsweep {

// {"start": …, "tokens": …}
inline void to_json(nlohmann::json& j, const Split& s) { j = {{"start", s.start}, {"tokens", s.tokens}}; }
inline void from_json(const nlohmann::json& j, Split& s) {
  j.at("start").get_to(s.start);
  j.at("tokens").get_to(s.tokens);
}

// What a unit reads and with which surrogates. A field a kind does not use stays at its zero
// value and is left out of the unit's parameters (so out of its id): a split of 0 tokens, a
// context or λ of 0 (the spec never allows either), an empty format.
struct UnitBasics {
  Split split;               // the token range whose windows it reads
  std::int64_t context = 0;  // window length T
  double lambda = 0;         // the ridge λ of the surrogates it substitutes
  std::string format;        // the corpus's format (text, npy, ...)
};

// Writes the fields `b` sets into the object `j` under "split", "context", "lambda", "format".
void put_basics(nlohmann::json& j, const UnitBasics& b);
// The fields `j` holds; the others stay zero. Throws nlohmann::json::exception on a mistyped one.
UnitBasics get_basics(const nlohmann::json& j);

}  // namespace linsweep

// to_json/from_json for a unit parameter struct `Type` with a `UnitBasics basics` member and
// the listed fields of its own (as NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE, plus the basics).
#define LINSWEEP_UNIT_PARAMS(Type, ...)                                                 \
  inline void to_json(nlohmann::json& nlohmann_json_j, const Type& nlohmann_json_t) {   \
    nlohmann_json_j = nlohmann::json::object();                                         \
    ::linsweep::put_basics(nlohmann_json_j, nlohmann_json_t.basics);                    \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))            \
  }                                                                                     \
  inline void from_json(const nlohmann::json& nlohmann_json_j, Type& nlohmann_json_t) { \
    nlohmann_json_t.basics = ::linsweep::get_basics(nlohmann_json_j);                   \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_FROM, __VA_ARGS__))          \
  }
