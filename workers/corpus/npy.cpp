// .npy parsing with every length checked against the file.
#include "workers/corpus/npy.hpp"

#include <cstring>
#include <fstream>
#include <limits>
#include <regex>
#include <span>

#include "common/errors.hpp"
#include "common/mapped_file.hpp"

namespace linsweep {
namespace {

constexpr std::size_t kMaxHeader = 1u << 16;

struct NpyLayout {
  char kind;                // 'i' or 'u'
  int size;                 // bytes per element
  bool big;                 // big-endian
  std::uint64_t count;      // elements
  std::size_t data_start;   // offset of the data in the file
};

// Validates everything but the token values; `b` is the whole file.
NpyLayout parse_npy(std::span<const std::uint8_t> b, const std::string& path) {
  auto fail = [&](const std::string& what) { throw InputError(path + ": " + what); };
  if (b.size() < 10 || std::memcmp(b.data(), "\x93NUMPY", 6) != 0) fail("not a .npy file (bad magic)");
  const unsigned major = b[6];
  std::size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = b[8] | (static_cast<std::size_t>(b[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) fail("truncated .npy header");
    header_len = b[8] | (static_cast<std::size_t>(b[9]) << 8) | (static_cast<std::size_t>(b[10]) << 16) |
                 (static_cast<std::size_t>(b[11]) << 24);
    header_start = 12;
  } else {
    fail("unsupported .npy version " + std::to_string(major));
  }
  if (header_len > kMaxHeader || header_len > b.size() - header_start) fail(".npy header length runs past the end of the file");
  const std::string header(reinterpret_cast<const char*>(b.data() + header_start), header_len);

  std::smatch m;
  static const std::regex descr_re(R"('descr'\s*:\s*'([<>|=])([a-zA-Z])(\d+)')");
  static const std::regex fortran_re(R"('fortran_order'\s*:\s*(True|False))");
  static const std::regex shape_re(R"('shape'\s*:\s*\(([^)]*)\))");
  if (!std::regex_search(header, m, descr_re)) fail(".npy header has no supported 'descr'");
  const char endian = m[1].str()[0];
  const char kind = m[2].str()[0];
  const int size = std::stoi(m[3].str().substr(0, 2));
  const bool big = endian == '>';
  if (!((kind == 'i' && (size == 4 || size == 8)) || (kind == 'u' && size == 2)))
    fail(".npy dtype " + m[1].str() + m[2].str() + m[3].str() + " is not supported (int32, int64, uint16)");
  if (!std::regex_search(header, m, fortran_re)) fail(".npy header has no 'fortran_order'");
  if (m[1] == "True") fail(".npy array is Fortran-ordered");
  if (!std::regex_search(header, m, shape_re)) fail(".npy header has no 'shape'");
  std::uint64_t count = 1;
  {
    const std::string dims = m[1].str();
    std::size_t pos = 0;
    bool any = false;
    while (pos < dims.size()) {
      while (pos < dims.size() && (dims[pos] == ' ' || dims[pos] == ',')) ++pos;
      if (pos >= dims.size()) break;
      std::size_t end = pos;
      while (end < dims.size() && dims[end] >= '0' && dims[end] <= '9') ++end;
      if (end == pos || end - pos > 15) fail(".npy shape is invalid");
      std::uint64_t d = std::stoull(dims.substr(pos, end - pos));
      if (d != 0 && count > std::numeric_limits<std::uint64_t>::max() / d / 8) fail(".npy shape overflows");
      count *= d;
      any = true;
      pos = end;
    }
    if (!any) fail(".npy array is a scalar, not a token stream");
  }
  const std::size_t data_start = header_start + header_len;
  const std::uint64_t need = count * static_cast<std::uint64_t>(size);
  if (need != b.size() - data_start)
    fail(".npy data is " + std::to_string(b.size() - data_start) + " bytes but the shape needs " + std::to_string(need));
  return {kind, size, big, count, data_start};
}

}  // namespace

void check_npy_tokens(const std::string& path) {
  MappedFile file(path);
  parse_npy(file.bytes(), path);
}

std::vector<TokenId> read_npy_tokens(const std::string& path) {
  MappedFile file(path);
  const auto b = file.bytes();
  const auto [kind, size, big, count, data_start] = parse_npy(b, path);
  auto fail = [&](const std::string& what) { throw InputError(path + ": " + what); };
  std::vector<TokenId> out;
  out.reserve(count);
  const std::uint8_t* p = b.data() + data_start;
  for (std::uint64_t i = 0; i < count; ++i, p += size) {
    std::uint64_t raw = 0;
    for (int k = 0; k < size; ++k) {
      const int idx = big ? k : size - 1 - k;
      raw = (raw << 8) | p[idx];
    }
    std::int64_t v;
    if (kind == 'u') v = static_cast<std::int64_t>(raw);
    else if (size == 4) v = static_cast<std::int32_t>(static_cast<std::uint32_t>(raw));
    else v = static_cast<std::int64_t>(raw);
    if (v < 0 || v > std::numeric_limits<TokenId>::max())
      fail("token " + std::to_string(v) + " at index " + std::to_string(i) + " is not a valid id");
    out.push_back(static_cast<TokenId>(v));
  }
  return out;
}

void write_npy_tokens(const std::string& path, const std::vector<TokenId>& tokens) {
  std::string header = "{'descr': '<i4', 'fortran_order': False, 'shape': (" + std::to_string(tokens.size()) + ",), }";
  while ((10 + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InputError(path + ": cannot write");
  out.write("\x93NUMPY\x01\x00", 8);
  const char len[2] = {static_cast<char>(header.size() & 0xFF), static_cast<char>(header.size() >> 8)};
  out.write(len, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  for (TokenId t : tokens) {
    const char le[4] = {static_cast<char>(t & 0xFF), static_cast<char>((t >> 8) & 0xFF), static_cast<char>((t >> 16) & 0xFF),
                        static_cast<char>((t >> 24) & 0xFF)};
    out.write(le, 4);
  }
  if (!out) throw InputError(path + ": write failed");
}

}  // namespace linsweep
