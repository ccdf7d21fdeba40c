// Every split a planned unit reads checked against its corpus's length before any work.
#pragma once

#include <string>

#include "orchestrator/plan/plan.hpp"
#include "orchestrator/spec/spec.hpp"

namespace linsweep {

// Throws SpecError (exit 2) naming `spec_path`, the split, its token range, the corpus and
// its length when a unit of `plan` reads past the end of its corpus's token stream. A .npy
// stream's length comes from its header; a text corpus is tokenized once per model tokenizer
// and corpus (the stream a unit would read, documents joined by the model's eos). Throws
// InputError or ModelError for a corpus or tokenizer that cannot be read.
void check_splits_fit(const std::string& spec_path, const SweepSpec& spec, const Plan& plan);

}  // namespace linsweep
