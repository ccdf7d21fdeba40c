// `linsweep catalogue`: every result table this build writes, with its key columns, columns and
// their docs. Tests, scripts and docs that need table names or keys read it here, so the
// experiment that declares a table stays the one place that lists it.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands/commands.hpp"
#include "cli/commands/markdown_cell.hpp"
#include "common/errors.hpp"
#include "storage/table.hpp"

namespace linsweep {
namespace {

struct CatalogueArgs {
  std::string table;  // empty: every table
  bool json = false, markdown = false;
};

const char* column_type_name(ColumnType type) {
  switch (type) {
    case ColumnType::kInt:
      return "int";
    case ColumnType::kFloat:
      return "float";
    case ColumnType::kString:
      return "string";
  }
  return "string";
}

nlohmann::json table_json(const Table& t) {
  nlohmann::json keys = nlohmann::json::array(), columns = nlohmann::json::array();
  for (const Column& c : t.columns) {
    if (c.key) keys.push_back(c.name);
    columns.push_back({{"name", c.name},
                       {"type", column_type_name(c.type)},
                       {"key", c.key},
                       {"required", c.required},
                       {"doc", c.doc}});
  }
  return {{"name", t.name}, {"doc", t.doc}, {"keys", keys}, {"columns", columns}};
}

void print_table(const Table& t) {
  std::string keys;
  for (const Column& c : t.columns)
    if (c.key) keys += (keys.empty() ? "" : ", ") + c.name;
  std::printf("%s: %s\n  keys: %s\n", t.name.c_str(), t.doc.c_str(), keys.empty() ? "(none)" : keys.c_str());
  for (const Column& c : t.columns)
    std::printf("  %-24s %-6s %s\n", c.name.c_str(), column_type_name(c.type), c.doc.c_str());
}

// The table as the docs show it (docs/experiments/): its doc line, then one row per column.
std::string markdown_table(const Table& t) {
  std::string out =
      "`" + t.name + "`: " + markdown_cell(t.doc) + "\n\n| column | type | key | meaning |\n|---|---|---|---|\n";
  for (const Column& c : t.columns)
    out += "| `" + c.name + "` | " + column_type_name(c.type) + " | " + (c.key ? "yes" : "") + " | " +
           markdown_cell(c.doc) + " |\n";
  return out;
}

int run_catalogue(const CatalogueArgs& a) {
  std::vector<Table> tables;
  if (a.table.empty())
    tables = table_schemas();
  else
    tables.push_back(empty_table(a.table));  // refuses an unknown name, listing the known ones
  if (a.markdown) {
    for (std::size_t i = 0; i < tables.size(); ++i)
      std::printf("%s%s", i ? "\n" : "", markdown_table(tables[i]).c_str());
    return 0;
  }
  if (a.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const Table& t : tables) j.push_back(table_json(t));
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  for (const Table& t : tables) print_table(t);
  return 0;
}

}  // namespace

void add_catalogue_command(CLI::App& root, CommandAction* action) {
  auto args = std::make_shared<CatalogueArgs>();
  CLI::App* cmd = root.add_subcommand(
      "catalogue", "Every result table this build writes: what a row is, its key columns, each column's type and doc.");
  cmd->add_option("table", args->table, "one table (none: every table)");
  CLI::Option* json =
      cmd->add_flag("--json", args->json, "a list of {name, doc, keys, columns: [{name, type, key, required, doc}]}");
  cmd->add_flag("--markdown", args->markdown, "each table as the docs show it (docs/experiments/)")->excludes(json);
  cmd->footer("Example: linsweep catalogue gates --json");
  cmd->callback([args, action] { *action = [args] { return run_catalogue(*args); }; });
}

}  // namespace linsweep
