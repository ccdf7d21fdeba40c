// `linsweep` entry point: parses the command line and maps errors to exit codes (DESIGN §8).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <string>

#include "common/errors.hpp"
#include "orchestrator/commands/commands.hpp"

namespace {

// One line: the first line of a (possibly multi-line) library message.
std::string first_line(const std::string& s) {
  auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

}  // namespace

int main(int argc, char** argv) {
  using linsweep::ExitCode;
  CLI::App app{"linsweep: measure where transformer MLP nonlinearity is needed, across models, layers and corpora.\n"
               "Run `linsweep COMMAND --help` for each command."};
  app.require_subcommand(1);
  linsweep::CommandAction action;
  linsweep::add_eval_command(app, &action);
  linsweep::add_tokenize_command(app, &action);
  linsweep::add_inspect_command(app, &action);
  linsweep::add_query_command(app, &action);
  linsweep::add_tables_command(app, &action);
  linsweep::add_plot_command(app, &action);
  linsweep::add_rebuild_command(app, &action);
  linsweep::add_plan_command(app, &action);
  linsweep::add_run_command(app, &action);
  linsweep::add_resume_command(app, &action);
  linsweep::add_status_command(app, &action);
  linsweep::add_submit_command(app, &action);
  linsweep::add_demo_command(app, &action);
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::fprintf(stderr, "linsweep: unknown command '%s' (known: %s)\n", argv[1], names.c_str());
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
  }
  try {
    return action();
  } catch (const linsweep::Error& e) {
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
