// `linsweep plot`: SVG figures of a store.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.hpp"
#include "common/path_confinement.hpp"
#include "presentation/figures.hpp"
#include "storage/store.hpp"
#include "storage/store_layout.hpp"

namespace linsweep {
namespace {

struct PlotArgs {
  std::string store, out;
  bool json = false;
};

int run_plot(const PlotArgs& a) {
  const Store store = Store::open_read(a.store);
  if (a.out.empty()) require_real_entries(a.store, {"figures"});  // the default stays inside the store
  const auto files = write_figures(store, a.out.empty() ? StoreLayout(a.store).figures_dir() : a.out);
  if (a.json) {
    std::printf("%s\n", nlohmann::json({{"files", files}}).dump().c_str());
  } else {
    for (const auto& f : files) std::printf("%s\n", f.c_str());
    if (files.empty()) std::printf("(no figures: the store has no rows that a figure draws yet)\n");
  }
  return 0;
}

}  // namespace

void add_plot_command(CLI::App& root, CommandAction* action) {
  auto args = std::make_shared<PlotArgs>();
  CLI::App* cmd = root.add_subcommand(
      "plot",
      "The report's figures as SVG files: the paper's Fig. 1-6 where the store has their data, and per-model "
      "figures (all-linear cost, gate shares, token vs context, cost against share, delta histograms).");
  add_store_argument(cmd, &args->store);
  cmd->add_option("--out", args->out, "output directory (default: STORE/figures)");
  cmd->add_flag("--json", args->json, "print the written files as JSON");
  cmd->footer("Example: linsweep plot runs/demo/store --out runs/demo/figures");
  cmd->callback([args, action] { *action = [args] { return run_plot(*args); }; });
}

}  // namespace linsweep
