// GPT-NeoX's architecture entry without its module: config.json fields, checkpoint names, sizes.
#pragma once

#include "engine/model/architecture_registry.hpp"

namespace linsweep {

// The "gpt_neox" Architecture with everything but `build` (parse_config, write_config,
// count_parameters, ignored buffers). Kept apart from gpt_neox.cpp so that config.json parsing
// compiles without LibTorch (the fuzzers in tests/fuzz/ build it with clang); gpt_neox.cpp adds
// `build` and registers the result.
Architecture gpt_neox_architecture();

}  // namespace linsweep
