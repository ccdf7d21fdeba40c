// A compound configuration as files another program can load: each routed layer's surrogate and
// chosen gate in safetensors, and a short JSON that names the routed layers (docs/methods.md,
// "Exported routed model"; `linsweep export`).
#pragma once

#include <string>
#include <vector>

#include "storage/unit_file.hpp"

namespace linsweep {

class Store;

// A committed compound unit and the units it read, as the store holds them.
struct CompoundUnits {
  UnitResult compound;            // kind "compound"; its params are the unit's provenance JSON
  UnitResult fit;                 // its first dependency
  std::vector<UnitResult> gates;  // one gate unit per layer, in the order of the unit's layers
};

// The compound unit of (model, corpus) that is current in `store`, or the committed unit
// `unit_id` when it is not empty, and the units it read (its provenance's deps). Throws
// InputError naming the store when there is none (listing the model and corpus pairs that have
// one) or several (a sweep's settings, listed with their units: name one), when `unit_id` is not
// a committed compound unit of that model and corpus (of any setting), or when a unit it read is
// no longer committed (`linsweep gc` removed it). Reads only.
CompoundUnits read_compound_units(const Store& store, const std::string& model, const std::string& corpus,
                                  const std::string& unit_id = "");

// Writes `out_dir`/routed.safetensors, then `out_dir`/routed.json (each atomically: temporary
// file, fsync, rename; the directory is created when missing), so that a reader that finds the
// JSON finds the tensors it names. Per routed layer l, in the compound unit's layer order:
//   layers.<l>.surrogate.weight F32 [d, d] (input rows: y = x·W + b), layers.<l>.surrogate.bias
//     F32 [d]: the surrogate at the compound unit's λ, rounded to float32 as the routed forward
//     used it;
//   layers.<l>.gate.<name> F64: the chosen gate's arrays as the gate unit stored them
//     (scaler.mean, scaler.scale, then logistic.weight and logistic.bias, pca.mean and
//     pca.components, or mlp.P, mlp.v and mlp.c), the values the gate computes with.
// The JSON holds the model, corpus, λ, the compound unit's id and row, and per layer its gate
// variant and tensor prefix. Throws InputError when the units do not fit together (a gate or a
// surrogate missing, layers not matching), StorageError(kBadInput) on a malformed stored gate,
// StorageError or ModelError when a file cannot be written. Thread safe for distinct `out_dir`s.
void export_routed(const CompoundUnits& units, const std::string& model, const std::string& corpus,
                   const std::string& out_dir);

}  // namespace linsweep
