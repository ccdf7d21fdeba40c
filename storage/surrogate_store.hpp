// Affine surrogates in unit files: W, b per λ, and the float64 statistics they were solved from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/unit_file.hpp"

namespace linsweep {

// Centred normal-equation statistics of one (model, layer, fit corpus); enough to solve for
// any λ without running the model again (docs/methods.md, "Surrogate").
struct SurrogateStats {
  std::int64_t d = 0;
  std::int64_t n = 0;          // samples (positions)
  std::vector<double> mean_x;  // [d]
  std::vector<double> mean_y;  // [d]
  std::vector<double> xcxc;    // XcᵀXc, [d, d] row-major
  std::vector<double> xcyc;    // XcᵀYc, [d, d] row-major
  double ycyc_trace = 0;       // tr(YcᵀYc) = Σ‖y − ȳ‖², for R² and relative MSE
};

struct SurrogateFit {
  double lambda = 0;
  std::vector<double> weight;  // W [d, d]: y = x·W + b
  std::vector<double> bias;    // b [d]
};

struct StoredSurrogate {
  SurrogateStats stats;
  std::vector<SurrogateFit> fits;  // ascending λ
};

// The array-name prefix of a surrogate: "surrogates/<model>/<corpus>/layer<l>".
std::string surrogate_key(const std::string& model, const std::string& corpus, std::int64_t layer);

// Adds the statistics and fits under `key` to `unit.arrays`:
//   <key>/stats/{n, mean_x, mean_y, xcxc, xcyc}, <key>/lambda=<λ>/{W, b}.
// Throws StorageError when sizes disagree with d.
void put_surrogate(UnitResult& unit, const std::string& key, const StoredSurrogate& s);

// Reads them back; throws StorageError(kBadInput) naming the key when absent or malformed.
StoredSurrogate get_surrogate(const UnitResult& unit, const std::string& key);

}  // namespace linsweep
