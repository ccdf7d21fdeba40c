// Safe names and symlink-free store entries.
#include "common/path_confinement.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>

#include "common/errors.hpp"
#include "common/file_io.hpp"

namespace linsweep {
namespace {

bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

// The target of the link at `path`, for the message.
std::string link_target(const std::string& path) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink(path.c_str(), buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string("?");
}

}  // namespace

std::string unsafe_name_reason(std::string_view name) {
  if (name.empty()) return "is empty";
  if (name.size() > kMaxSafeNameBytes) return "is longer than " + std::to_string(kMaxSafeNameBytes) + " bytes";
  if (!is_alnum(name[0])) return "must start with a letter or a digit";
  for (char c : name)
    if (!is_alnum(c) && c != '.' && c != '-' && c != '_')
      return "contains '" + printable(std::string_view(&c, 1)) +
             "' (names become file names: letters, digits, '.', '-' and '_' only)";
  if (name.find("..") != std::string_view::npos) return "contains '..'";
  return "";
}

void require_real_entries(const std::string& dir, const std::vector<std::string>& entries) {
  for (const auto& entry : entries) {
    if (entry.empty() || entry[0] == '/')
      throw StorageError(dir + ": '" + printable(entry) + "' is not a path inside it", ExitCode::kBadInput);
    std::string path = dir;
    std::size_t begin = 0;
    while (begin <= entry.size()) {
      const std::size_t end = std::min(entry.find('/', begin), entry.size());
      const std::string part = entry.substr(begin, end - begin);
      begin = end + 1;
      if (part.empty() || part == ".") continue;
      if (part == "..")
        throw StorageError(dir + ": '" + printable(entry) + "' leaves the directory", ExitCode::kBadInput);
      path += "/" + part;
      struct stat st {};
      if (::lstat(path.c_str(), &st) != 0) break;  // missing: nothing below it exists either
      if (S_ISLNK(st.st_mode))
        throw StorageError(printable(path) + ": is a symbolic link (to " + printable(link_target(path)) +
                               "); linsweep writes only inside " + printable(dir) +
                               ": replace the link with a real directory or file",
                           ExitCode::kBadInput);
    }
  }
}

}  // namespace linsweep
