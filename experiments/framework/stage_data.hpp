// What the stages of a model split over ranks (runtime.stages) share: each stage computes its
// own layers, and only the last scores, so a value one stage computed reaches the others here.
// Collective over the unit's replica (ExperimentInput::replica): every rank of it makes the same
// calls in the same order. Without stages, each is the identity.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <span>

#include "experiments/framework/experiment.hpp"

namespace linsweep {

// Sums `values` over the stages of this rank's replica, in place: with a value that one stage
// computed and zeros on the others (token NLL, which only the last stage scores), every stage
// gets that value exactly.
void stage_sum(const ExperimentInput& in, std::span<double> values);

// The value of `t` on the stage that holds `layer` (LanguageModel::holds), as float64 on the
// CPU, on every stage of the replica; `t` has the same shape on every stage (a stream that
// passes through the others, say). Exact: float64 holds every value of the model's dtypes.
at::Tensor from_holder(const ExperimentInput& in, std::int64_t layer, const at::Tensor& t);

}  // namespace linsweep
