// The arguments several subcommands take, named and explained once.
#include <CLI/CLI.hpp>

#include "orchestrator/commands/commands.hpp"

namespace linsweep {

void add_store_argument(CLI::App* cmd, std::string* store) {
  cmd->add_option("store", *store, "store directory")->required();
}

void add_spec_arguments(CLI::App* cmd, const SpecArguments& args, const std::string& overrides_note) {
  cmd->add_option("spec", *args.spec, "sweep spec (YAML)")->required();
  cmd->add_option("overrides", *args.overrides,
                  "key.path=value (replace), +key.path=value (add) or ~key.path (remove) changes to the spec, "
                  "values as YAML" +
                      overrides_note);
  cmd->add_option("--store", *args.store, "store directory (overrides the spec's store)");
}

}  // namespace linsweep
