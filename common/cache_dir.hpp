// Where linsweep keeps what it fetches or builds once per machine: corpora, GPT-2's
// tokenizer, the demo's models.
#pragma once

#include <string>

namespace linsweep {

// $LINSWEEP_CACHE when set and non-empty, else $XDG_CACHE_HOME/linsweep, else
// $HOME/.cache/linsweep: the rule scripts/fetch_demo_data.sh and fetch_gpt2_encoder.sh follow.
// Empty when none of the three is set. Thread safe (reads the environment only).
std::string cache_dir();

}  // namespace linsweep
