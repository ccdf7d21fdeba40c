// Safetensors header parsing and validation (https://github.com/huggingface/safetensors format).
#include "engine/safetensors.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"

namespace linsweep {
namespace {

struct DTypeName {
  const char* name;
  DType dtype;
  std::size_t size;
};

constexpr DTypeName kDTypes[] = {
    {"F64", DType::kF64, 8}, {"F32", DType::kF32, 4},   {"F16", DType::kF16, 2}, {"BF16", DType::kBF16, 2},
    {"I64", DType::kI64, 8}, {"I32", DType::kI32, 4},   {"I16", DType::kI16, 2}, {"I8", DType::kI8, 1},
    {"U8", DType::kU8, 1},   {"BOOL", DType::kBool, 1},
};

bool parse_dtype(const std::string& s, DType* out) {
  for (const auto& d : kDTypes) {
    if (s == d.name) {
      *out = d.dtype;
      return true;
    }
  }
  return false;
}

// Reads a non-negative integer that fits in int64 or fails.
bool as_index(const nlohmann::json& j, std::uint64_t* out) {
  if (j.is_number_unsigned()) {
    *out = j.get<std::uint64_t>();
  } else if (j.is_number_integer() && j.get<std::int64_t>() >= 0) {
    *out = static_cast<std::uint64_t>(j.get<std::int64_t>());
  } else {
    return false;
  }
  return *out <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
}

}  // namespace

const char* dtype_name(DType d) noexcept {
  for (const auto& e : kDTypes)
    if (e.dtype == d) return e.name;
  return "?";
}

std::size_t dtype_size(DType d) noexcept {
  for (const auto& e : kDTypes)
    if (e.dtype == d) return e.size;
  return 0;
}

std::int64_t TensorInfo::numel() const noexcept {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

SafetensorsFile::SafetensorsFile(const std::string& path)
    : file_([&] {
        try {
          return MappedFile(path);
        } catch (const InputError& e) {
          throw ModelError(e.what());
        }
      }()) {
  auto fail = [&](const std::string& what) { throw ModelError(path + ": " + what); };
  const auto bytes = file_.bytes();
  if (bytes.size() < 8) fail("truncated: " + std::to_string(bytes.size()) + " bytes, no header length");
  std::uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | bytes[static_cast<std::size_t>(i)];
  if (header_len > kMaxHeaderBytes) fail("header length " + std::to_string(header_len) + " exceeds the limit");
  if (header_len > bytes.size() - 8)
    fail("header length " + std::to_string(header_len) + " runs past the end of the file (" +
         std::to_string(bytes.size()) + " bytes)");
  const auto data = bytes.subspan(8 + header_len);

  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<std::ptrdiff_t>(header_len));
  } catch (const nlohmann::json::parse_error& e) {
    fail("header is not valid JSON (byte " + std::to_string(e.byte) + ")");
  } catch (const nlohmann::json::out_of_range&) {  // a number past double's range (1e400)
    fail("header is not valid JSON (a number is out of range)");
  }
  if (!header.is_object()) fail("header is not a JSON object");

