// GPT-2's architecture entry without its module: config.json fields, checkpoint names, sizes.
#pragma once

#include "engine/model/architecture_registry.hpp"

namespace linsweep {

// The "gpt2" Architecture with everything but `build` (parse_config, write_config,
// count_parameters, checkpoint prefixes and ignored buffers). Kept apart from gpt2.cpp so that
// config.json parsing compiles without LibTorch (the fuzzers in tests/fuzz/ build it with
// clang); gpt2.cpp adds `build` and registers the result.
Architecture gpt2_architecture();

}  // namespace linsweep
