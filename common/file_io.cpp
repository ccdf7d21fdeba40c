// File reading, JSON parsing and UTF-8 validation shared by every reader.
#include "common/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"

namespace linsweep {

std::string read_file(const std::string& path, std::size_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw InputError(path + ": cannot open: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw InputError(path + ": not a regular file");
  if (static_cast<std::size_t>(st.st_size) > max_bytes)
    throw InputError(path + ": file is " + std::to_string(st.st_size) + " bytes, more than the limit of " +
                     std::to_string(max_bytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open: " + std::strerror(errno));
  std::string data(static_cast<std::size_t>(st.st_size), '\0');
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  if (static_cast<std::size_t>(in.gcount()) != data.size()) throw InputError(path + ": short read");
  return data;
}

nlohmann::json read_json_file(const std::string& path, std::size_t max_bytes) {
  std::string text = read_file(path, max_bytes);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path + ": invalid JSON at byte " + std::to_string(e.byte));
  } catch (const nlohmann::json::out_of_range&) {
    // nlohmann throws out_of_range, not parse_error, for a number past double's range (1e400).
    throw InputError(path + ": invalid JSON: a number is out of range");
  }
}

LineStatus read_line(std::istream& in, std::string* line, std::size_t max_bytes) {
  line->clear();
  std::streambuf* buf = in.rdbuf();
  for (;;) {
    const int c = buf->sbumpc();
    if (c == std::char_traits<char>::eof()) return line->empty() ? LineStatus::kEnd : LineStatus::kUnterminated;
    if (c == '\n') return LineStatus::kLine;
    if (line->size() >= max_bytes) return LineStatus::kTooLong;
    line->push_back(static_cast<char>(c));
  }
}

namespace {

std::string fmt_hex(unsigned char c) {
  static const char* digits = "0123456789abcdef";
  return std::string("\\x") + digits[c >> 4] + digits[c & 15];
}

}  // namespace

std::size_t find_invalid_utf8(std::string_view s) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    unsigned c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len;
    unsigned cp;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2, cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3, cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4, cp = c & 0x07;
    } else {
      return i;
    }
    if (i + len > n) return i;
    for (std::size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return i;
    i += len;
  }
  return std::string_view::npos;
}

void require_utf8(std::string_view text, const std::string& what) {
  std::size_t bad = find_invalid_utf8(text);
  if (bad != std::string_view::npos) throw InputError(what + ": invalid UTF-8 at byte " + std::to_string(bad));
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t bad = find_invalid_utf8(text.substr(i));
    const std::size_t good_end = bad == std::string_view::npos ? text.size() : i + bad;
    for (; i < good_end; ++i) {
      const unsigned char c = static_cast<unsigned char>(text[i]);
      if (c == '\n')
        out += "\\n";
      else if (c == '\t')
        out += "\\t";
      else if (c == '\r')
        out += "\\r";
      else if (c < 0x20 || c == 0x7F)
        out += fmt_hex(c);
      else
        out += static_cast<char>(c);
    }
    if (i < text.size()) out += fmt_hex(static_cast<unsigned char>(text[i++]));  // one byte of an invalid sequence
  }
  return out;
}

int fsync_path(const std::string& path) noexcept {
  // O_RDONLY works for both files and directories; fsync flushes the inode, whichever
  // descriptor wrote it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const int rc = ::fsync(fd);
  const int e = errno;
  ::close(fd);
  return rc == 0 ? 0 : e;
}

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace linsweep
