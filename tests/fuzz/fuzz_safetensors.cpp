// Fuzz target: a safetensors file (8-byte header length, JSON header, data) through SafetensorsFile.
#include "engine/safetensors.hpp"
#include "fuzz_support.hpp"
#include "fuzz_targets.hpp"

namespace linsweep {
namespace {

volatile unsigned sink;  // keeps the reads of every tensor byte from being optimised away

}  // namespace

int fuzz_safetensors(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write_input("model.safetensors", fuzz::as_text(data, size));
  fuzz::expect_bad_input([&] {
    const SafetensorsFile file(path);
    // What the constructor promises of an accepted file, checked by touching every byte: a span
    // past the mapping would fault here rather than in a model loader.
    for (const auto& [name, info] : file.tensors()) {
      if (info.numel() < 0 || static_cast<std::uint64_t>(info.numel()) * dtype_size(info.dtype) != info.data.size())
        fuzz::fail("tensor '" + name + "': data span does not match dtype and shape");
      unsigned sum = 0;
      for (std::uint8_t b : info.data) sum += b;
      sink = sum;
      if (file.find(name) != &info) fuzz::fail("find('" + name + "') does not return the listed tensor");
    }
  });
  return 0;
}

}  // namespace linsweep

LINSWEEP_FUZZ_ENTRY(fuzz_safetensors)
