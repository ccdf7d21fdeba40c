// JSON forms shared by the unit parameters of several kinds. Each kind declares its own
// parameter struct next to its code, with to_json/from_json, and reads it once per unit.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/corpus/windows.hpp"

namespace linsweep {

// {"start": …, "tokens": …}
inline void to_json(nlohmann::json& j, const Split& s) { j = {{"start", s.start}, {"tokens", s.tokens}}; }
inline void from_json(const nlohmann::json& j, Split& s) {
  j.at("start").get_to(s.start);
  j.at("tokens").get_to(s.tokens);
}

}  // namespace linsweep
