// Progress lines for `linsweep run`.
#include "orchestrator/run/progress.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace linsweep {

bool stderr_is_terminal() {
  const char* term = std::getenv("TERM");
  return ::isatty(STDERR_FILENO) == 1 && !(term != nullptr && std::strcmp(term, "dumb") == 0);
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long long s = std::llround(seconds);
  char buf[32];
  if (s < 60)
    std::snprintf(buf, sizeof(buf), "%llds", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof(buf), "%lldm%02llds", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof(buf), "%lldh%02lldm", s / 3600, (s % 3600) / 60);
  return buf;
}

Progress::Progress(std::size_t total, std::size_t already_done, ProgressOptions options, std::FILE* out)
    : total_(total),
      done_(already_done),
      done_at_start_(already_done),
      options_(options),
      out_(out),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() { clear_live(); }

void Progress::started() {
  ++running_;
  tick();
}

void Progress::finished(bool committed, std::int64_t tokens, const std::string& line) {
  if (running_ > 0) --running_;
  if (committed) {
    ++done_;
    tokens_ += tokens;
  } else {
    ++failed_;
  }
  if (!options_.quiet || !committed) print_line(line);
  tick();
}

void Progress::note(const std::string& line, bool always) {
  if (!options_.quiet || always) print_line(line);
}

std::string Progress::summary() const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::size_t now = done_ - done_at_start_;
  const double pct = total_ > 0 ? 100.0 * static_cast<double>(done_) / static_cast<double>(total_) : 100.0;
  std::string s = "[" + std::to_string(done_) + "/" + std::to_string(total_) + " " +
                  std::to_string(std::lround(std::floor(pct))) + "%] " + std::to_string(running_) + " running";
  if (failed_ > 0) s += " · " + std::to_string(failed_) + " failed";
  if (elapsed > 0 && tokens_ > 0) {
    char buf[48];
    std::snprintf(buf, sizeof(buf), " · %.0f tok/s", static_cast<double>(tokens_) / elapsed);
    s += buf;
  }
  const std::size_t left = total_ > done_ ? total_ - done_ : 0;
  if (left == 0)
    s += " · done in " + format_duration(elapsed);
  else if (now > 0)
    s += " · ETA " + format_duration(elapsed / static_cast<double>(now) * static_cast<double>(left));
  else
    s += " · ETA ?";
  return s;
}

void Progress::tick() {
  if (options_.quiet) return;
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_draw_).count();
  if (options_.live) {
    if (drawn_ && since < 0.25) return;
    std::fprintf(out_, "\r\033[K%s", summary().c_str());
    std::fflush(out_);
    drawn_ = true;
  } else {
    if (since < options_.log_every_seconds) return;
    std::fprintf(out_, "progress: %s\n", summary().c_str());
    std::fflush(out_);
  }
  last_draw_ = now;
}

void Progress::print_line(const std::string& line) {
  clear_live();
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
  if (options_.live && !options_.quiet) {
    std::fprintf(out_, "%s", summary().c_str());
    std::fflush(out_);
    drawn_ = true;
  }
}

void Progress::clear_live() {
  if (!drawn_) return;
  std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace linsweep
