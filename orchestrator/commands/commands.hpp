// The `linsweep` subcommands: each file adds one to the CLI and runs it through library APIs.
#pragma once

#include <functional>
#include <string>

namespace CLI {
class App;
}

namespace linsweep {

// Runs the parsed command and returns its exit code; set by the subcommand that was chosen.
using CommandAction = std::function<int()>;

// Each adds its subcommand (options, --help text) to `root` and, when chosen, stores its
// action in `*action`.
void add_eval_command(CLI::App& root, CommandAction* action);
void add_tokenize_command(CLI::App& root, CommandAction* action);
void add_inspect_command(CLI::App& root, CommandAction* action);
void add_query_command(CLI::App& root, CommandAction* action);
void add_tables_command(CLI::App& root, CommandAction* action);
void add_plot_command(CLI::App& root, CommandAction* action);
void add_rebuild_command(CLI::App& root, CommandAction* action);
void add_plan_command(CLI::App& root, CommandAction* action);
void add_run_command(CLI::App& root, CommandAction* action);
void add_status_command(CLI::App& root, CommandAction* action);
void add_resume_command(CLI::App& root, CommandAction* action);
void add_submit_command(CLI::App& root, CommandAction* action);
void add_demo_command(CLI::App& root, CommandAction* action);

struct SubmitOptions;
struct SubmitReport;
// Shared by `submit` and `resume --submit`.
void add_submit_options(CLI::App* cmd, SubmitOptions* options);
int print_submit_report(const SubmitReport& report, const SubmitOptions& options, bool json);

struct RunOptions;
// `run` and `resume`: one process, or the MPI coordinator when launched with several ranks.
int run_command(const std::string& spec, const RunOptions& options);

}  // namespace linsweep
