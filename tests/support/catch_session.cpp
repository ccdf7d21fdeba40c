// Catch2 2's implementation (CATCH_CONFIG_RUNNER compiles it here, once) or Catch2 3's session.
#define CATCH_CONFIG_RUNNER
#include "support/catch_session.hpp"

#include "support/catch.hpp"

namespace linsweep::testing {

int run_catch_session(int argc, char** argv) { return Catch::Session().run(argc, argv); }

}  // namespace linsweep::testing
