// The progress line: counts, throughput, ETA; live redraws versus periodic log lines.
#include <cstdio>
#include <string>
#include <thread>

#include "orchestrator/run/progress.hpp"
#include "support/catch.hpp"

using namespace linsweep;

namespace {

// Everything a Progress wrote to a temporary FILE.
std::string contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  char buf[512];
  while (std::size_t n = std::fread(buf, 1, sizeof(buf), f)) s.append(buf, n);
  return s;
}

}  // namespace

TEST_CASE("format_duration") {
  const std::pair<double, const char*> cases[] = {{0, "0s"},       {44.6, "45s"},   {60, "1m00s"}, {192, "3m12s"},
                                                  {3600, "1h00m"}, {3840, "1h04m"}, {-1, "?"},     {1.0 / 0.0, "?"}};
  for (const auto& [s, want] : cases) CHECK(format_duration(s) == want);
}

TEST_CASE("summary: done of total, running, failures, tokens/s and an ETA from this run's rate") {
  std::FILE* f = std::tmpfile();
  Progress p(10, 4, ProgressOptions{false, false, 1e9}, f);
  CHECK(p.summary() == "[4/10 40%] 0 running · ETA ?");
  p.started();
  p.started();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  p.finished(true, 1000, "[5/10] stats m/c committed");
  p.finished(false, 0, "fit m/c failed");
  const std::string s = p.summary();
  CHECK(s.rfind("[5/10 50%] 0 running · 1 failed · ", 0) == 0);
  CHECK(s.find(" tok/s · ETA ") != std::string::npos);
  const std::string out = contents(f);
  CHECK(out == "[5/10] stats m/c committed\nfit m/c failed\n");  // no summary before log_every_seconds
  std::fclose(f);
}

TEST_CASE("quiet prints failures only; a finished sweep says how long it took") {
  std::FILE* f = std::tmpfile();
  {
    Progress p(2, 0, ProgressOptions{true, false, 0}, f);
    p.started();
    p.finished(true, 10, "[1/2] ok");
    p.started();
    p.finished(false, 0, "x failed");
    p.note("a note");
    p.note("an error", true);
  }
  CHECK(contents(f) == "x failed\nan error\n");
  std::fclose(f);
  Progress done(1, 1, ProgressOptions{}, std::tmpfile());
  CHECK(done.summary().find("· done in ") != std::string::npos);
}

TEST_CASE("live: the status line is redrawn in place and cleared before other lines") {
  std::FILE* f = std::tmpfile();
  {
    Progress p(3, 0, ProgressOptions{false, true, 30}, f);
    p.started();
    p.finished(true, 5, "[1/3] a committed");
  }
  const std::string out = contents(f);
  CHECK(out.rfind("\r\033[K[0/3 0%] 1 running", 0) == 0);
  CHECK(out.find("\r\033[K[1/3] a committed\n[1/3 33%] 0 running") != std::string::npos);
  CHECK(out.substr(out.size() - 4) == "\r\033[K");  // the destructor leaves a clean line
  std::fclose(f);
}

TEST_CASE("periodic: without a terminal a summary line appears every log_every_seconds") {
  std::FILE* f = std::tmpfile();
  Progress p(3, 0, ProgressOptions{false, false, 0.01}, f);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  p.started();
  CHECK(contents(f).rfind("progress: [0/3 0%] 1 running", 0) == 0);
  std::fclose(f);
}
