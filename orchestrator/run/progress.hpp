// What a running sweep tells its user: a live line on a terminal, periodic lines otherwise.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace linsweep {

struct ProgressOptions {
  bool quiet = false;             // print nothing but failures
  bool live = false;              // redraw one status line in place (stderr is a terminal)
  double log_every_seconds = 30;  // without `live`: a summary line at most this often
};

// Counts units as they finish and prints per-unit lines plus either a live line
// "[12/54 22%] 2 running · 4,321 tok/s · ETA 3m12s" (redrawn at most 4 times a second) or,
// when stderr is not a terminal, the same summary every log_every_seconds. ETA is the
// remaining units over this run's completion rate. Not thread safe; the owner calls it from
// the loop that runs or dispatches units.
class Progress {
 public:
  Progress(std::size_t total, std::size_t already_done, ProgressOptions options, std::FILE* out = stderr);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void started();
  // A unit left the running set: `tokens` corpus tokens read, committed or not.
  void finished(bool committed, std::int64_t tokens, const std::string& line);
  // A line that is not a unit's outcome (skips, signals); shown unless quiet, failures always.
  void note(const std::string& line, bool always = false);
  // Redraws the live line or prints a periodic summary when one is due.
  void tick();
  // "[12/54 22%] 2 running · 4,321 tok/s · ETA 3m12s"
  std::string summary() const;

  std::size_t done() const noexcept { return done_; }

 private:
  void print_line(const std::string& line);
  void clear_live();

  std::size_t total_, done_, done_at_start_;
  std::size_t running_ = 0, failed_ = 0;
  std::int64_t tokens_ = 0;
  ProgressOptions options_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_, last_draw_{};
  bool drawn_ = false;
};

// stderr is a terminal (and TERM is not "dumb").
bool stderr_is_terminal();

// "3m12s", "1h04m", "45s".
std::string format_duration(double seconds);

}  // namespace linsweep
