// `linsweep report`: one self-contained HTML page of a store's tables and figures, with the
// tables as CSV and the figures as SVG beside it.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.hpp"
#include "common/path_confinement.hpp"
#include "orchestrator/build_info.hpp"
#include "presentation/report_html.hpp"
#include "storage/store.hpp"
#include "storage/store_layout.hpp"

namespace linsweep {
namespace {

struct ReportArgs {
  std::string store, out;
  bool json = false;
};

int run_report(const ReportArgs& a) {
  const Store store = Store::open_read(a.store);
  const std::string out = a.out.empty() ? StoreLayout(a.store).report_dir() : a.out;
  if (a.out.empty()) require_real_entries(a.store, {"report/csv", "report/figures"});  // the default stays inside
  const HtmlReportFiles written = write_html_report(store, out, linsweep_version());
  if (a.json) {
    std::printf("%s\n", nlohmann::json({{"index", written.index},
                                        {"tables", written.tables},
                                        {"figures", written.figures},
                                        {"files", written.files}})
                            .dump()
                            .c_str());
  } else {
    std::printf("wrote %s (%zu tables, %zu figures; CSV under %s/csv, SVG under %s/figures)\n", written.index.c_str(),
                written.tables, written.figures, out.c_str(), out.c_str());
  }
  return 0;
}

}  // namespace

void add_report_command(CLI::App& root, CommandAction* action) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = root.add_subcommand(
      "report",
      "One self-contained HTML page (index.html) of a store: contents, provenance (spec, hosts, times, failures), "
      "the paper's figures and tables where the store has their data, a part per model; tables also as CSV, "
      "figures as SVG.");
  add_store_argument(cmd, &args->store);
  cmd->add_option("--out", args->out, "output directory (default: STORE/report)");
  cmd->add_flag("--json", args->json, "print what was written as JSON");
  cmd->footer("Example: linsweep report runs/demo/store --out runs/demo/report");
  cmd->callback([args, action] { *action = [args] { return run_report(*args); }; });
}

}  // namespace linsweep
