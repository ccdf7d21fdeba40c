// `linsweep rebuild`: recreate STORE/store.h5 from the intact unit files.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "cli/commands/commands.hpp"
#include "storage/store.hpp"

namespace linsweep {
namespace {

int run_rebuild(const std::string& dir) {
  Store::open_read(dir);                 // a store, and not from a newer schema
  Store store = Store::open_write(dir);  // takes the lock: refused while a sweep writes
  const std::size_t n = store.rebuild_consolidated();
  std::printf("rebuilt %s from %zu committed units\n", store.consolidated_path().c_str(), n);
  return 0;
}

}  // namespace

void add_rebuild_command(CLI::App& root, CommandAction* action) {
  auto dir = std::make_shared<std::string>();
  CLI::App* cmd = root.add_subcommand(
      "rebuild", "Rebuild the consolidated STORE/store.h5 from the committed unit files (takes the store's lock).");
  add_store_argument(cmd, dir.get());
  cmd->footer("Example: linsweep rebuild runs/demo/store");
  cmd->callback([dir, action] { *action = [dir] { return run_rebuild(*dir); }; });
}

}  // namespace linsweep
