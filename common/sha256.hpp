// SHA-256 (OpenSSL's EVP digest) for content ids and fingerprints.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace linsweep {

// Incremental SHA-256. Owns its OpenSSL context. Not thread safe per object; movable, not
// copyable. Throws std::runtime_error when OpenSSL fails (it does not for SHA-256 short of
// running out of memory).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(const void* data, std::size_t n);
  void update(std::string_view s) { update(s.data(), s.size()); }
  // Finishes and returns the 64-character lowercase hex digest; the object is then spent.
  std::string hex();

 private:
  struct Context;
  std::unique_ptr<Context> ctx_;
};

std::string sha256_hex(std::string_view s);
// Hashes a file's bytes in 1 MiB reads; throws InputError naming it when unreadable.
std::string sha256_file(const std::string& path);

}  // namespace linsweep
