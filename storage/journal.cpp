// JSON-lines journal.
#include "storage/journal.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/json_lines.hpp"

namespace linsweep {

namespace {

constexpr std::size_t kMaxJournalLineBytes = 1u << 20;  // a line of ours is at most ~70 KiB
constexpr std::size_t kMaxErrorBytes = 64u << 10;

std::string this_host() {
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  return host;
}

std::string journal_line(JournalEvent e, const std::string& host) {
  if (e.host.empty()) e.host = host;
  // Keeps every line far below what readers accept (kMaxJournalLineBytes).
  if (e.error.size() > kMaxErrorBytes) e.error = e.error.substr(0, kMaxErrorBytes) + " [...]";
  if (e.time == 0) e.time = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  nlohmann::json j = {{"event", e.event}, {"unit", e.unit}, {"host", e.host}, {"rank", e.rank}, {"time", e.time}};
  if (e.duration > 0) j["duration"] = e.duration;
  if (!e.error.empty()) j["error"] = e.error;
  if (e.tokens > 0) j["tokens"] = e.tokens;
  if (e.recovered) j["recovered"] = true;
  // An error message may quote bytes that are not UTF-8 (a path, a corrupt file's content):
  // replaced, not thrown on, so that recording a failure cannot itself fail.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

int open_journal(const std::string& path) {
  const int fd = open_for_append(path);
  if (fd < 0) throw_write_error(path + ": cannot open journal", errno);
  return fd;
}

void write_line(int fd, const std::string& path, const std::string& line, bool durable) {
  if (const int err = append_line(fd, line, durable); err != 0) throw_write_error(path + ": journal write failed", err);
}

// One event from a line that parsed and names its event.
JournalEvent journal_event(const nlohmann::json& j, const std::string& path, std::size_t line_no) {
  auto bad = [&](const char* field, const char* type) {
    throw StorageError(path + ":" + std::to_string(line_no) + ": field '" + field + "' is not " + type,
                       ExitCode::kBadInput);
  };
  auto str = [&](const char* field) {
    if (!j.contains(field)) return std::string();
    if (!j[field].is_string()) bad(field, "a string");
    return j[field].get<std::string>();
  };
  auto num = [&](const char* field) {
    if (!j.contains(field)) return 0.0;
    if (!j[field].is_number()) bad(field, "a number");
    return j[field].get<double>();
  };
  auto integer = [&](const char* field) {
    if (!j.contains(field)) return std::int64_t{0};
    if (!j[field].is_number_integer()) bad(field, "an integer");
    return j[field].get<std::int64_t>();
  };
  JournalEvent e;
  e.event = j["event"].get<std::string>();
  e.unit = str("unit");
  e.host = str("host");
  e.rank = static_cast<int>(integer("rank"));
  e.time = num("time");
  e.duration = num("duration");
  e.error = str("error");
  e.tokens = integer("tokens");
  if (j.contains("recovered")) {
    if (!j["recovered"].is_boolean()) bad("recovered", "a boolean");
    e.recovered = j["recovered"].get<bool>();
  }
  return e;
}

}  // namespace

void append_journal(const std::string& path, JournalEvent e, bool durable) {
  const int fd = open_journal(path);
  try {
    write_line(fd, path, journal_line(std::move(e), this_host()), durable);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

JournalWriter::JournalWriter(std::string path) : path_(std::move(path)), host_(this_host()), fd_(open_journal(path_)) {}
JournalWriter::~JournalWriter() {
  if (fd_ >= 0) ::close(fd_);
}
void JournalWriter::append(JournalEvent event, bool durable) {
  write_line(fd_, path_, journal_line(std::move(event), host_), durable);
}

std::vector<JournalEvent> read_journal(const std::string& path) {
  std::vector<JournalEvent> out;
  // A line torn by a crash is skipped; a well-formed event with a mistyped field is not, and is
  // refused.
  const std::size_t too_long = read_json_lines(
      path, {.max_line_bytes = kMaxJournalLineBytes, .key = "event", .read_unterminated = false},
      [&](const nlohmann::json& j, std::size_t line_no) { out.push_back(journal_event(j, path, line_no)); });
  if (too_long != 0)
    throw StorageError(path + ":" + std::to_string(too_long) + ": line longer than " +
                           std::to_string(kMaxJournalLineBytes) + " bytes (not a linsweep journal)",
                       ExitCode::kBadInput);
  return out;
}

}  // namespace linsweep
