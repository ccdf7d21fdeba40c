// `linsweep plot`: SVG figures of a store.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "orchestrator/commands/commands.hpp"
#include "common/path_confinement.hpp"
#include "storage/figures.hpp"
#include "storage/store.hpp"

namespace linsweep {
namespace {

struct PlotArgs {
  std::string store, out;
  bool json = false;
};

int run_plot(const PlotArgs& a) {
  const Store store = Store::open_read(a.store);
  if (a.out.empty()) require_real_entries(a.store, {"figures"});  // the default stays inside the store
  const auto files = write_figures(store, a.out.empty() ? a.store + "/figures" : a.out);
  if (a.json) {
    std::printf("%s\n", nlohmann::json({{"files", files}}).dump().c_str());
  } else {
    for (const auto& f : files) std::printf("%s\n", f.c_str());
    if (files.empty()) std::printf("(no figures: the store has no all_linear or gates rows and no shards with delta)\n");
  }
  return 0;
}

}  // namespace

void add_plot_command(CLI::App& root, CommandAction* action) {
  auto args = std::make_shared<PlotArgs>();
  CLI::App* cmd = root.add_subcommand(
      "plot", "SVG figures: per-layer all-linear cost with bootstrap bars, gate share routed linear, delta histograms.");
  cmd->add_option("store", args->store, "store directory")->required();
  cmd->add_option("--out", args->out, "output directory (default: STORE/figures)");
  cmd->add_flag("--json", args->json, "print the written files as JSON");
  cmd->callback([args, action] { *action = [args] { return run_plot(*args); }; });
}

}  // namespace linsweep
