// SPEC, OVERRIDES..., --store and -m: how a command that reads a spec takes it.
#include <CLI/CLI.hpp>
#include <memory>

#include "cli/commands/commands.hpp"
#include "orchestrator/spec/spec_overrides.hpp"

namespace linsweep {

void add_spec_arguments(CLI::App* cmd, const SpecArguments& args, const std::string& overrides_note) {
  cmd->add_option("spec", *args.spec, "sweep spec (YAML)")->required();
  cmd->add_option("overrides", *args.overrides,
                  "key.path=value (replace), +key.path=value (add) or ~key.path (remove) changes to the spec, "
                  "values as YAML" +
                      overrides_note);
  cmd->add_option("--store", *args.store, "store directory (overrides the spec's store)");
  auto multirun = std::make_shared<bool>(false);
  cmd->add_flag("-m,--multirun", *multirun,
                "sweep: key=a,b takes each value in turn (several such keys: every combination), each setting's "
                "results kept side by side (the same as key=choice(a,b); docs/spec.md, \"Sweeps\")");
  cmd->parse_complete_callback([overrides = args.overrides, multirun] {
    if (*multirun)
      for (auto& o : *overrides) o = multirun_override(o);
  });
}

}  // namespace linsweep
