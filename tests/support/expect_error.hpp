// A Catch2 check that a call throws a given linsweep error whose message names the problem.
#pragma once

#include <functional>
#include <string>

#include "common/errors.hpp"
#include "support/catch.hpp"

namespace linsweep::test {

// Fails the test case unless f() throws E (InputError by default) with `needle` in its message.
template <typename E = InputError>
void expect_error(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    FAIL("accepted");
  } catch (const E& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find(needle) != std::string::npos);
  }
}

}  // namespace linsweep::test
