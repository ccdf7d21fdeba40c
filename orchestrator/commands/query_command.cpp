// `linsweep query`: rows of one result table, filtered, projected, sorted, formatted.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>

#include "orchestrator/commands/commands.hpp"
#include "storage/query.hpp"
#include "storage/store.hpp"

namespace linsweep {
namespace {

struct QueryArgs {
  std::string store, table, format = "table";
  std::vector<std::string> where, columns, sort;
  bool json = false, consolidated = false;
};

int run_query_command(const QueryArgs& a) {
  const Store store = Store::open_read(a.store);  // no lock: sees committed units only
  QueryOptions q;
  for (const auto& w : a.where) q.where.push_back(parse_condition(w));
  q.columns = a.columns;
  q.sort = a.sort;
  const Table t = run_query(a.consolidated ? read_consolidated_table(store.consolidated_path(), a.table)
                                           : store.read_table(a.table),
                            q);
  const std::string out = format_table(t, a.json ? TableFormat::kJson : parse_table_format(a.format));
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace

void add_query_command(CLI::App& root, CommandAction* action) {
  auto args = std::make_shared<QueryArgs>();
  CLI::App* cmd = root.add_subcommand(
      "query", "Rows of a result table (fits, all_linear, gates, token_context, nofly, clusters, compound, progressive, "
               "finetune) from the committed units; safe while a sweep writes.");
  cmd->add_option("store", args->store, "store directory")->required();
  cmd->add_option("table", args->table, "table name")->required();
  cmd->add_option("--where", args->where, "col=value or col=lo..hi (inclusive; a bound may be empty); repeatable");
  cmd->add_option("--columns", args->columns, "columns to print, comma-separated")->delimiter(',');
  cmd->add_option("--sort", args->sort, "sort keys, comma-separated; -col for descending")->delimiter(',');
  cmd->add_option("--format", args->format, "table | csv | json | md")->capture_default_str();
  cmd->add_flag("--json", args->json, "same as --format json (a list of row objects)");
  cmd->add_flag("--consolidated", args->consolidated,
                "read STORE/store.h5 (one file; as of its last rebuild) instead of the unit files");
  cmd->callback([args, action] { *action = [args] { return run_query_command(*args); }; });
}

}  // namespace linsweep
