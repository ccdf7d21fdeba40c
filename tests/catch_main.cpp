// Catch2 2's main shared by every test binary (tests/CMakeLists.txt compiles it only for
// Catch2 2; Catch2 3 links its own, Catch2::Catch2WithMain).
#define CATCH_CONFIG_MAIN
#include "support/catch.hpp"
