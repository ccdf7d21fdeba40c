// Fuzz target: model.safetensors.index.json (a sharded checkpoint's weight map) through HfWeights
// (engine/model/hf_weights).
#include <filesystem>

#include "engine/model/hf_weights.hpp"
#include "engine/safetensors.hpp"
#include "fuzz_support.hpp"
#include "fuzz_targets.hpp"

namespace linsweep {
namespace {

// Two small shards beside the index, written once, so that an index that names them (as the
// seeds do) gets past the shard files into the tensor lookups.
std::string checkpoint_dir() {
  static const std::string dir = [] {
    const std::string d = fuzz::scratch_dir() + "/checkpoint";
    std::filesystem::create_directories(d);
    auto f32 = [](std::string name, std::vector<std::int64_t> shape, std::size_t n) {
      return TensorBytes{std::move(name), DType::kF32, std::move(shape), std::vector<std::uint8_t>(4 * n, 0)};
    };
    write_safetensors(d + "/model-00001-of-00002.safetensors",
                      {f32("wte.weight", {8, 4}, 32), f32("wpe.weight", {4, 4}, 16)}, {{"format", "pt"}});
    write_safetensors(d + "/model-00002-of-00002.safetensors",
                      {f32("h.0.mlp.c_fc.weight", {4, 16}, 64), f32("ln_f.weight", {4}, 4),
                       TensorBytes{"h.0.attn.bias", DType::kU8, {1, 1, 2, 2}, std::vector<std::uint8_t>(4, 1)}});
    return d;
  }();
  return dir;
}

}  // namespace

int fuzz_safetensors_index(const std::uint8_t* data, std::size_t size) {
  const std::string dir = checkpoint_dir();
  fuzz::write_input("checkpoint/model.safetensors.index.json", fuzz::as_text(data, size));
  fuzz::expect_bad_input([&] {
    const HfWeights ckpt(dir);
    for (const auto& name : ckpt.names())
      if (ckpt.find(name) == nullptr) fuzz::fail("names() lists '" + name + "' but find() does not know it");
    (void)ckpt.total_bytes();
  });
  return 0;
}

}  // namespace linsweep

LINSWEEP_FUZZ_ENTRY(fuzz_safetensors_index)
