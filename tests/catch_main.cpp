// Catch2 2's main shared by every test binary (tests/CMakeLists.txt compiles it only for
// Catch2 2; Catch2 3 links its own, Catch2::Catch2WithMain).
#include "support/catch_session.hpp"

int main(int argc, char** argv) { return linsweep::testing::run_catch_session(argc, argv); }
