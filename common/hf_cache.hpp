// Models named as researchers name them: a Hugging Face hub id (`org/name`, at a revision)
// resolved offline from the local hub cache, or a cache folder `models--org--name`, to the
// snapshot directory that holds config.json and the weights. Reads the file system and the
// environment only; never the network. Thread safe (no state).
#pragma once

#include <string>
#include <vector>

namespace linsweep {

// A hub cache directory to search and why it is searched (for messages): the environment's
// HF_HUB_CACHE, HF_HOME/hub, XDG_CACHE_HOME/huggingface/hub and ~/.cache/huggingface/hub, each
// where its variable is set, in that order, without repeats.
struct HubCache {
  std::string dir;
  std::string source;  // "HF_HUB_CACHE", "HF_HOME/hub", ...
};
std::vector<HubCache> hub_caches_from_env();

// True for `org/name`: two parts of 1..96 ASCII letters, digits, '.', '-' and '_', each
// starting with a letter or digit, without "--" or "..", joined by one '/' (the hub's rule).
bool is_hub_id(const std::string& s);

// The model directory `given` names. `base` is the directory a relative `given` is read from
// ("" for the working directory); `revision` ("" for main) a branch or tag (refs/<revision>) or
// a commit (snapshots/<commit>). In order:
//   - an existing directory that is not a hub cache folder: that directory (`revision` must
//     then be empty);
//   - a hub cache folder (its name models--org--name, without config.json): its snapshot of
//     `revision`;
//   - a hub id: models--org--name in the first of `caches` that holds it, its snapshot;
//   - anything else: `given` resolved against `base`, unchanged (the caller's reader then says
//     what is missing).
// Throws InputError, one line naming the path and the problem and ending with the
// `huggingface-cli download` command that fetches the model: for a hub id in no cache (naming
// every cache searched), a cache folder without snapshots/, a revision the folder does not hold,
// a ref naming a missing or malformed snapshot, and a revision given with a plain directory.
std::string resolve_model_dir(const std::string& given, const std::string& base, const std::string& revision,
                              const std::vector<HubCache>& caches);
// resolve_model_dir with hub_caches_from_env().
std::string resolve_model_dir(const std::string& given, const std::string& base = "", const std::string& revision = "");

}  // namespace linsweep
