// `linsweep demo`: trains eleven small models on the Brown Corpus and runs the whole study on them.
#include <CLI/CLI.hpp>
#include <memory>

#include "cli/commands/commands.hpp"
#include "demo/demo.hpp"

namespace linsweep {

void add_demo_command(CLI::App& root, CommandAction* action) {
  auto o = std::make_shared<DemoOptions>();
  CLI::App* cmd = root.add_subcommand(
      "demo",
      "The whole study on eleven small models trained here: three Brown Corpus corpora, a truncated GPT-2 tokenizer, "
      "three each of GPT-2, GPT-NeoX and Llama and two of Mixtral (a mixture of experts) pretrained and cached, then "
      "examples/demo.yaml (every layer, every measurement experiment, each expert alone, a short progressive "
      "linearization) under mpirun, the tables and the figures. "
      "Needs the data from scripts/fetch_demo_data.sh. Interrupt it and run it again to continue.");
  cmd->add_option("--out", o->out_dir, "output directory: store/, report/, figures/")->capture_default_str();
  cmd->add_option("--cache", o->cache_dir, "cache directory (default: $LINSWEEP_CACHE or ~/.cache/linsweep)");
  cmd->add_option("--brown", o->brown_dir, "Brown Corpus directory (default: CACHE/brown)");
  cmd->add_option("--encoder", o->encoder_dir,
                  "GPT-2 vocab.json + merges.txt directory (default: CACHE/gpt2-tokenizer)");
  cmd->add_option("--spec", o->spec_template,
                  "sweep spec to run; only the demo models it names are pretrained (default: the source tree's "
                  "examples/demo.yaml)");
  cmd->add_option("--workers", o->workers,
                  "models trained at once and sweep worker ranks (default: the CPUs available)")
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--mpirun", o->mpirun, "MPI launcher for the sweep (\"\": one process)")->capture_default_str();
  cmd->add_flag("--retrain", o->retrain, "train the models again even when cached");
  cmd->add_option("--started-at", o->started_at,
                  "unix time a wrapper started, for the total time (scripts/demo.sh sets it)");
  cmd->add_flag("--quiet", o->quiet, "no progress lines and no tables on stdout");
  cmd->add_flag("--json", o->json, "print a JSON summary (phase times, models, held-out PPL, files) instead");
  cmd->footer("Example: linsweep demo --out runs/demo --workers 2");
  cmd->callback([o, action] { *action = [o] { return run_demo(*o); }; });
}

}  // namespace linsweep
