// "Did you mean": the known name closest to a misspelt one.
#pragma once

#include <string>
#include <vector>

namespace linsweep {

// The edit distance between two byte strings: insertions, deletions, substitutions and swaps of
// two adjacent bytes ("modle" is one edit from "model"), each counting one (optimal string alignment).
std::size_t edit_distance(const std::string& a, const std::string& b);

// The element of `known` closest to `name` when it is at most max(1, |name| / 3) edits away
// (ties: the first); else, for a name of 3 or more bytes, the shortest element that begins with
// it (an abbreviation: "delta" for "delta_pct"); else "". Case-sensitive.
std::string closest_name(const std::string& name, const std::vector<std::string>& known);

// " (did you mean 'x'?)" for closest_name, or "".
std::string did_you_mean(const std::string& name, const std::vector<std::string>& known);

}  // namespace linsweep
