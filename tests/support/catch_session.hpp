// Catch2's test runner, compiled once for every test binary (support/catch_session.cpp): a test
// that writes its own main() (tests/engine/comm/test_communicator.cpp starts MPI first) calls it
// instead of compiling Catch2 2's whole implementation again with CATCH_CONFIG_RUNNER.
#pragma once

namespace linsweep::testing {

// Runs the test cases the command line selects, as Catch::Session().run does; returns the number
// of failed test cases (at most 255), or Catch2's code for a bad command line.
int run_catch_session(int argc, char** argv);

}  // namespace linsweep::testing
