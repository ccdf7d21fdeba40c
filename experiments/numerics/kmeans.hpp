// Seeded k-means: greedy k-means++ initialisation, Lloyd iterations and Hartigan refinement, best of several runs.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace linsweep {

struct KMeansOptions {
  std::int64_t k = 20;
  std::int64_t n_init = 10;     // independent initialisations; the lowest inertia wins
  std::int64_t max_iter = 300;  // Lloyd iterations per run (stops earlier when assignments settle)
  std::uint64_t seed = 0;
};

struct KMeansResult {
  at::Tensor centers;  // [k, d] float64
  at::Tensor labels;   // [n] int64
  double inertia = 0;  // Σ squared distance to the assigned centre
};

// Clusters x [n, d] (float64). k is clamped to n. Deterministic for a seed. Throws InputError
// when x is empty.
KMeansResult kmeans(const at::Tensor& x, const KMeansOptions& options);

// Index of the nearest centre [n] int64 for rows of x.
at::Tensor nearest_center(const at::Tensor& x, const at::Tensor& centers);

}  // namespace linsweep
