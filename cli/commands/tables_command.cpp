// `linsweep tables`: the paper-style summary tables as Markdown, CSV and LaTeX.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.hpp"
#include "common/errors.hpp"
#include "common/path_confinement.hpp"
#include "presentation/report.hpp"
#include "storage/store.hpp"
#include "storage/store_layout.hpp"

namespace linsweep {
namespace {

struct TablesArgs {
  std::string store, out;
  bool json = false, quiet = false;
};

int run_tables(const TablesArgs& a) {
  const Store store = Store::open_read(a.store);
  const auto tables = build_report(store);
  const std::string out = a.out.empty() ? StoreLayout(a.store).report_dir() : a.out;
  if (a.out.empty()) require_real_entries(a.store, {"report/csv"});  // the default stays inside the store
  const ReportFiles written = write_report(tables, out);
  const std::vector<std::string>& files = written.files;
  const std::string& md = written.markdown;
  if (a.json) {
    nlohmann::json j = {{"tables", nlohmann::json::array()}, {"files", files}};
    for (const auto& t : tables) j["tables"].push_back({{"name", t.name}, {"title", t.title}, {"rows", t.rows.size()}});
    std::printf("%s\n", j.dump().c_str());
  } else {
    if (!a.quiet) std::fwrite(md.data(), 1, md.size(), stdout);
    if (tables.empty()) std::printf("(the store has no result rows yet)\n");
    std::printf("wrote %s, %s and %zu CSV files under %s/csv\n", files[0].c_str(), files[1].c_str(), tables.size(),
                out.c_str());
  }
  return 0;
}

}  // namespace

void add_tables_command(CLI::App& root, CommandAction* action) {
  auto args = std::make_shared<TablesArgs>();
  CLI::App* cmd = root.add_subcommand("tables", "Paper-style summary tables of a store as Markdown, CSV and LaTeX.");
  add_store_argument(cmd, &args->store);
  cmd->add_option("--out", args->out, "output directory (default: STORE/report)");
  cmd->add_flag("--json", args->json, "print what was written as JSON instead of the Markdown");
  cmd->add_flag("--quiet", args->quiet, "do not print the Markdown");
  cmd->footer("Example: linsweep tables runs/demo/store --out runs/demo/report --quiet");
  cmd->callback([args, action] { *action = [args] { return run_tables(*args); }; });
}

}  // namespace linsweep
