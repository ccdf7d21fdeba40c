#include "demo/default_spec.hpp"

#ifndef LINSWEEP_SOURCE_DIR
#define LINSWEEP_SOURCE_DIR "."
#endif

namespace linsweep {

std::string default_demo_spec() { return std::string(LINSWEEP_SOURCE_DIR) + "/examples/demo.yaml"; }

}  // namespace linsweep
