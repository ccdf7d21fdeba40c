// The names HF configs give MLP activations (GPT-2's activation_function, others' hidden_act).
#pragma once

#include <string>

#include "engine/model/model_config.hpp"

namespace linsweep {

// "gelu": exact; "gelu_new", "gelu_fast", "gelu_pytorch_tanh": the tanh approximation;
// "silu", "swish": x·sigmoid(x). Throws
// ModelError "<path>: <field> '<name>' is not supported (<the names>)" for any other name.
Activation parse_hf_activation(const std::string& name, const std::string& path, const char* field);

// The name written for `a`: "gelu", "gelu_new" or "silu".
const char* hf_activation_name(Activation a) noexcept;

}  // namespace linsweep
