// Settings of a sweep side by side (docs/spec.md, "Sweeps"): each per-window NLL series that
// two or more settings hold, its Δ% in each with a bootstrap interval, and its difference from
// a setting that holds the same windows, with a paired interval over them. `linsweep compare` and
// the report's "Settings side by side" table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "presentation/report.hpp"
#include "presentation/section.hpp"

namespace linsweep {

class Store;

struct SettingComparison {
  std::string experiment, model, corpus;
  std::string series;        // as stored below the experiment: "layer3" (all_linear), "layer3/learned" (gate), "gated"
  std::string setting;       // the setting of the unit that holds it
  std::int64_t windows = 0;  // its windows
  double delta = 0, lo = 0, hi = 0;           // Δ% against the untouched model on them, 95% bootstrap interval
  std::string baseline;                       // the setting it is paired with ("" when none: see compare_settings)
  std::int64_t shared = 0;                    // windows shared with the baseline (same start, same context)
  double diff = 0, diff_lo = 0, diff_hi = 0;  // Δ% minus the baseline's on the shared windows, paired 95% interval
                                              // (NaN when unpaired)
  std::int64_t resamples = 0;                 // bootstrap draws behind both intervals
};

// Bootstrap draws of a unit that records none in its parameters.
inline constexpr std::int64_t kDefaultResamples = 1000;

// Every series of per-window NLL (docs/store.md, "Per-window NLL"; not gate's random draws or
// curve points) that current units of two or more settings hold, one row per setting, in
// (experiment, model, corpus, series, setting) order. Each setting pairs with the first setting
// before it in name order that holds some of the same windows (same start and context; none for
// the first of each context or split). Intervals are percentile bootstraps over windows
// (`seed`): `resamples` draws, or without it the `bootstrap` of the unit that holds the series
// (kDefaultResamples for a unit without one), so that an interval agrees in width with the one
// the unit stored. `units`: the store's `units` table as Store::read_tables gives it (the
// current units). Empty when no unit has a setting. Reads the arrays of those units only.
// Throws StorageError for a corrupt unit.
std::vector<SettingComparison> compare_settings(const Store& store, const Table& units,
                                                std::optional<std::int64_t> resamples = std::nullopt,
                                                std::uint64_t seed = 0);

// The comparison as a report table ("settings"); no rows when `rows` is empty. `shown`: the
// setting the rest of the report shows (filter_to_one_setting), named in the note.
ReportTable settings_table(const std::vector<SettingComparison>& rows, const std::string& shown);

// When `tables` (Store::read_tables) hold a sweep's settings: the rows of one of them, each
// swept key at its smallest value, and the rows of units that every setting shares; `shown`
// gets that setting's name. Otherwise `tables` as they are and "". The report's sections
// assume one result per slot of the sweep; this gives them that.
TableSet filter_to_one_setting(const TableSet& tables, std::string* shown);

}  // namespace linsweep
