// The root of linsweep's command line and the parse-run-map-errors loop, shared by the
// `linsweep` executable (the light commands) and `linsweep-full` (every command).
#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "cli/commands/commands.hpp"
#include "cli/commands/help_format.hpp"
#include "common/errors.hpp"
#include "common/heap_policy.hpp"

namespace {

// One line: the first line of a (possibly multi-line) library message.
std::string first_line(const std::string& s) {
  auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

}  // namespace

namespace linsweep {

std::unique_ptr<CLI::App> make_root_app() {
  // The program is "linsweep" in every usage line, whatever path it was started by.
  auto app = std::make_unique<CLI::App>(
      "linsweep: measure where transformer MLP nonlinearity is needed, across models, layers and corpora.\n"
      "Run `linsweep COMMAND --help` for each command; docs/ has the details.",
      "linsweep");
  use_help_formatter(*app);  // before the subcommands, which inherit it
  app->require_subcommand(1);
  // Handled before parsing (no subcommand is needed with it); declared for --help.
  app->add_flag_function(
      "--version", [](std::int64_t) {}, "print the versions of linsweep, LibTorch, HDF5 and MPI, and exit");
  app->footer("Example: linsweep run examples/fixture_measure.yaml; linsweep query runs/fixture-measure fits");
  return app;
}

int parse_and_run(CLI::App& app, const CommandAction& action, int argc, char** argv) {
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
