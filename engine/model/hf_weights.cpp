// Single-file and sharded safetensors checkpoints.
#include "engine/model/hf_weights.hpp"

#include <nlohmann/json.hpp>
#include <set>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "engine/model/model_config.hpp"

namespace linsweep {
namespace {

constexpr std::size_t kMaxIndexBytes = 64u << 20;

}  // namespace

HfWeights::HfWeights(const std::string& dir) {
  const std::string single = dir + "/model.safetensors";
  const std::string index_path = dir + "/model.safetensors.index.json";
  if (is_regular_file(single)) {
    shards_.push_back(std::make_unique<SafetensorsFile>(single));
    files_.push_back(single);
    for (const auto& [name, info] : shards_.back()->tensors()) index_[name] = &info;
    return;
  }
  if (!is_regular_file(index_path)) {
    if (is_regular_file(dir + "/pytorch_model.bin") || is_regular_file(dir + "/pytorch_model.bin.index.json"))
      throw ModelError(dir +
                       "/pytorch_model.bin: pickle checkpoints are not read; convert once with "
                       "python: `from transformers import AutoModelForCausalLM; "
                       "AutoModelForCausalLM.from_pretrained(DIR).save_pretrained(DIR, safe_serialization=True)`");
    throw ModelError(dir + ": no model.safetensors or model.safetensors.index.json");
  }
  const nlohmann::json index = read_model_json(index_path, kMaxIndexBytes);
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object())
    throw ModelError(index_path + ": no weight_map object");
  std::map<std::string, std::size_t> shard_of_file;
  for (auto it = index["weight_map"].begin(); it != index["weight_map"].end(); ++it) {
    if (!it.value().is_string()) throw ModelError(index_path + ": weight_map['" + it.key() + "'] is not a string");
    const auto file = it.value().get<std::string>();
    if (file.empty() || file.find('/') != std::string::npos || file == "." || file == "..")
      throw ModelError(index_path + ": shard name '" + file + "' is not a plain file name");
    auto found = shard_of_file.find(file);
    if (found == shard_of_file.end()) {
      shards_.push_back(std::make_unique<SafetensorsFile>(dir + "/" + file));
      files_.push_back(dir + "/" + file);
      found = shard_of_file.emplace(file, shards_.size() - 1).first;
    }
    const TensorInfo* info = shards_[found->second]->find(it.key());
    if (info == nullptr)
      throw ModelError(dir + "/" + file + ": tensor '" + it.key() + "' named by the index is missing");
    index_[it.key()] = info;
  }
}

const TensorInfo* HfWeights::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : it->second;
}

std::vector<std::string> HfWeights::names() const {
  std::vector<std::string> out;
  out.reserve(index_.size());
  for (const auto& kv : index_) out.push_back(kv.first);
  return out;
}

std::size_t HfWeights::total_bytes() const noexcept {
  std::size_t n = 0;
  for (const auto& kv : index_) n += kv.second->data.size();
  return n;
}

}  // namespace linsweep
