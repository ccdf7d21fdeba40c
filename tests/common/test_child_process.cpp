// Foreground children: exit codes, signals, the environment, and programs that cannot start.
#include <csignal>

#include "common/child_process.hpp"
#include "common/errors.hpp"
#include "support/catch.hpp"

using namespace linsweep;

TEST_CASE("run_foreground reports exit codes, signals and passes the environment", "[child]") {
  CHECK(run_foreground({"sh", "-c", "exit 7"}).code == 7);
  CHECK(run_foreground({"true"}).code == 0);
  const ChildExit killed = run_foreground({"sh", "-c", "kill -TERM $$"});
  CHECK(killed.signal == SIGTERM);
  CHECK(run_foreground({"sh", "-c", "test \"$LINSWEEP_CHILD_TEST\" = 'a b'"}, {{"LINSWEEP_CHILD_TEST", "a b"}}).code ==
        0);
  // The child gets default dispositions back although the parent ignores SIGINT meanwhile.
  CHECK(run_foreground({"sh", "-c", "kill -INT $$; exit 0"}).signal == SIGINT);
  // A SIGINT that reaches this process while the child runs is recorded, not fatal.
  const ChildExit interrupted = run_foreground({"sh", "-c", "kill -INT $PPID; exit 1"});
  CHECK(interrupted.code == 1);
  CHECK(interrupted.received == SIGINT);
  CHECK(run_foreground({"true"}).received == 0);
  CHECK_THROWS_AS(run_foreground({"/nonexistent/linsweep-no-such-program"}), InputError);
  CHECK_THROWS_AS(run_foreground({}), InputError);
}

TEST_CASE("find_on_path and self_executable", "[child]") {
  CHECK(find_on_path("sh").find("/sh") != std::string::npos);
  CHECK(find_on_path("linsweep-no-such-program").empty());
  CHECK(find_on_path("/bin/sh") == "/bin/sh");
  CHECK(self_executable().find("test_common") != std::string::npos);
}
