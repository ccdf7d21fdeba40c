// .npy parsing with every length checked against the file.
#include "engine/corpus/npy.hpp"

#include <cctype>
#include <cstring>
#include <fstream>
#include <limits>
#include <span>
#include <string_view>

#include "common/errors.hpp"
#include "common/mapped_file.hpp"

namespace linsweep {
namespace {

constexpr std::size_t kMaxHeader = 1u << 16;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// Calls `value(rest)` for each occurrence of `quoted_key` followed by optional whitespace, ':' and
// optional whitespace (rest: the header after them), in order, until it returns true. Loops, not
// a regex: the header is up to kMaxHeader bytes of whatever a file holds.
template <class F>
void for_each_entry(std::string_view header, std::string_view quoted_key, F&& value) {
  for (std::size_t at = header.find(quoted_key); at != std::string_view::npos; at = header.find(quoted_key, at + 1)) {
    std::size_t p = at + quoted_key.size();
    while (p < header.size() && is_space(header[p])) ++p;
    if (p >= header.size() || header[p] != ':') continue;
    ++p;
    while (p < header.size() && is_space(header[p])) ++p;
    if (value(header.substr(p))) return;
  }
}

struct NpyLayout {
  char kind;               // 'i' or 'u'
  int size;                // bytes per element
  bool big;                // big-endian
  std::uint64_t count;     // elements
  std::size_t data_start;  // offset of the data in the file
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
  if (header_len > kMaxHeader || header_len > b.size() - header_start)
    fail(".npy header length runs past the end of the file");
  const std::string_view header(reinterpret_cast<const char*>(b.data() + header_start), header_len);

  // The three entries the reader needs, each at the first occurrence of its key where the value
  // has the expected form (what std::regex_search did before; libstdc++'s regex recursed once per
  // character and overflowed the stack on a 32 KB header, well inside kMaxHeader).
  std::string_view descr, fortran, dims;
  for_each_entry(header, "'descr'", [&](std::string_view v) {
    std::size_t digits = 3;
    while (digits < v.size() && v[digits] >= '0' && v[digits] <= '9') ++digits;
    if (v.size() < 5 || v[0] != '\'' || std::string_view("<>|=").find(v[1]) == std::string_view::npos ||
        !std::isalpha(static_cast<unsigned char>(v[2])) || digits == 3 || digits >= v.size() || v[digits] != '\'')
      return false;
    descr = v.substr(1, digits - 1);  // e.g. <i4
    return true;
  });
  if (descr.empty()) fail(".npy header has no supported 'descr'");
  const char endian = descr[0];
  const char kind = descr[1];
  const int size = std::stoi(std::string(descr.substr(2, 2)));
  const bool big = endian == '>';
  if (!((kind == 'i' && (size == 4 || size == 8)) || (kind == 'u' && size == 2)))
    fail(".npy dtype " + std::string(descr.substr(0, 12)) + " is not supported (int32, int64, uint16)");
  for_each_entry(header, "'fortran_order'", [&](std::string_view v) {
    for (std::string_view word : {"True", "False"})
      if (v.starts_with(word)) fortran = word;
    return !fortran.empty();
  });
  if (fortran.empty()) fail(".npy header has no 'fortran_order'");
  if (fortran == "True") fail(".npy array is Fortran-ordered");
  bool has_shape = false;
  for_each_entry(header, "'shape'", [&](std::string_view v) {
    const std::size_t close = v.find(')');
    if (v.empty() || v[0] != '(' || close == std::string_view::npos) return false;
    dims = v.substr(1, close - 1);
    has_shape = true;
    return true;
  });
  if (!has_shape) fail(".npy header has no 'shape'");
  std::uint64_t count = 1;
  {
    std::size_t pos = 0;
    bool any = false;
    while (pos < dims.size()) {
      while (pos < dims.size() && (dims[pos] == ' ' || dims[pos] == ',')) ++pos;
      if (pos >= dims.size()) break;
      std::size_t end = pos;
      while (end < dims.size() && dims[end] >= '0' && dims[end] <= '9') ++end;
      if (end == pos || end - pos > 15) fail(".npy shape is invalid");
      std::uint64_t d = std::stoull(std::string(dims.substr(pos, end - pos)));
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
    fail(".npy data is " + std::to_string(b.size() - data_start) + " bytes but the shape needs " +
         std::to_string(need));
  return {kind, size, big, count, data_start};
}

}  // namespace

std::int64_t check_npy_tokens(const std::string& path) {
  MappedFile file(path);
  return static_cast<std::int64_t>(parse_npy(file.bytes(), path).count);
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
    if (kind == 'u')
      v = static_cast<std::int64_t>(raw);
    else if (size == 4)
      v = static_cast<std::int32_t>(static_cast<std::uint32_t>(raw));
    else
      v = static_cast<std::int64_t>(raw);
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
    const char le[4] = {static_cast<char>(t & 0xFF), static_cast<char>((t >> 8) & 0xFF),
                        static_cast<char>((t >> 16) & 0xFF), static_cast<char>((t >> 24) & 0xFF)};
    out.write(le, 4);
  }
  if (!out) throw InputError(path + ": write failed");
}

}  // namespace linsweep
