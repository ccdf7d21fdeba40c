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

namespace linsweep {

void append_journal(const std::string& path, JournalEvent e) {
  if (e.host.empty()) {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    e.host = host;
  }
  if (e.time == 0)
    e.time = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  nlohmann::json j = {{"event", e.event}, {"unit", e.unit}, {"host", e.host}, {"rank", e.rank}, {"time", e.time}};
  if (e.duration > 0) j["duration"] = e.duration;
  if (!e.error.empty()) j["error"] = e.error;
  const std::string line = j.dump() + "\n";
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw StorageError(path + ": cannot open journal: " + std::strerror(errno));
  const ssize_t n = ::write(fd, line.data(), line.size());
  const int e1 = errno;
  const int rc = ::fsync(fd);
  ::close(fd);
  if (n != static_cast<ssize_t>(line.size()) || rc != 0)
    throw StorageError(path + ": journal write failed: " + std::strerror(n < 0 ? e1 : errno));
}

std::vector<JournalEvent> read_journal(const std::string& path) {
  std::vector<JournalEvent> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // no trailing newline: torn by a crash mid-append
    auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("event") || !j["event"].is_string()) continue;
    JournalEvent e;
    e.event = j["event"].get<std::string>();
    e.unit = j.value("unit", "");
    e.host = j.value("host", "");
    e.rank = j.value("rank", 0);
    e.time = j.value("time", 0.0);
    e.duration = j.value("duration", 0.0);
    e.error = j.value("error", "");
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace linsweep
