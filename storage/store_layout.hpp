// Where everything lives under a store directory. Every path below STORE comes from here, so
// the layout is spelled once (docs/store.md describes it). Plain value; thread safe.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

namespace linsweep {

class StoreLayout {
 public:
  StoreLayout() = default;
  explicit StoreLayout(std::string dir) : dir_(std::move(dir)) {}

  const std::string& dir() const noexcept { return dir_; }

  std::string marker() const { return dir_ + "/store.json"; }                    // format and schema version
  std::string frozen_spec() const { return dir_ + "/spec.yaml"; }                // the spec that created the store
  std::string journal() const { return dir_ + "/journal.jsonl"; }                // append-only unit events
  std::string lock() const { return dir_ + "/lock"; }                            // the writer lock and its record
  std::string run_record() const { return dir_ + "/run.json"; }                  // the last run's spec, for `resume`
  std::string fingerprint_cache() const { return dir_ + "/fingerprints.json"; }  // input digests by file identity
  std::string consolidated() const { return dir_ + "/store.h5"; }                // every committed unit's tables
  std::string consolidated_lock() const { return dir_ + "/store.h5.lock"; }

  std::string units_dir() const { return dir_ + "/units"; }
  std::string unit_file(const std::string& unit) const { return units_dir() + "/" + unit + ".h5"; }
  // Its arrays, when it has any (unit_file.hpp: unit_arrays_path of unit_file).
  std::string unit_arrays_file(const std::string& unit) const { return units_dir() + "/" + unit + ".arrays.h5"; }
  // A unit written by a worker and handed to the writer (ignored until renamed to unit_file).
  std::string staged_unit(const std::string& unit, int rank) const {
    return units_dir() + "/.tmp-staged-" + std::to_string(rank) + "-" + unit + ".h5";
  }

  // One record per planning of the sweep (plan_records.hpp): plans/<seq>.json.
  std::string plans_dir() const { return dir_ + "/plans"; }

  std::string logs_dir() const { return dir_ + "/logs"; }
  std::string unit_log(const std::string& unit) const { return logs_dir() + "/" + unit + ".log"; }

  // Activation shards of a capture unit: activations/<unit>/<split>/layer<ℓ>.part<p>.h5.
  std::string activations_dir() const { return dir_ + "/activations"; }
  std::string unit_activations(const std::string& unit) const { return activations_dir() + "/" + unit; }
  std::string activation_shard(const std::string& unit, const std::string& split, std::int64_t layer,
                               std::int64_t part) const {
    return unit_activations(unit) + "/" + split + "/layer" + std::to_string(layer) + ".part" + std::to_string(part) +
           ".h5";
  }

  // A training unit's checkpoints, deleted once the unit is committed.
  std::string checkpoints_dir() const { return dir_ + "/checkpoints"; }
  std::string unit_checkpoints(const std::string& unit) const { return checkpoints_dir() + "/" + unit; }

  // Exported HF directories of trained models: models/<model>.<variant>.
  std::string models_dir() const { return dir_ + "/models"; }
  std::string trained_model(const std::string& model, const std::string& variant) const {
    return models_dir() + "/" + model + "." + variant;
  }
  // The id of the unit that exported a directory under models/ (written after the export), so
  // that `gc` knows which unit owns it.
  static std::string model_owner(const std::string& model_dir) { return model_dir + "/.linsweep-unit"; }

  std::string slurm_dir() const { return dir_ + "/slurm"; }
  std::string report_dir() const { return dir_ + "/report"; }
  std::string figures_dir() const { return dir_ + "/figures"; }

 private:
  std::string dir_;
};

}  // namespace linsweep
