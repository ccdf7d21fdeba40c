// SHA-256 (FIPS 180-4) for content ids and fingerprints.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace linsweep {

// Incremental SHA-256. Not thread safe per object.
class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t n);
  void update(std::string_view s) { update(s.data(), s.size()); }
  // Finishes and returns the 64-character lowercase hex digest; the object is then spent.
  std::string hex();

 private:
  void block(const std::uint8_t* p);
  std::array<std::uint32_t, 8> h_;
  std::array<std::uint8_t, 64> buf_{};
  std::size_t used_ = 0;
  std::uint64_t bytes_ = 0;
};

std::string sha256_hex(std::string_view s);
// Hashes a file's bytes in 1 MiB reads; throws InputError naming it when unreadable.
std::string sha256_file(const std::string& path);

}  // namespace linsweep
