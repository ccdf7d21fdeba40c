// Writing and checking a unit file's seal (length, CRC-32 and Adler-32 in the HDF5 user block).
#include "storage/unit_seal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "common/errors.hpp"

namespace linsweep {
namespace {

constexpr char kSealMagic[] = "LINSWEEP UNIT v1";  // 16 characters, stored without the NUL
static_assert(sizeof(kSealMagic) == 17);

struct SealFile {
  int fd = -1;
  ~SealFile() {
    if (fd >= 0) ::close(fd);
  }
};

struct Sums {
  std::uint32_t crc = 0;
  std::uint32_t adler = 0;
};

void put_le(unsigned char* p, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

std::uint64_t get_le(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= std::uint64_t{p[i]} << (8 * i);
  return v;
}

[[noreturn]] void io_error(const std::string& path, const std::string& what, int err) {
  if (err == ENOSPC || err == EDQUOT) throw DiskFullError(path + ": " + what + ": " + std::strerror(err));
  throw StorageError(path + ": " + what + ": " + std::strerror(err));
}

// CRC-32 and Adler-32 of bytes [kUnitSealBytes, size) of `fd`.
Sums sum_payload(int fd, std::uint64_t size, const std::string& path) {
  Sums s{static_cast<std::uint32_t>(crc32(0L, Z_NULL, 0)), static_cast<std::uint32_t>(adler32(0L, Z_NULL, 0))};
  std::vector<unsigned char> buf(std::size_t{1} << 20);
  std::uint64_t at = kUnitSealBytes;
  while (at < size) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size - at));
    const ssize_t got = ::pread(fd, buf.data(), want, static_cast<off_t>(at));
    if (got < 0) {
      if (errno == EINTR) continue;
      io_error(path, "read failed", errno);
    }
    if (got == 0) throw StorageError("shrank while it was read", ExitCode::kBadInput);
    s.crc = static_cast<std::uint32_t>(crc32(s.crc, buf.data(), static_cast<uInt>(got)));
    s.adler = static_cast<std::uint32_t>(adler32(s.adler, buf.data(), static_cast<uInt>(got)));
    at += static_cast<std::uint64_t>(got);
  }
  return s;
}

}  // namespace

void write_unit_seal(const std::string& path) {
  SealFile f{::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW)};
  if (f.fd < 0) io_error(path, "cannot open to seal", errno);
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) io_error(path, "cannot stat", errno);
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size < kUnitSealBytes) throw StorageError(path + ": has no user block for its seal");
  const Sums s = sum_payload(f.fd, size, path);
  std::array<unsigned char, kUnitSealBytes> seal{};
  std::memcpy(seal.data(), kSealMagic, 16);
  put_le(seal.data() + 16, size, 8);
  put_le(seal.data() + 24, s.crc, 4);
  put_le(seal.data() + 28, s.adler, 4);
  std::size_t done = 0;
  while (done < seal.size()) {
    const ssize_t n = ::pwrite(f.fd, seal.data() + done, seal.size() - done, static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      io_error(path, "writing its seal failed", errno);
    }
    done += static_cast<std::size_t>(n);
  }
  const int fd = std::exchange(f.fd, -1);
  if (::close(fd) != 0) io_error(path, "close after sealing failed", errno);
}

void verify_unit_seal(const std::string& path) {
  auto bad = [](const std::string& what) { throw StorageError(what, ExitCode::kBadInput); };
  SealFile f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) bad(std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) bad("not a regular file");
  const auto size = static_cast<std::uint64_t>(st.st_size);
  std::array<unsigned char, 32> head{};
  if (size < kUnitSealBytes) bad("not a linsweep unit file (truncated or corrupted: " + std::to_string(size) + " bytes)");
  std::size_t got = 0;
  while (got < head.size()) {
    const ssize_t n = ::pread(f.fd, head.data() + got, head.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) bad("cannot read its seal");
    got += static_cast<std::size_t>(n);
  }
  if (std::memcmp(head.data(), kSealMagic, 16) != 0)
    bad("not a linsweep unit file (no seal: corrupted, or not an HDF5 file this build wrote)");
  const std::uint64_t length = get_le(head.data() + 16, 8);
  if (length != size)
    bad("truncated or extended after it was written (" + std::to_string(size) + " bytes, sealed at " +
        std::to_string(length) + ")");
  const Sums s = sum_payload(f.fd, size, path);
  // Compared without branching on the values: a fuzzer that splices compared operands into its
  // input (libFuzzer's table of recent compares) must not learn the checksum it needs.
  const std::uint32_t diff = (s.crc ^ static_cast<std::uint32_t>(get_le(head.data() + 24, 4))) |
                             (s.adler ^ static_cast<std::uint32_t>(get_le(head.data() + 28, 4)));
  if (diff != 0) bad("damaged after it was written (checksum mismatch; truncated or corrupted)");
}

}  // namespace linsweep
