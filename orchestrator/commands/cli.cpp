// The `linsweep` command line: subcommands, --version, and errors mapped to exit codes
// (docs/architecture.md, "Exit codes").
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "common/heap_policy.hpp"
#include "common/suggest.hpp"
#include "orchestrator/build_info.hpp"
#include "orchestrator/commands/commands.hpp"
#include "orchestrator/commands/help_format.hpp"

namespace {

// One line: the first line of a (possibly multi-line) library message.
std::string first_line(const std::string& s) {
  auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

}  // namespace

namespace linsweep {

int linsweep_main(int argc, char** argv) {
  // The program is "linsweep" in every usage line, whatever path it was started by.
  CLI::App app{
      "linsweep: measure where transformer MLP nonlinearity is needed, across models, layers and corpora.\n"
      "Run `linsweep COMMAND --help` for each command; docs/ has the details.",
      "linsweep"};
  use_help_formatter(app);  // before the subcommands, which inherit it
  app.require_subcommand(1);
  bool version = false;  // handled before parsing (no subcommand is needed with it); declared for --help
  app.add_flag("--version", version, "print the versions of linsweep, LibTorch, HDF5 and MPI, and exit");
  CommandAction action;
  add_eval_command(app, &action);
  add_tokenize_command(app, &action);
  add_inspect_command(app, &action);
  add_query_command(app, &action);
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
  app.footer("Example: linsweep run examples/fixture_measure.yaml; linsweep query runs/fixture-measure fits");
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "linsweep: %s (see --help)\n", first_line(e.what()).c_str());
    return static_cast<int>(ExitCode::kBadInput);
  } catch (const Error& e) {  // a subcommand's checks of its flags (refuse_flags)
    std::fprintf(stderr, "linsweep: %s (see --help)\n", first_line(e.what()).c_str());
    return static_cast<int>(e.exit_code());
  }
  try {
    // Every command that runs a model allocates large blocks; under another allocator (a
    // sanitizer's) its own policy stands.
    static_cast<void>(keep_large_blocks_in_heap());
    return action();
  } catch (const Error& e) {
    std::fprintf(stderr, "linsweep: %s\n", first_line(e.what()).c_str());
    return static_cast<int>(e.exit_code());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "linsweep: out of memory\n");
    return static_cast<int>(ExitCode::kUnitsFailed);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "linsweep: internal error: %s\n", first_line(e.what()).c_str());
    return static_cast<int>(ExitCode::kUnitsFailed);
  }
}

}  // namespace linsweep
