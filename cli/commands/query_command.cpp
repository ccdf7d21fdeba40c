// `linsweep query`: rows of one result table, filtered, projected, sorted, formatted.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <memory>

#include "cli/commands/commands.hpp"
#include "presentation/query.hpp"
#include "storage/store.hpp"
#include "storage/table.hpp"

namespace linsweep {
namespace {

struct QueryArgs {
  std::string store, table, format = "table";
  std::vector<std::string> where, columns, sort;
  std::int64_t limit = -1;  // none
  bool json = false, consolidated = false, all = false;
};

// "fits, all_linear, ...": every table of the registry, in its order.
std::string table_names() {
  std::string names;
  for (const Table& t : table_schemas()) names += (names.empty() ? "" : ", ") + t.name;
  return names;
}

int run_query_command(const QueryArgs& a) {
  const TableFormat format = a.json ? TableFormat::kJson : parse_table_format(a.format);
  const Store store = Store::open_read(a.store);  // no lock: sees committed units only
  if (a.table.empty()) {                          // which tables there are, one per line
    for (const Table& t : table_schemas()) std::printf("%s\n", t.name.c_str());
    return 0;
  }
  QueryOptions q;
  for (const auto& w : a.where) q.where.push_back(parse_condition(w));
  q.columns = a.columns;
  q.sort = a.sort;
  if (a.limit >= 0) q.limit = static_cast<std::size_t>(a.limit);
  const Store::Scope scope = a.all ? Store::Scope::kAll : Store::Scope::kCurrent;
  const QueryResult r = run_query(
      a.consolidated ? read_consolidated_table(store.consolidated_path(), a.table) : store.read_table(a.table, scope),
      q);
  for (const auto& note : r.notes) std::fprintf(stderr, "linsweep: note: %s\n", note.c_str());
  const std::string out = format_table(r.table, format, r.matched);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace

void add_query_command(CLI::App& root, CommandAction* action) {
  auto args = std::make_shared<QueryArgs>();
  CLI::App* cmd = root.add_subcommand(
      "query", "Rows of a result table (" + table_names() +
                   ") from the committed units, ordered by model, corpus, layer; safe while a sweep writes. "
                   "Without TABLE, lists the tables.");
  add_store_argument(cmd, &args->store);
  cmd->add_option("table", args->table, "table name (none: list the tables)");
  cmd->add_option("--where", args->where,
                  "col=v, col=a,b (any of), col!=a,b (none of), col=lo..hi (inclusive; a bound may be empty), "
                  "col=glob* (*, ? and [...] on strings); \\ escapes a character; repeatable, all must hold. "
                  "A value no row has is a note on stderr, or exit 2 when nothing in its condition matches");
  cmd->add_option("--columns", args->columns, "columns to print, comma-separated, in this order")->delimiter(',');
  cmd->add_option("--sort", args->sort, "sort keys, comma-separated; -col for descending")->delimiter(',');
  cmd->add_option("--limit", args->limit, "print at most N rows (after sorting)")
      ->type_name("N")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--format", args->format,
                  "table | csv (numbers bare, strings quoted when needed) | tsv | json (keys in column order) | md")
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "same as --format json (a list of row objects)");
  cmd->add_flag("--consolidated", args->consolidated,
                "read STORE/store.h5 (one file; as of its last rebuild) instead of the unit files");
  cmd->add_flag("--all", args->all,
                "superseded units' rows too, with columns current (1 or 0) and planned_by (docs/store.md, \"Slots\")")
      ->excludes("--consolidated");
  cmd->footer("Example: linsweep query runs/demo/store all_linear --where 'model=gpt2*' --sort delta_pct --limit 5");
  cmd->callback([args, action] { *action = [args] { return run_query_command(*args); }; });
}

}  // namespace linsweep
