// Catch2 for every test: version 2 (Debian 12's catch2 2.13) or 3 (Debian 13's 3.7), as
// tests/CMakeLists.txt found it (LINSWEEP_CATCH2_MAJOR). Tests include this header, never a
// Catch2 header, and spell Catch2 3's names: Catch::Approx, Catch::Matchers::ContainsSubstring
// and Catch::Matchers::StartsWith (the string matchers); with Catch2 2 this header provides
// them under those names. A test that writes its own main() calls
// linsweep::testing::run_catch_session (support/catch_session.hpp) and links
// linsweep_catch_session; only support/catch_session.cpp defines CATCH_CONFIG_RUNNER (with
// Catch2 2 that compiles the implementation; with Catch2 3 it includes the session's header).
#pragma once

#if !defined(LINSWEEP_CATCH2_MAJOR)
#error "LINSWEEP_CATCH2_MAJOR must be Catch2's major version (tests/CMakeLists.txt sets it)"
#elif LINSWEEP_CATCH2_MAJOR >= 3
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#if defined(CATCH_CONFIG_RUNNER)
#include <catch2/catch_session.hpp>
#endif
#else
#include <catch2/catch.hpp>
#include <string>

namespace Catch {
using Detail::Approx;
namespace Matchers {
// Catch2 3 renamed the substring matcher (its Matchers::Contains matches ranges).
inline StdString::ContainsMatcher ContainsSubstring(const std::string& str,
                                                    CaseSensitive::Choice cs = CaseSensitive::Yes) {
  return Contains(str, cs);
}
}  // namespace Matchers
}  // namespace Catch
#endif
