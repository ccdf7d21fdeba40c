// The names HF configs give the GELU variants (GPT-2's activation_function, GPT-NeoX's hidden_act).
#pragma once

#include <string>

#include "workers/model/model_config.hpp"

namespace linsweep {

// "gelu": exact; "gelu_new", "gelu_fast", "gelu_pytorch_tanh": the tanh approximation. Throws
// ModelError "<path>: <field> '<name>' is not supported (<the names>)" for any other name.
Activation parse_hf_activation(const std::string& name, const std::string& path, const char* field);

// The name written for `a`: "gelu" or "gelu_new".
const char* hf_activation_name(Activation a) noexcept;

}  // namespace linsweep