  struct Range {
    std::uint64_t begin, end;
    const std::string* name;
  };
  std::vector<Range> ranges;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const auto& entry = it.value();
    if (name == "__metadata__") {
      if (!entry.is_object()) fail("__metadata__ is not an object");
      for (auto m = entry.begin(); m != entry.end(); ++m)
        if (m.value().is_string()) metadata_[m.key()] = m.value().get<std::string>();
      continue;
    }
    const std::string where = "tensor '" + name + "'";
    if (!entry.is_object()) fail(where + " is not an object");
    if (!entry.contains("dtype") || !entry["dtype"].is_string()) fail(where + " has no dtype");
    if (!entry.contains("shape") || !entry["shape"].is_array()) fail(where + " has no shape");
    if (!entry.contains("data_offsets") || !entry["data_offsets"].is_array() || entry["data_offsets"].size() != 2)
      fail(where + " has no data_offsets pair");
    TensorInfo info;
    info.name = name;
    const auto dt = entry["dtype"].get<std::string>();
    if (!parse_dtype(dt, &info.dtype)) fail(where + " has unknown dtype '" + dt + "'");
    if (entry["shape"].size() > 8) fail(where + " has more than 8 dimensions");
    std::uint64_t nbytes = dtype_size(info.dtype);
    for (const auto& s : entry["shape"]) {
      std::uint64_t dim = 0;
      if (!as_index(s, &dim)) fail(where + " has an invalid shape entry");
      if (dim != 0 && nbytes > std::numeric_limits<std::uint64_t>::max() / dim) fail(where + " shape overflows");
      nbytes *= dim;
      info.shape.push_back(static_cast<std::int64_t>(dim));
    }
    std::uint64_t begin = 0, end = 0;
    if (!as_index(entry["data_offsets"][0], &begin) || !as_index(entry["data_offsets"][1], &end) || begin > end)
      fail(where + " has invalid data_offsets");
    if (end > data.size())
      fail(where + " data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
           "] lie outside the data section (" + std::to_string(data.size()) + " bytes)");
    if (end - begin != nbytes)
      fail(where + " occupies " + std::to_string(end - begin) + " bytes but its dtype and shape need " +
           std::to_string(nbytes));
    info.data = data.subspan(begin, end - begin);
    auto [pos, inserted] = tensors_.emplace(name, std::move(info));
    ranges.push_back({begin, end, &pos->first});
  }
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.begin < b.begin; });
  for (std::size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].begin < ranges[i - 1].end)
      fail("tensors '" + *ranges[i - 1].name + "' and '" + *ranges[i].name + "' overlap");
  }
}

const TensorInfo* SafetensorsFile::find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

void write_safetensors(const std::string& path, const std::vector<TensorBytes>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  for (const auto& t : tensors) {
    std::uint64_t n = dtype_size(t.dtype);
    for (auto d : t.shape) n *= static_cast<std::uint64_t>(d);
    if (n != t.bytes.size()) throw ModelError(path + ": tensor '" + t.name + "' has the wrong number of bytes");
    header[t.name] = {{"dtype", dtype_name(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + n}}};
    offset += n;
  }
  std::string text = header.dump();
  while (text.size() % 8 != 0) text.push_back(' ');
  const std::string tmp = path + ".tmp";
  {
    // POSIX I/O so that the bytes can be fsynced before the rename makes them visible.
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw ModelError(tmp + ": cannot write: " + std::strerror(errno));
    auto write_all = [&](const void* data, std::size_t n) {
      const auto* p = static_cast<const std::uint8_t*>(data);
      while (n > 0) {
        const ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
          const std::string why = std::strerror(errno);
          ::close(fd);
          ::unlink(tmp.c_str());
          throw ModelError(tmp + ": write failed: " + why);
        }
        p += w;
        n -= static_cast<std::size_t>(w);
      }
    };
    std::uint8_t len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<std::uint8_t>((text.size() >> (8 * i)) & 0xFF);
    write_all(len, 8);
    write_all(text.data(), text.size());
    for (const auto& t : tensors) write_all(t.bytes.data(), t.bytes.size());
    const bool synced = ::fsync(fd) == 0;
    const int sync_errno = errno;
    if (::close(fd) != 0 || !synced) {
      ::unlink(tmp.c_str());
      throw ModelError(tmp + ": fsync failed: " + std::strerror(synced ? errno : sync_errno));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw ModelError(path + ": cannot rename the temporary file");
  // The rename is durable only once the directory entry is.
  std::string dir = path.substr(0, path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/'));
  if (dir.empty()) dir = path.find('/') == 0 ? "/" : ".";
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0 || ::fsync(dfd) != 0) {
    if (dfd >= 0) ::close(dfd);
    throw ModelError(dir + ": cannot fsync the directory: " + std::strerror(errno));
  }
  ::close(dfd);
}

}  // namespace linsweep
