// Writing and checking a unit file's seal (length, CRC-32 and Adler-32 in the HDF5 user block).
#include "storage/unit_seal.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>

#include "common/errors.hpp"
#include "common/mapped_file.hpp"

namespace linsweep {
namespace {

constexpr char kSealMagic[] = "LINSWEEP UNIT v1";  // 16 characters, stored without the NUL
static_assert(sizeof(kSealMagic) == 17);
constexpr std::size_t kSealFields = 32;  // magic, length, CRC-32, Adler-32; zeros follow

struct Sums {
  std::uint32_t crc = 0;
  std::uint32_t adler = 0;
};

void put_le(unsigned char* p, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

std::uint64_t get_le(const std::uint8_t* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= std::uint64_t{p[i]} << (8 * i);
  return v;
}

// CRC-32 and Adler-32 of `bytes`, fed to zlib in pieces that fit its uInt lengths.
Sums sum(std::span<const std::uint8_t> bytes) {
  Sums s{static_cast<std::uint32_t>(crc32(0L, Z_NULL, 0)), static_cast<std::uint32_t>(adler32(0L, Z_NULL, 0))};
  constexpr std::size_t kPiece = std::size_t{1} << 30;
  for (std::size_t at = 0; at < bytes.size(); at += kPiece) {
    const auto n = static_cast<uInt>(std::min(kPiece, bytes.size() - at));
    s.crc = static_cast<std::uint32_t>(crc32(s.crc, bytes.data() + at, n));
    s.adler = static_cast<std::uint32_t>(adler32(s.adler, bytes.data() + at, n));
  }
  return s;
}

[[noreturn]] void io_error(const std::string& path, const std::string& what, int err) {
  if (err == ENOSPC || err == EDQUOT) throw DiskFullError(path + ": " + what + ": " + std::strerror(err));
  throw StorageError(path + ": " + what + ": " + std::strerror(err));
}

}  // namespace

void write_unit_seal(const std::string& path) {
  std::array<unsigned char, kSealFields> seal{};
  {
    const MappedFile file(path);
    if (file.size() < kUnitSealBytes) throw StorageError(path + ": has no user block for its seal");
    const Sums s = sum(file.bytes().subspan(kUnitSealBytes));
    std::memcpy(seal.data(), kSealMagic, 16);
    put_le(seal.data() + 16, file.size(), 8);
    put_le(seal.data() + 24, s.crc, 4);
    put_le(seal.data() + 28, s.adler, 4);
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) io_error(path, "cannot open to seal", errno);
  std::size_t done = 0;
  while (done < seal.size()) {
    const ssize_t n = ::pwrite(fd, seal.data() + done, seal.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      io_error(path, "writing its seal failed", err);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) io_error(path, "close after sealing failed", errno);
}

void verify_unit_seal(const std::string& path) {
  auto bad = [](const std::string& what) { throw StorageError(what, ExitCode::kBadInput); };
  std::optional<MappedFile> file;
  try {
    file.emplace(path);
  } catch (const InputError& e) {  // "<path>: cannot open: …"; the unit-file reader names the path
    std::string what = e.what();
    if (what.rfind(path + ": ", 0) == 0) what.erase(0, path.size() + 2);
    bad(what);
  }
  const auto bytes = file->bytes();
  if (bytes.size() < kUnitSealBytes)
    bad("not a linsweep unit file (truncated or corrupted: " + std::to_string(bytes.size()) + " bytes)");
  if (std::memcmp(bytes.data(), kSealMagic, 16) != 0)
    bad("not a linsweep unit file (no seal: corrupted, or not an HDF5 file this build wrote)");
  const std::uint64_t length = get_le(bytes.data() + 16, 8);
  if (length != bytes.size())
    bad("truncated or extended after it was written (" + std::to_string(bytes.size()) + " bytes, sealed at " +
        std::to_string(length) + ")");
  const Sums s = sum(bytes.subspan(kUnitSealBytes));
  // Compared without branching on the values: a fuzzer that splices compared operands into its
  // input (libFuzzer's table of recent compares) must not learn the checksum it needs.
  const std::uint32_t diff = (s.crc ^ static_cast<std::uint32_t>(get_le(bytes.data() + 24, 4))) |
                             (s.adler ^ static_cast<std::uint32_t>(get_le(bytes.data() + 28, 4)));
  if (diff != 0) bad("damaged after it was written (checksum mismatch; truncated or corrupted)");
}

}  // namespace linsweep
