// JSON Lines: appending one line at a time, and reading what a crash may have torn.
#include "common/json_lines.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "common/file_io.hpp"

namespace linsweep {

int open_for_append(const std::string& path) noexcept {
  return ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
}

int append_line(int fd, const std::string& line, bool durable) noexcept {
  if (const int err = write_all(fd, line); err != 0) return err;
  if (durable && ::fsync(fd) != 0) return errno;
  return 0;
}

std::size_t read_json_lines(const std::string& path, const JsonLinesFormat& format,
                            const std::function<void(const nlohmann::json&, std::size_t)>& on_object) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  std::size_t line_no = 0;
  for (LineStatus st; (st = read_line(in, &line, format.max_line_bytes)) != LineStatus::kEnd;) {
    ++line_no;
    if (st == LineStatus::kTooLong) return line_no;
    if (st == LineStatus::kUnterminated && !format.read_unterminated) break;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.contains(format.key) && j[format.key].is_string()) on_object(j, line_no);
  }
  return 0;
}

}  // namespace linsweep
