// `linsweep status`: committed, failed and unfinished units of a store, failures, throughput.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "orchestrator/commands/commands.hpp"
#include "storage/store.hpp"
#include "storage/store_status.hpp"

namespace linsweep {
namespace {

struct StatusArgs {
  std::string store;
  bool json = false;
};

int run_status(const StatusArgs& a) {
  const Store store = Store::open_read(a.store);
  const StoreStatus st = summarize_store(store);
  if (a.json) {
    nlohmann::json j = {{"store", a.store}, {"committed", st.committed()}, {"units_per_hour", st.units_per_hour()},
                        {"by_kind", nlohmann::json::object()}, {"failures", nlohmann::json::array()}};
    for (const auto& [k, c] : st.by_kind)
      j["by_kind"][k] = {{"committed", c.committed}, {"failed", c.failed}, {"unfinished", c.unfinished}, {"seconds", c.seconds},
                         {"tokens", c.tokens}, {"tokens_per_second", c.tokens_per_second()}};
    for (const auto& f : st.failures)
      j["failures"].push_back({{"unit", f.unit}, {"host", f.host}, {"rank", f.rank}, {"attempts", f.attempts}, {"error", f.error}});
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("store %s\n", a.store.c_str());
  std::printf("  %-12s %9s %7s %10s %10s %10s\n", "experiment", "committed", "failed", "unfinished", "seconds", "tok/s");
  for (const auto& [k, c] : st.by_kind)
    std::printf("  %-12s %9d %7d %10d %10.1f %10.0f\n", k.c_str(), c.committed, c.failed, c.unfinished, c.seconds,
                c.tokens_per_second());
  std::printf("  %d units committed, %.0f units/hour over the journal\n", st.committed(), st.units_per_hour());
  for (const auto& f : st.failures)
    std::printf("  failed: %s (%d attempts, %s rank %d): %s\n", f.unit.c_str(), f.attempts, f.host.c_str(), f.rank, f.error.c_str());
  return 0;
}

}  // namespace

void add_status_command(CLI::App& root, CommandAction* action) {
  auto args = std::make_shared<StatusArgs>();
  CLI::App* cmd = root.add_subcommand("status", "Committed, failed and unfinished units of a store by experiment, failures with "
                                                "their messages, and throughput (from the journal).");
  cmd->add_option("store", args->store, "store directory")->required();
  cmd->add_flag("--json", args->json, "print JSON");
  cmd->callback([args, action] { *action = [args] { return run_status(*args); }; });
}

}  // namespace linsweep
