// SHA-256 through OpenSSL's EVP interface.
#include "common/sha256.hpp"

#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "common/errors.hpp"

namespace linsweep {

struct Sha256::Context {
  EVP_MD_CTX* md = nullptr;
  ~Context() { EVP_MD_CTX_free(md); }
};

namespace {

void check(int ok, const char* what) {
  if (ok != 1) throw std::runtime_error(std::string("OpenSSL: ") + what + " failed");
}

}  // namespace

Sha256::Sha256() : ctx_(std::make_unique<Context>()) {
  ctx_->md = EVP_MD_CTX_new();
  if (ctx_->md == nullptr) throw std::runtime_error("OpenSSL: EVP_MD_CTX_new failed");
  check(EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr), "EVP_DigestInit_ex(sha256)");
}

Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(const void* data, std::size_t n) {
  if (n > 0) check(EVP_DigestUpdate(ctx_->md, data, n), "EVP_DigestUpdate");
}

std::string Sha256::hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  check(EVP_DigestFinal_ex(ctx_->md, digest, &n), "EVP_DigestFinal_ex");
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (unsigned int i = 0; i < n; ++i) {
    out += digits[digest[i] >> 4];
    out += digits[digest[i] & 0xF];
  }
  return out;
}

std::string sha256_hex(std::string_view s) {
  Sha256 h;
  h.update(s);
  return h.hex();
}

std::string sha256_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open: " + std::strerror(errno));
  Sha256 h;
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    h.update(buf.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw InputError(path + ": read failed");
  return h.hex();
}

}  // namespace linsweep
