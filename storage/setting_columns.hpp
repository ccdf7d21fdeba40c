// The columns a sweep's settings add to every table read from a store (docs/store.md,
// "Settings"): `setting`, the setting's name, and one column per swept key.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "storage/table.hpp"

namespace linsweep {

// "all_linear.bootstrap=200,context=32": a setting's values in key order (strings as they
// are, other values as JSON), for slots, messages and the `setting` column.
std::string setting_name(const nlohmann::json& setting);

// The setting in a unit's provenance JSON ({"slot", ..., "setting": {key: value}}), or an
// empty object when it has none (a unit shared by every setting, or no sweep).
nlohmann::json setting_of(const std::string& provenance);

// Appends to each table (all of whose rows have a `unit` column) `setting` (string: the
// unit's setting as "key=value,...", "" for a unit with none) and one column per key of any
// unit's setting, in key order: float where every value of the key is a number (NaN where a
// unit has none), else string (JSON text for lists, "" where a unit has none). A key that is
// already a column of a table is not added to it. `settings`: unit id -> its setting; units
// absent have none. Adds nothing when no unit has a setting.
void add_setting_columns(std::map<std::string, Table>& tables, const std::map<std::string, nlohmann::json>& settings);

}  // namespace linsweep
