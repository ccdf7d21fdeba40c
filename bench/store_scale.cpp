// Writes a store of UNITS committed units, each with 100 table rows and ARRAY_MB MiB of float64
// arrays (0: none), for bench/query_scale.sh: two such stores differ only in their arrays.
// Usage: bench_store_scale STORE_DIR UNITS ARRAY_MB
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/errors.hpp"
#include "storage/store.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: bench_store_scale STORE_DIR UNITS ARRAY_MB\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int units = std::atoi(argv[2]);
  const long long array_mb = std::atoll(argv[3]);
  try {
    linsweep::Store store = linsweep::Store::open_write(dir);
    for (int u = 0; u < units; ++u) {
      linsweep::UnitResult r;
      r.unit_id = "bench-" + std::to_string(1000000 + u);
      r.kind = "bench";
      r.params = R"({"slot": "bench/)" + std::to_string(u) + R"("})";
      linsweep::Table t{"bench_rows",
                        {{"model", linsweep::ColumnType::kString},
                         {"layer", linsweep::ColumnType::kInt},
                         {"value", linsweep::ColumnType::kFloat}},
                        {}};
      for (int i = 0; i < 100; ++i)
        t.rows.push_back({std::string("model-") + std::to_string(u % 6), std::int64_t{i}, 0.5 * i + u});
      r.tables.push_back(std::move(t));
      if (array_mb > 0) {
        const auto n = static_cast<std::int64_t>(array_mb) * (1 << 20) / 8;
        r.arrays["statistics/xcxc"] = {{n}, std::vector<double>(static_cast<std::size_t>(n), 1.0 + u)};
      }
      store.commit(r);
    }
    store.rebuild_consolidated();
  } catch (const linsweep::Error& e) {
    std::fprintf(stderr, "bench_store_scale: %s\n", e.what());
    return 1;
  }
  return 0;
}
