// Scratch files and the abort path of the fuzz targets.
#include "fuzz_support.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

namespace linsweep::fuzz {
namespace {

// Owns the scratch directory; its destructor runs at a normal exit (libFuzzer's
// -max_total_time ends with exit(), a crash leaves the directory for inspection).
class ScratchDir {
 public:
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/linsweep-fuzz-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr)
      fail("cannot create a scratch directory " + pattern + ": " + std::strerror(errno));
    path_ = buf.data();
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

const std::string& scratch_dir() {
  static const ScratchDir dir;
  return dir.path();
}

std::string write_input(const std::string& name, std::string_view bytes) {
  const std::string path = scratch_dir() + "/" + name;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  // POSIX I/O: no stream state to reset between millions of small writes.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot write " + path + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail("cannot write " + path + ": " + std::strerror(errno));
    done += static_cast<std::size_t>(w);
  }
  ::close(fd);
  return path;
}

std::string link_input(const std::string& name, const std::string& target) {
  const std::string path = scratch_dir() + "/" + name;
  std::error_code ec;
  if (std::filesystem::is_symlink(path, ec)) return path;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  std::filesystem::create_symlink(target, path, ec);
  if (ec) fail("cannot link " + path + " to " + target + ": " + ec.message());
  return path;
}

std::pair<std::string_view, std::string_view> split_input(std::string_view input) {
  const auto nul = input.find('\0');
  if (nul == std::string_view::npos) return {input, {}};
  return {input.substr(0, nul), input.substr(nul + 1)};
}

void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz target: %s\n", what.c_str());
  std::abort();
}

}  // namespace linsweep::fuzz
