// JSON-lines journal.
#include "storage/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/file_io.hpp"

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
  // O_NOFOLLOW: a journal.jsonl planted as a symbolic link must not make us append elsewhere.
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) throw_write_error(path + ": cannot open journal", errno);
  return fd;
}

// One write() per line: with O_APPEND, lines of concurrent appenders never interleave. A short
// write (the disk filled up mid-line) is continued only to learn the errno; the torn line is
// skipped by readers.
void write_line(int fd, const std::string& path, const std::string& line, bool durable) {
  std::size_t done = 0;
  int err = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (err == 0 && durable && ::fsync(fd) != 0) err = errno;
  if (err != 0) throw_write_error(path + ": journal write failed", err);
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
  std::ifstream in(path, std::ios::binary);
  std::string line;
  std::size_t line_no = 0;
  for (LineStatus st; (st = read_line(in, &line, kMaxJournalLineBytes)) != LineStatus::kEnd;) {
    ++line_no;
    if (st == LineStatus::kTooLong)
      throw StorageError(path + ":" + std::to_string(line_no) + ": line longer than " +
                             std::to_string(kMaxJournalLineBytes) + " bytes (not a linsweep journal)",
                         ExitCode::kBadInput);
    if (st == LineStatus::kUnterminated) break;  // no trailing newline: torn by a crash mid-append
    // A line that does not parse is crash residue (a torn append that a later one continued)
    // and is skipped; a well-formed event with a mistyped field is not, and is refused.
    auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("event") || !j["event"].is_string()) continue;
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
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace linsweep
