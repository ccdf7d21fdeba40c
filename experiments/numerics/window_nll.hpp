// Per-window NLL sums kept beside a unit's Δ%, so that any interval can be recomputed, or two
// experiments paired window by window, from the store alone (docs/store.md, "Per-window NLL").
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/corpus/windows.hpp"
#include "storage/unit_file.hpp"

namespace linsweep {

// The array prefix of one experiment's per-window NLL in a unit:
// "nll/<model>/<corpus>/<experiment>", plus "/layer<ℓ>" when `layer` ≥ 0.
std::string window_nll_key(const std::string& model, const std::string& corpus, const std::string& experiment,
                           std::int64_t layer = -1);

// Adds under `prefix`: window_start [W], each window's first token offset in the corpus's
// token stream (split.start + i·context: equal offsets are the same window in any unit of that
// corpus and context), and one array [W] per (name, per-window NLL sums) in `series`, each sum
// over the window's scored positions 0..T−2 in nats. Throws std::invalid_argument (a caller's
// bug) when a series does not hold W values (W = split.tokens / context).
void add_window_nll(UnitResult& out, const std::string& prefix, const Split& split, std::int64_t context,
                    const std::vector<std::pair<std::string, std::vector<double>>>& series);

}  // namespace linsweep
