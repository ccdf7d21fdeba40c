// `linsweep demo`: the whole study on eleven small models that it trains itself on the Brown Corpus.
#pragma once

#include <string>

namespace linsweep {

struct DemoOptions {
  std::string out_dir = "runs/demo";  // the sweep's store is out_dir/store; tables and figures beside it
  std::string cache_dir;              // "": $LINSWEEP_CACHE, else $XDG_CACHE_HOME/linsweep, else ~/.cache/linsweep
  std::string brown_dir;              // "": <cache>/brown, where scripts/fetch_demo_data.sh puts the Brown files
  std::string encoder_dir;            // "": <cache>/gpt2-tokenizer (GPT-2's vocab.json and merges.txt)
  std::string spec_template;          // "": the source tree's examples/demo.yaml
  int workers = 0;                    // training threads and sweep worker ranks; 0: the CPUs available
  std::string mpirun = "mpirun";      // launcher for the sweep; "" or missing: one process
  bool retrain = false;               // train the models again even when cached
  bool quiet = false;                 // no progress lines, only the phases' results
  bool json = false;                  // a JSON summary on stdout instead of the tables
  double started_at = 0;              // unix time when a wrapper (scripts/demo.sh) started; 0: now
};

// Runs the demo's four phases and returns the exit code:
//  1. data: the three Brown corpora (news A–C, learned J, fiction K–R), split by file into
//     train/ and eval/ under <cache>/demo/corpora, and the truncated GPT-2 tokenizer
//     (vocabulary 2,048) under <cache>/demo/tokenizer;
//  2. models: each of demo_model_recipes() that the spec names (path models/<name>) and that
//     is not already cached under <cache>/demo/models is pretrained on the three corpora's
//     training files, `workers` models at a time, with checkpoints under
//     <cache>/demo/checkpoints; then every such model's held-out PPL on each corpus's eval
//     files beside the unigram PPL of the same tokens;
//  3. the sweep: spec_template is copied to <cache>/demo/demo.yaml (its paths are relative
//     to that directory) and run into out_dir/store with `mpirun -n workers+1` (one
//     coordinator, `workers` worker ranks), or in one process without mpirun or with one worker;
//  4. the tables (printed, and written to out_dir/report) and figures (out_dir/figures), and
//     a summary with each phase's time, the total, and the commands that query the store.
// Each phase resumes: data is rewritten only when it differs, training continues from the
// last checkpoint and the sweep from its committed units. A SIGINT or SIGTERM stops at the
// next step (training) or through the sweep's own handling, and the demo returns 3; running
// it again continues. Returns 1 when the sweep failed (2 when it refused its input). Throws InputError (missing data,
// unreadable spec template or one that is not YAML with a models list), ModelError and StorageError as the phases do.
int run_demo(const DemoOptions& options);

}  // namespace linsweep
