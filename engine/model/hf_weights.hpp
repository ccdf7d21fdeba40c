// The weights of an HF model directory: one safetensors file or a sharded index.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/safetensors.hpp"

namespace linsweep {

// Opens `dir/model.safetensors`, or `dir/model.safetensors.index.json` and every shard it
// names. Shard names must be plain file names inside `dir`; every tensor the index maps
// must exist in its shard. A directory with only `pytorch_model.bin` is refused with a
// message on how to convert it (pickle is never read). Throws ModelError naming the file.
// Immutable after construction; the TensorInfo pointers live as long as the HfWeights.
class HfWeights {
 public:
  explicit HfWeights(const std::string& dir);

  // Returns nullptr when absent.
  const TensorInfo* find(const std::string& name) const;
  std::vector<std::string> names() const;
  const std::vector<std::string>& files() const noexcept { return files_; }
  // Total bytes of tensor data across shards.
  std::size_t total_bytes() const noexcept;

 private:
  std::vector<std::unique_ptr<SafetensorsFile>> shards_;
  std::map<std::string, const TensorInfo*> index_;
  std::vector<std::string> files_;
};

}  // namespace linsweep
