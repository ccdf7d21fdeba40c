// `linsweep gc`: delete superseded units and everything they own.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.hpp"
#include "storage/garbage_collection.hpp"
#include "storage/store.hpp"

namespace linsweep {
namespace {

struct GcArgs {
  std::string store;
  bool dry_run = false, json = false;
};

int run_gc_command(const GcArgs& a) {
  const Store reader = Store::open_read(a.store);  // refuses a directory that is not a store
  std::unique_ptr<Store> writer;
  if (!a.dry_run) writer = std::make_unique<Store>(Store::open_write(a.store));  // the exclusive lock
  const GcPlan plan = plan_gc(writer ? *writer : reader);
  if (writer) run_gc(*writer, plan);
  if (a.json) {
    nlohmann::json j = {{"store", a.store},
                        {"dry_run", a.dry_run},
                        {"bytes", plan.bytes},
                        {"units", nlohmann::json::array()},
                        {"leftovers", plan.leftovers}};
    for (const auto& u : plan.units)
      j["units"].push_back({{"unit", u.unit}, {"slot", u.slot}, {"bytes", u.bytes}, {"paths", u.paths}});
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  for (const auto& u : plan.units)
    std::printf("%s %s (%s, %llu bytes)\n", a.dry_run ? "would remove" : "removed", u.unit.c_str(), u.slot.c_str(),
                static_cast<unsigned long long>(u.bytes));
  for (const auto& p : plan.leftovers)
    std::printf("%s leftover %s\n", a.dry_run ? "would remove" : "removed", p.c_str());
  std::printf("gc: %zu superseded units, %llu bytes %s\n", plan.units.size(),
              static_cast<unsigned long long>(plan.bytes), a.dry_run ? "would be freed" : "freed");
  return 0;
}

}  // namespace

void add_gc_command(CLI::App& root, CommandAction* action) {
  auto args = std::make_shared<GcArgs>();
  CLI::App* cmd = root.add_subcommand(
      "gc",
      "Delete superseded units (another unit of their slot is current) with everything they own: unit files, "
      "logs, activation shards, checkpoints, exported models. Never touches a current unit; takes the store's "
      "writer lock; readers keep a consistent view. Rebuilds store.h5.");
  add_store_argument(cmd, &args->store);
  cmd->add_flag("--dry-run", args->dry_run, "print what would be deleted and the bytes it would free; delete nothing");
  cmd->add_flag("--json", args->json, "print JSON");
  cmd->footer("Example: linsweep gc runs/demo/store --dry-run");
  cmd->callback([args, action] { *action = [args] { return run_gc_command(*args); }; });
}

}  // namespace linsweep
