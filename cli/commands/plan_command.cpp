// `linsweep plan`: every unit of a spec as done, pending, or rerun with the reason.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands/commands.hpp"
#include "common/file_io.hpp"
#include "orchestrator/plan/memory_plan.hpp"
#include "orchestrator/plan/plan.hpp"
#include "orchestrator/plan/split_check.hpp"
#include "storage/store.hpp"
#include "storage/store_layout.hpp"

namespace linsweep {
namespace {

struct PlanArgs {
  std::string spec, store;
  std::vector<std::string> overrides;
  bool json = false;
  bool show_spec = false;
  bool memory_only = false;
};

// The memory table alone, from the models' config.json files (no weights read, so it plans for
// checkpoints not downloaded yet); refused like `plan` when it exceeds the limit.
int print_memory_plan(const PlanArgs& a, const SweepSpec& spec) {
  const MemoryPlan memory = plan_memory(spec, make_unfingerprinted_plan(spec));
  check_memory(a.spec, spec, memory);
  if (a.json)
    std::printf("%s\n", nlohmann::json{{"spec", a.spec}, {"memory", memory.to_json()}}.dump().c_str());
  else
    std::fputs(memory.text().c_str(), stdout);
  return 0;
}

int run_plan(const PlanArgs& a) {
  const SweepSpec spec = load_spec(a.spec, a.store, a.overrides);
  if (a.show_spec) {  // the spec as run will read it: overrides applied
    std::fputs(spec.text.c_str(), stdout);
    return 0;
  }
  if (a.memory_only) return print_memory_plan(a, spec);
  return print_plan(a.spec, spec, a.json);
}

}  // namespace

int print_plan(const std::string& spec_path, const SweepSpec& spec, bool json) {
  FileHashCache fingerprints = fingerprint_cache(spec);
  const Plan plan = make_plan(spec, fingerprints);
  check_splits_fit(spec_path, spec, plan);
  const MemoryPlan memory = plan_memory(spec, plan);
  check_memory(spec_path, spec, memory);
  save_fingerprint_cache(fingerprints, spec);
  std::unique_ptr<Store> store;
  if (is_regular_file(StoreLayout(spec.store).marker())) store = std::make_unique<Store>(Store::open_read(spec.store));
  const auto status = plan_status(plan, store.get());
  std::map<std::string, int> counts;
  for (const auto& p : status) counts[unit_state_name(p.state)]++;
  if (json) {
    nlohmann::json j = {{"spec", spec_path},
                        {"store", spec.store},
                        {"units", nlohmann::json::array()},
                        {"counts", counts},
                        {"not_planned", plan.not_planned},
                        {"memory", memory.to_json()}};
    for (const auto& p : status)
      j["units"].push_back({{"id", p.unit->id},
                            {"kind", p.unit->kind},
                            {"model", p.unit->model},
                            {"corpus", p.unit->corpus},
                            {"slot", p.unit->slot},
                            {"setting", p.unit->setting},
                            {"state", unit_state_name(p.state)},
                            {"reason", p.reason},
                            {"deps", p.unit->deps},
                            {"memory", unit_memory_estimate(spec, *p.unit, memory)}});
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("plan for %s -> %s\n", spec_path.c_str(), spec.store.c_str());
  for (const auto& p : status) {
    const std::string& full = p.unit->slot;  // kind/model/corpus[/layerN][@setting]
    const std::string slot = full.substr(0, full.find('@'));
    const auto layer = slot.rfind("/layer");
    const std::string where = layer == std::string::npos ? "" : slot.substr(layer + 1);
    const std::string setting = slot.size() < full.size() ? "  " + full.substr(slot.size() + 1) : "";
    std::printf("  %-8s %-13s %-16s %-14s %-8s %s%s%s%s\n", unit_state_name(p.state), p.unit->kind.c_str(),
                p.unit->model.c_str(), p.unit->corpus.c_str(), where.c_str(), p.unit->id.c_str(), setting.c_str(),
                p.reason.empty() ? "" : "  ", p.reason.c_str());
  }
  std::printf("%zu units: %d done, %d pending, %d rerun\n", status.size(), counts["done"], counts["pending"],
              counts["rerun"]);
  std::fputs(memory.text().c_str(), stdout);
  for (const auto& e : plan.not_planned)
    std::printf("note: experiment '%s' has no units in this build yet; it is not run\n", e.c_str());
  return 0;
}

void add_plan_command(CLI::App& root, CommandAction* action) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd =
      root.add_subcommand("plan", "Every unit of a spec: done, pending, or rerun with the reason (reads the store).");
  add_spec_arguments(cmd, {&args->spec, &args->overrides, &args->store});
  cmd->add_flag("--json", args->json, "print JSON");
  cmd->add_flag("--show-spec", args->show_spec, "print the spec with the overrides applied (what the store freezes)")
      ->excludes("--json");
  cmd->add_flag("--memory-only", args->memory_only,
                "print only the memory each rank needs, from the models' config.json files (no weight is read: "
                "plan a cluster run before downloading the checkpoints)")
      ->excludes("--show-spec");
  cmd->footer("Example: linsweep plan examples/fixture.yaml -m context=16,32 experiments.fit.lambda=[0.1,1]");
  cmd->callback([args, action] { *action = [args] { return run_plan(*args); }; });
}

}  // namespace linsweep
