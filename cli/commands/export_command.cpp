// `linsweep export`: a compound configuration's surrogates and gates as files another program
// can load (experiments/compound/routed_export.hpp, docs/methods.md "Exported routed model").
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.hpp"
#include "experiments/compound/routed_export.hpp"
#include "storage/store.hpp"

namespace linsweep {
namespace {

struct ExportArgs {
  std::string store, model, corpus, unit, out;
  bool json = false;
};

int run_export(const ExportArgs& a) {
  const Store store = Store::open_read(a.store);  // no lock: reads committed units only
  const CompoundUnits units = read_compound_units(store, a.model, a.corpus, a.unit);
  export_routed(units, a.model, a.corpus, a.out);
  const std::string json_path = a.out + "/routed.json", tensors_path = a.out + "/routed.safetensors";
  if (a.json) {
    std::printf("%s\n", nlohmann::json({{"unit", units.compound.unit_id},
                                        {"routed_layers", units.gates.size()},
                                        {"files", {json_path, tensors_path}}})
                            .dump()
                            .c_str());
  } else {
    std::printf("exported compound unit %s (%zu routed layers): %s, %s\n", units.compound.unit_id.c_str(),
                units.gates.size(), json_path.c_str(), tensors_path.c_str());
  }
  return 0;
}

}  // namespace

void add_export_command(CLI::App& root, CommandAction* action) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = root.add_subcommand(
      "export",
      "Write a compound configuration (every routed layer's surrogate and chosen gate) as routed.safetensors and "
      "routed.json, loadable without linsweep (docs/methods.md, \"Exported routed model\").");
  add_store_argument(cmd, &args->store);
  cmd->add_option("--model", args->model, "model name in the store")->required();
  cmd->add_option("--corpus", args->corpus, "corpus name in the store")->required();
  cmd->add_option("--out", args->out, "output directory (created when missing)")->required();
  cmd->add_option("--unit", args->unit, "a committed compound unit id (default: the current one of model and corpus)");
  cmd->add_flag("--json", args->json, "print what was written as JSON");
  cmd->footer("Example: linsweep export runs/fixture-measure --model tiny-gpt2 --corpus stream-a --out routed-tiny");
  cmd->callback([args, action] { *action = [args] { return run_export(*args); }; });
}

}  // namespace linsweep
