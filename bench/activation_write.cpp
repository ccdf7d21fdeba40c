// Benchmark: activation shard write throughput against a raw sequential write of the same
// bytes to the same disk, in one run (target: uncompressed >= 50% of raw).
//
// Usage: bench_activation_write [DIR] [ROWS] [D]   (defaults: build dir, 262144 rows, d = 1024)
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "storage/activation_shard.hpp"

using namespace linsweep;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Writes `bytes` bytes in `block`-sized writes and fsyncs: what the disk gives a plain writer.
double raw_write(const std::string& path, std::size_t bytes, const std::vector<char>& block) {
  const auto t0 = std::chrono::steady_clock::now();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) std::exit(2);
  for (std::size_t done = 0; done < bytes; done += block.size()) {
    const std::size_t n = std::min(block.size(), bytes - done);
    if (::write(fd, block.data(), n) != static_cast<ssize_t>(n)) std::exit(2);
  }
  ::fsync(fd);
  ::close(fd);
  const double s = seconds_since(t0);
  std::remove(path.c_str());
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  const std::int64_t rows = argc > 2 ? std::atoll(argv[2]) : 262144;
  const std::int64_t d = argc > 3 ? std::atoll(argv[3]) : 1024;
  const std::int64_t batch = 4096;  // rows per append, like a forward pass of 8 windows of 512
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(batch * d));
  for (auto& v : x) v = dist(rng);
  std::vector<std::int32_t> ids(batch), pos(batch);
  std::vector<std::int64_t> win(batch);
  for (std::int64_t i = 0; i < batch; ++i)
    ids[i] = static_cast<int>(i % 50257), pos[i] = static_cast<int>(i % 512), win[i] = i / 512;

  std::printf("activation shard write: %lld rows x d=%lld, appends of %lld rows, in %s\n", static_cast<long long>(rows),
              static_cast<long long>(d), static_cast<long long>(batch), dir.c_str());
  std::printf("%-22s %10s %10s %10s %8s\n", "variant", "bytes", "shard MB/s", "raw MB/s", "ratio");
  struct Variant {
    const char* name;
    ActivationDType dtype;
    bool compress;
  };
  for (const Variant& v :
       {Variant{"float16", ActivationDType::kFloat16, false}, Variant{"float32", ActivationDType::kFloat32, false},
        Variant{"float16+shuffle+zlib1", ActivationDType::kFloat16, true},
        Variant{"float32+shuffle+zlib1", ActivationDType::kFloat32, true}}) {
    ActivationOptions opt;
    opt.dtype = v.dtype;
    opt.compress = v.compress;
    opt.chunk_rows = 1024;
    const std::string path = dir + "/bench-shard.h5";
    // The same logical bytes (X at its storage width plus the index columns), written raw.
    const std::size_t elem = v.dtype == ActivationDType::kFloat32 ? 4 : 2;
    const std::size_t bytes = static_cast<std::size_t>(rows) * (static_cast<std::size_t>(d) * elem + 4 + 8 + 4);
    // Alternate shard and raw writes and keep the best of each: disk speed drifts.
    double shard_s = 1e300, raw_s = 1e300;
    for (int rep = 0; rep < (v.compress ? 1 : 3); ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      {
        ActivationWriter w(path, d, opt);
        for (std::int64_t done = 0; done < rows; done += batch) {
          const std::int64_t n = std::min(batch, rows - done);
          w.append({.x = x.data(), .token_ids = ids.data(), .window = win.data(), .position = pos.data(), .rows = n});
        }
        w.close();
      }
      shard_s = std::min(shard_s, seconds_since(t0));
      std::remove(path.c_str());
      raw_s = std::min(raw_s, raw_write(dir + "/bench-raw.bin", bytes, std::vector<char>(1 << 20, 'x')));
    }
    const double mb = static_cast<double>(bytes) / 1e6;
    std::printf("%-22s %10zu %10.1f %10.1f %7.2fx\n", v.name, bytes, mb / shard_s, mb / raw_s, raw_s / shard_s);
  }
  std::printf("target: uncompressed shard >= 0.50x raw\n");
  return 0;
}
