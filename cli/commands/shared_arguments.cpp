// The arguments several subcommands take, named and explained once.
#include <CLI/CLI.hpp>

#include "cli/commands/commands.hpp"

namespace linsweep {

void add_store_argument(CLI::App* cmd, std::string* store) {
  cmd->add_option("store", *store, "store directory")->required();
}

}  // namespace linsweep
