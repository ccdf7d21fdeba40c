// Per-window NLL series of several settings, paired on the windows they share.
#include "presentation/setting_comparison.hpp"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

#include "common/bootstrap.hpp"
#include "presentation/cells.hpp"
#include "storage/setting_columns.hpp"
#include "storage/store.hpp"
#include "storage/table_def.hpp"
#include "storage/units_table.hpp"

namespace linsweep {
namespace {

// One setting's per-window NLL sums of a series, with the untouched model's.
struct Held {
  std::string setting;
  std::vector<double> start, base, nll;
  std::int64_t context = 0;
  std::int64_t resamples = 0;  // the unit's bootstrap draws
};

// (experiment, model, corpus, series) -> each setting's series.
using Groups = std::map<std::vector<std::string>, std::vector<Held>>;

bool compared(const std::string& series) {
  return series != "window_start" && series != "base" && series.rfind("random_draws/", 0) != 0 &&
         series.rfind("curve/", 0) != 0;
}

// Adds the series of one unit's arrays: "nll/<model>/<corpus>/<experiment>[/layer<ℓ>]/<name>".
void add_unit(const UnitResult& u, const std::string& setting, std::int64_t context, std::int64_t resamples,
              Groups* groups) {
  for (const auto& [key, starts] : u.arrays) {
    const std::string tail = "/window_start";
    if (key.rfind("nll/", 0) != 0 || key.size() < tail.size() ||
        key.compare(key.size() - tail.size(), tail.size(), tail) != 0)
      continue;
    const std::string prefix = key.substr(0, key.size() - tail.size());
    std::vector<std::string> parts;  // nll, model, corpus, experiment[, layer]
    for (std::size_t at = 0, next; at <= prefix.size(); at = next + 1) {
      next = prefix.find('/', at);
      if (next == std::string::npos) next = prefix.size();
      parts.push_back(prefix.substr(at, next - at));
    }
    const auto base = u.arrays.find(prefix + "/base");
    if (parts.size() < 4 || base == u.arrays.end()) continue;
    const std::string layer = parts.size() > 4 ? parts[4] + "/" : "";
    for (auto it = u.arrays.lower_bound(prefix + "/"); it != u.arrays.end() && it->first.rfind(prefix + "/", 0) == 0;
         ++it) {
      const std::string name = it->first.substr(prefix.size() + 1);
      if (!compared(name) || it->second.values.size() != starts.values.size()) continue;
      (*groups)[{parts[3], parts[1], parts[2], layer + name}].push_back(
          Held{setting, starts.values, base->second.values, it->second.values, context, resamples});
    }
  }
}

bool shares_a_window(const Held& a, const Held& b) {
  const std::set<double> starts(b.start.begin(), b.start.end());
  for (const double s : a.start)
    if (starts.count(s)) return true;
  return false;
}

std::vector<std::size_t> all_windows(std::size_t n) {
  std::vector<std::size_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// The row of `h`, paired with `b` (null for the baseline itself), with `resamples` draws.
SettingComparison compare_one(const std::vector<std::string>& key, const Held& h, const Held* b, std::int64_t resamples,
                              std::uint64_t seed) {
  SettingComparison r;
  r.resamples = resamples;
  r.experiment = key[0], r.model = key[1], r.corpus = key[2], r.series = key[3], r.setting = h.setting;
  const std::int64_t T = h.context - 1;
  r.windows = static_cast<std::int64_t>(h.nll.size());
  r.delta = window_delta(h.base, h.nll, all_windows(h.nll.size()), T);
  std::tie(r.lo, r.hi) = bootstrap_interval(h.nll.size(), resamples, seed, [&](const std::vector<std::size_t>& p) {
    return window_delta(h.base, h.nll, p, T);
  });
  r.diff = r.diff_lo = r.diff_hi = std::nan("");
  if (b == nullptr) return r;
  r.baseline = b->setting;
  std::vector<std::size_t> mine, theirs;  // indices of the shared windows
  if (b->context == h.context) {
    std::map<double, std::size_t> at;
    for (std::size_t i = 0; i < b->start.size(); ++i) at[b->start[i]] = i;
    for (std::size_t i = 0; i < h.start.size(); ++i)
      if (auto it = at.find(h.start[i]); it != at.end()) mine.push_back(i), theirs.push_back(it->second);
  }
  r.shared = static_cast<std::int64_t>(mine.size());
  if (mine.empty()) return r;
  auto diff = [&](const std::vector<std::size_t>& p) {
    std::vector<std::size_t> a(p.size()), c(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) a[i] = mine[p[i]], c[i] = theirs[p[i]];
    return window_delta(h.base, h.nll, a, T) - window_delta(b->base, b->nll, c, T);
  };
  r.diff = diff(all_windows(mine.size()));
  std::tie(r.diff_lo, r.diff_hi) = bootstrap_interval(mine.size(), resamples, seed, diff);
  return r;
}

// The bootstrap draws a unit's parameters record (a positive integer `bootstrap`).
std::int64_t unit_resamples(const nlohmann::json& params) {
  if (params.contains("bootstrap") && params["bootstrap"].is_number_integer() &&
      params["bootstrap"].get<std::int64_t>() > 0)
    return params["bootstrap"].get<std::int64_t>();
  return kDefaultResamples;
}

}  // namespace

std::vector<SettingComparison> compare_settings(const Store& store, const Table& units,
                                                std::optional<std::int64_t> resamples, std::uint64_t seed) {
  Groups groups;
  for (const UnitRow& u : units_table().rows(units)) {
    const auto prov = nlohmann::json::parse(u.params, nullptr, false);  // {"slot", "params", ..., "setting"}
    if (!prov.is_object() || !prov.contains("setting") || !prov["setting"].is_object() || prov["setting"].empty())
      continue;
    const nlohmann::json& params = prov.contains("params") ? prov["params"] : nlohmann::json();
    if (!params.is_object() || !params.contains("context") || !params["context"].is_number_integer()) continue;
    add_unit(store.read_unit(u.unit), setting_name(prov["setting"]), params["context"].get<std::int64_t>(),
             resamples.value_or(unit_resamples(params)), &groups);
  }
  std::vector<SettingComparison> out;
  for (auto& [key, held] : groups) {
    std::stable_sort(held.begin(), held.end(), [](const Held& a, const Held& b) { return a.setting < b.setting; });
    if (held.size() < 2) continue;
    for (std::size_t i = 0; i < held.size(); ++i) {
      const Held* partner = nullptr;  // the first setting before it whose windows it shares
      for (std::size_t j = 0; j < i && partner == nullptr; ++j)
        if (held[j].context == held[i].context && shares_a_window(held[i], held[j])) partner = &held[j];
      out.push_back(compare_one(key, held[i], partner, held[i].resamples, seed));
    }
  }
  return out;
}

ReportTable settings_table(const std::vector<SettingComparison>& rows, const std::string& shown) {
  ReportTable t{.name = "settings",
                .title = "Settings side by side: Δ% per setting, and its difference from the setting it pairs with",
                .headers = {"experiment", "model", "corpus", "series", "setting", "windows", "Δ% [95% CI]",
                            "paired with", "difference [paired 95% CI]", "shared windows"},
                .rows = {},
                .note = std::string(kZeroNote) +
                        ". Each setting pairs with the first setting (in name order) that holds some of its windows "
                        "(same start, same context); the paired interval resamples those windows, as many times as "
                        "the unit drew for its own interval." +
                        (shown.empty() ? "" : " The other tables and figures show setting " + shown + "."),
                .paper = {},
                .diagnostic = true};
  for (const auto& r : rows) {
    const bool paired = !r.baseline.empty();
    t.rows.push_back({r.experiment, r.model, r.corpus, r.series, r.setting, std::to_string(r.windows),
                      delta_cell(r.delta, r.lo, r.hi), paired ? r.baseline : "–",
                      paired ? delta_cell(r.diff, r.diff_lo, r.diff_hi) : "–",
                      paired ? std::to_string(r.shared) : "–"});
  }
  return t;
}

TableSet filter_to_one_setting(const TableSet& tables, std::string* shown) {
  shown->clear();
  const auto units = tables.find(units_table().name());
  if (units == tables.end()) return tables;
  std::map<std::string, nlohmann::json> of;  // unit -> its setting
  nlohmann::json chosen = nlohmann::json::object();
  for (const UnitRow& u : units_table().rows(units->second)) {
    nlohmann::json s = setting_of(u.params);
    for (auto it = s.begin(); it != s.end(); ++it)
      if (!chosen.contains(it.key()) || it.value() < chosen[it.key()]) chosen[it.key()] = it.value();
    if (!s.empty()) of.emplace(u.unit, std::move(s));
  }
  if (of.empty()) return tables;
  *shown = setting_name(chosen);
  TableSet out;
  for (const auto& [name, t] : tables) {
    Table kept{t.name, t.columns, {}};
    const int unit = t.column_index("unit");
    for (const auto& row : t.rows) {
      const auto s = unit < 0 ? of.end() : of.find(std::get<std::string>(row[static_cast<std::size_t>(unit)]));
      bool keep = true;
      if (s != of.end())
        for (auto it = s->second.begin(); it != s->second.end(); ++it) keep = keep && chosen[it.key()] == it.value();
      if (keep) kept.rows.push_back(row);
    }
    out.emplace(name, std::move(kept));
  }
  return out;
}

}  // namespace linsweep
