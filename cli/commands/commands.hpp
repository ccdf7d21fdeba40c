// The `linsweep` subcommands: each file adds one to the CLI and runs it through library APIs.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace linsweep {

// Runs the parsed command and returns its exit code; set by the subcommand that was chosen.
using CommandAction = std::function<int()>;

// `linsweep-full`, every command: parses argv, runs the chosen subcommand, and returns the exit
// code (errors become one line on stderr and their code). A test binary may register
// experiments of its own before calling it.
int linsweep_main(int argc, char** argv);

// `linsweep`: runs query, compare, status, gc, tokenize and catalogue itself, without loading LibTorch (it
// registers the tables from a catalogue written at build time), and executes `linsweep-full`
// beside it, with the same arguments, for everything else. Returns the exit code; when `linsweep-full` cannot be
// started, says so on stderr and returns 1.
int linsweep_front_main(int argc, char** argv);

// The root `linsweep` app (description, help format, --version, footer) without subcommands.
std::unique_ptr<CLI::App> make_root_app();

// Parses argv with `app` (its subcommands added), runs `action` and returns the exit code:
// usage errors are 2, library errors their ExitCode, anything else 1; each is one stderr line.
int parse_and_run(CLI::App& app, const CommandAction& action, int argc, char** argv);

// Each adds its subcommand (options, --help text) to `root` and, when chosen, stores its
// action in `*action`.
void add_eval_command(CLI::App& root, CommandAction* action);
void add_tokenize_command(CLI::App& root, CommandAction* action);
void add_inspect_command(CLI::App& root, CommandAction* action);
void add_query_command(CLI::App& root, CommandAction* action);
void add_compare_command(CLI::App& root, CommandAction* action);
void add_tables_command(CLI::App& root, CommandAction* action);
void add_plot_command(CLI::App& root, CommandAction* action);
void add_report_command(CLI::App& root, CommandAction* action);
void add_rebuild_command(CLI::App& root, CommandAction* action);
void add_gc_command(CLI::App& root, CommandAction* action);
void add_plan_command(CLI::App& root, CommandAction* action);
void add_run_command(CLI::App& root, CommandAction* action);
void add_status_command(CLI::App& root, CommandAction* action);
void add_resume_command(CLI::App& root, CommandAction* action);
void add_submit_command(CLI::App& root, CommandAction* action);
void add_demo_command(CLI::App& root, CommandAction* action);
void add_experiments_command(CLI::App& root, CommandAction* action);
void add_export_command(CLI::App& root, CommandAction* action);
void add_generate_command(CLI::App& root, CommandAction* action);
void add_catalogue_command(CLI::App& root, CommandAction* action);

// STORE, the store directory, as a required positional.
void add_store_argument(CLI::App* cmd, std::string* store);

// Where `spec`, `overrides` and `--store` of a command that reads a spec go.
struct SpecArguments {
  std::string* spec;
  std::vector<std::string>* overrides;
  std::string* store;  // the --store override, empty when not given
};
// SPEC, then OVERRIDES... (`overrides_note` ends their help), then --store and -m (which turns
// each key=a,b among the overrides into key=choice(a,b), a sweep).
void add_spec_arguments(CLI::App* cmd, const SpecArguments& args, const std::string& overrides_note = "");

struct SubmitOptions;
struct SubmitReport;
// Shared by `submit` and `resume --submit`.
void add_submit_options(CLI::App* cmd, SubmitOptions* options);
int print_submit_report(const SubmitReport& report, const SubmitOptions& options, bool json);

struct SweepSpec;
// `plan`, `run --dry-run` and `resume --dry-run`: every unit of the spec as done, pending or
// rerun (read-only: the store is opened for reading when it exists), as text or JSON.
int print_plan(const std::string& spec_path, const SweepSpec& spec, bool json);

// Throws InputError(kBadInput) "<command>: <flag> <why>" for the first of `flags` given on
// `cmd`: a flag that has no effect in the mode it was given in is refused, never ignored.
void refuse_flags(const CLI::App* cmd, const std::vector<std::string>& flags, const std::string& why);

struct RunOptions;
// `run` and `resume`: one process, or the MPI coordinator when launched with several ranks.
int run_command(const std::string& spec, const RunOptions& options);

}  // namespace linsweep
