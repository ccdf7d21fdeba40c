// `linsweep-full`'s command line: every subcommand, --version, and unknown commands named
// (errors map to exit codes in parse_and_run; docs/cli.md, "Exit codes").
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands/commands.hpp"
#include "common/errors.hpp"
#include "common/suggest.hpp"
#include "orchestrator/build_info.hpp"

namespace linsweep {

int linsweep_main(int argc, char** argv) {
  const std::unique_ptr<CLI::App> root = make_root_app();
  CLI::App& app = *root;
  CommandAction action;
  add_eval_command(app, &action);
  add_tokenize_command(app, &action);
  add_inspect_command(app, &action);
  add_query_command(app, &action);
  add_compare_command(app, &action);
  add_tables_command(app, &action);
  add_plot_command(app, &action);
  add_report_command(app, &action);
  add_rebuild_command(app, &action);
  add_gc_command(app, &action);
  add_plan_command(app, &action);
  add_run_command(app, &action);
  add_resume_command(app, &action);
  add_status_command(app, &action);
  add_submit_command(app, &action);
  add_demo_command(app, &action);
  add_experiments_command(app, &action);
  add_export_command(app, &action);
  add_generate_command(app, &action);
  add_catalogue_command(app, &action);
  if (argc == 1) {  // no arguments: the short help
    std::fputs(app.help().c_str(), stdout);
    return 0;
  }
  if (argc == 2 && std::string(argv[1]) == "--version") {
    std::fputs(build_info_text().c_str(), stdout);
    return 0;
  }
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    std::vector<std::string> commands;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
      commands.push_back(sub->get_name());
    }
    if (!known) {
      std::fprintf(stderr, "linsweep: unknown command '%s'%s (known: %s)\n", argv[1],
                   did_you_mean(argv[1], commands).c_str(), names.c_str());
      return static_cast<int>(ExitCode::kBadInput);
    }
  }
  return parse_and_run(app, action, argc, argv);
}

}  // namespace linsweep
