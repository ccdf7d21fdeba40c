// `linsweep compare`: a sweep's settings side by side, paired on the windows they share.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands/commands.hpp"
#include "presentation/query.hpp"
#include "presentation/setting_comparison.hpp"
#include "storage/store.hpp"
#include "storage/units_table.hpp"

namespace linsweep {
namespace {

struct CompareArgs {
  std::string store, experiment, model;
  std::int64_t resamples = 0;  // 0: each unit's own bootstrap count
  bool json = false;
};

nlohmann::json to_json(const SettingComparison& r) {
  auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); };
  return {{"experiment", r.experiment}, {"model", r.model},           {"corpus", r.corpus},
          {"series", r.series},         {"setting", r.setting},       {"windows", r.windows},
          {"delta_pct", num(r.delta)},  {"delta_lo", num(r.lo)},      {"delta_hi", num(r.hi)},
          {"baseline", r.baseline},     {"shared_windows", r.shared}, {"diff_pct", num(r.diff)},
          {"diff_lo", num(r.diff_lo)},  {"diff_hi", num(r.diff_hi)},  {"resamples", r.resamples}};
}

int run_compare_command(const CompareArgs& a) {
  const Store store = Store::open_read(a.store);  // no lock: sees committed units only
  std::vector<SettingComparison> rows;
  const std::optional<std::int64_t> resamples = a.resamples > 0 ? std::optional(a.resamples) : std::nullopt;
  for (auto& r : compare_settings(store, store.read_table(units_table().name()), resamples))
    if ((a.experiment.empty() || r.experiment == a.experiment) && (a.model.empty() || r.model == a.model))
      rows.push_back(std::move(r));
  if (a.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rows) out.push_back(to_json(r));
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  if (rows.empty()) {
    std::printf("%s: no series that two settings hold (sweep a spec value: linsweep run SPEC -m key=a,b)\n",
                a.store.c_str());
    return 0;
  }
  const ReportTable t = settings_table(rows, "");
  Table text{"settings", {}, {}};
  for (const auto& h : t.headers) text.columns.push_back({h, ColumnType::kString});
  for (const auto& r : t.rows) text.rows.emplace_back(r.begin(), r.end());
  const std::string out = format_table(text, TableFormat::kTable);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::printf("\n%s\n", t.note.c_str());
  return 0;
}

}  // namespace

void add_compare_command(CLI::App& root, CommandAction* action) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = root.add_subcommand(
      "compare",
      "A sweep's settings side by side (runs with -m key=a,b or a spec's sweep: block): the Δ% of every per-window "
      "NLL series (all_linear layers, gates, compound, speed) in each setting with its 95% bootstrap interval, and "
      "its difference from the first setting with a paired interval over the windows both hold");
  add_store_argument(cmd, &args->store);
  cmd->add_option("--experiment", args->experiment,
                  "only this experiment's series (all_linear, gate, compound, speed)");
  cmd->add_option("--model", args->model, "only this model's series");
  cmd->add_option("--resamples", args->resamples,
                  "bootstrap resamples of windows (default: the count each unit used for its own interval, its "
                  "`bootstrap`, so that the intervals match the store's)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1000000}));
  cmd->add_flag("--json", args->json,
                "a list of row objects (delta_pct, delta_lo, delta_hi, diff_pct, ..., resamples)");
  cmd->footer("Example: linsweep compare runs/lambda --experiment all_linear");
  cmd->callback([args, action] { *action = [args] { return run_compare_command(*args); }; });
}

}  // namespace linsweep
