// JSON Lines files that processes append to and readers scan (the store's journal, the Slurm
// job records): one write per line, and readers that survive a crash in the middle of one.
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace linsweep {

// Opens `path` for appending, creating it (mode 0644). O_NOFOLLOW: a file planted as a
// symbolic link must not make us append elsewhere. Returns the descriptor (the caller closes
// it), or -1 with errno set.
int open_for_append(const std::string& path) noexcept;

// Writes `line` (ending in '\n') to `fd`, opened with O_APPEND, in one write() so that lines of
// concurrent appenders never interleave, then fsyncs when `durable`. A short write (the disk
// filled up mid-line) is continued only to learn the errno; readers skip the torn line.
// Returns 0, or the errno of the failing write or fsync, so that each caller raises its own
// typed error.
int append_line(int fd, const std::string& line, bool durable) noexcept;

// How read_json_lines reads a file.
struct JsonLinesFormat {
  std::size_t max_line_bytes;  // a longer line stops the reading (see the return value)
  const char* key;             // an object without this member as a string is skipped
  bool read_unterminated;      // false: a last line without '\n' is a torn append, skipped
};

// Calls `on_object(object, line_number)` for each line of `path` that parses as a JSON object
// holding `format.key` as a string; a missing file has none. A line that does not parse is
// crash residue (a torn append that a later one continued) and is skipped. Returns 0, or the
// number of the first line longer than `format.max_line_bytes`, where reading stopped: the
// caller refuses the file with its own typed error. Exceptions of `on_object` propagate.
std::size_t read_json_lines(const std::string& path, const JsonLinesFormat& format,
                            const std::function<void(const nlohmann::json&, std::size_t)>& on_object);

}  // namespace linsweep
