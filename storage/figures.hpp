// The store's SVG figures (`linsweep plot`).
#pragma once

#include <string>
#include <vector>

namespace linsweep {

class Store;

// Writes into `out_dir` (created) and returns the paths written:
//  - all_linear_<model>.svg: per-layer all-linear Δ% with bootstrap 95% bars, one series per corpus;
//  - all_linear_models_<corpus>.svg: the same across models, one series per model;
//  - gate_share_<model>.svg: share of positions routed linear per layer, one series per
//    (gate, corpus);
//  - gate_delta_<model>.svg: hard-routed Δ% of each layer's chosen gate with its interval;
//  - gate_delta_models_<corpus>.svg: the same across models, one series per model;
//  - token_context_<model>.svg: hold-out AUC per layer for X, e, c and the baselines;
//  - delta_hist_<shard>.svg: histogram of δ from the gate-split shards of committed capture
//    units, and from shards written directly under STORE/activations/<name>/.
// Figures without data are not written. Throws StorageError on write failures.
std::vector<std::string> write_figures(const Store& store, const std::string& out_dir);

// File-name-safe form of a model or shard name ([A-Za-z0-9._-], others become '_').
std::string safe_name(const std::string& s);

}  // namespace linsweep
