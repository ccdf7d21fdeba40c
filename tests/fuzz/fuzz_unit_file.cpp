// Fuzz target: a store's unit file (HDF5) through read_unit_file and read_unit_header.
#include "fuzz_support.hpp"
#include "fuzz_targets.hpp"
#include "storage/unit_file.hpp"

namespace linsweep {

int fuzz_unit_file(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write_input("unit.h5", fuzz::as_text(data, size));
  fuzz::expect_bad_input([&] { (void)read_unit_header(path); });
  fuzz::expect_bad_input([&] {
    const UnitResult u = read_unit_file(path);
    for (const auto& [name, a] : u.arrays) {
      std::uint64_t n = 1;
      for (auto d : a.shape) n *= static_cast<std::uint64_t>(d);
      if (n != a.values.size())
        fuzz::fail("array '" + name + "' has " + std::to_string(a.values.size()) + " values for its shape");
    }
    // Rows read back must fit their schema: what the store's tables and queries assume.
    for (const auto& t : u.tables) {
      try {
        t.validate();
      } catch (const Error& e) {
        fuzz::fail(std::string("accepted a table that fails its schema: ") + e.what());
      }
    }
  });
  return 0;
}

}  // namespace linsweep

LINSWEEP_FUZZ_ENTRY(fuzz_unit_file)
