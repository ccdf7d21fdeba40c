// Whole-file reads with a size limit checked before anything is allocated.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace linsweep {

// Returns the bytes of `path`. Throws InputError("<path>: ...") when it cannot be read or
// is larger than `max_bytes` (checked with stat before reading).
std::string read_file(const std::string& path, std::size_t max_bytes);

// Reads and parses a JSON document of at most `max_bytes`. Throws InputError naming the
// path and the parser's byte position on malformed JSON.
nlohmann::json read_json_file(const std::string& path, std::size_t max_bytes);

// What read_line found.
enum class LineStatus { kEnd, kLine, kUnterminated, kTooLong };

// Reads the next line of `in` into `line` (the '\n' is consumed, not stored), never storing more
// than `max_bytes`: kTooLong when the line is longer (the caller refuses the file: an unbounded
// line would be read into memory whole), kUnterminated for a last line without '\n' (a torn
// append), kEnd when nothing is left.
LineStatus read_line(std::istream& in, std::string* line, std::size_t max_bytes);

// Returns the byte offset of the first invalid UTF-8 sequence (overlong forms, surrogates
// and code points past U+10FFFF are invalid), or std::string_view::npos when valid.
std::size_t find_invalid_utf8(std::string_view text) noexcept;

// Throws InputError("<what>: invalid UTF-8 at byte N") unless `text` is valid UTF-8.
void require_utf8(std::string_view text, const std::string& what);

// `text` with control characters and bytes that are not valid UTF-8 escaped (`\n`, `\t`,
// `\xNN`): a value quoted in an error message must keep the message on one line (main prints
// only the first line) and must not end it early at a NUL.
std::string printable(std::string_view text);

// fsyncs `path`, a regular file or a directory (a directory's fsync makes the entries created,
// renamed or removed in it survive a crash). Returns 0, or the errno of the failing open or
// fsync, so that each caller can raise its own typed error (ModelError, StorageError, ...).
int fsync_path(const std::string& path) noexcept;

// True when `path` names an existing regular file / directory.
bool is_regular_file(const std::string& path);
bool is_directory(const std::string& path);

}  // namespace linsweep
