// The spec `linsweep demo` reads when --spec is not given.
#pragma once

#include <string>

namespace linsweep {

// examples/demo.yaml in the checkout this build came from. The path is compiled into this one
// small file, so that only it recompiles when the same sources are built from another folder.
std::string default_demo_spec();

}  // namespace linsweep
