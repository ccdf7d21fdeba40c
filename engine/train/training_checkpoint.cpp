// Saving and finding training checkpoints (safetensors, never pickle).
#include "engine/train/training_checkpoint.hpp"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>

#include "common/errors.hpp"
#include "engine/safetensors.hpp"
#include "engine/safetensors_tensor.hpp"

namespace linsweep {
namespace {

namespace fs = std::filesystem;
constexpr const char* kStateKey = "linsweep.training_state";

// Checkpoint files of `dir` sorted by step (ascending).
std::vector<std::pair<std::int64_t, std::string>> checkpoints(const std::string& dir) {
  std::vector<std::pair<std::int64_t, std::string>> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    long long step = -1;
    char tail[32] = {};
    if (name.size() == 5 + 12 + 12 && std::sscanf(name.c_str(), "step-%12lld%31s", &step, tail) == 2 &&
        std::strcmp(tail, ".safetensors") == 0 && step >= 0)
      out.emplace_back(step, e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TensorBytes to_bytes(const std::string& name, const at::Tensor& t) {
  at::Tensor c = t.detach().to(at::kCPU).contiguous();
  TensorBytes b;
  b.name = name;
  switch (c.scalar_type()) {
    case at::kDouble:
      b.dtype = DType::kF64;
      break;
    case at::kLong:
      b.dtype = DType::kI64;
      break;
    default:
      c = c.to(at::kFloat), b.dtype = DType::kF32;
      break;
  }
  b.shape = c.sizes().vec();
  const auto* p = static_cast<const std::uint8_t*>(c.data_ptr());
  b.bytes.assign(p, p + c.numel() * static_cast<std::int64_t>(c.element_size()));
  return b;
}

}  // namespace

void save_training_checkpoint(const std::string& dir, std::int64_t step, const NamedTensors& tensors,
                              const nlohmann::json& state, int keep) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw ModelError(dir + ": cannot create the checkpoint directory: " + ec.message());
  std::vector<TensorBytes> bytes;
  bytes.reserve(tensors.size());
  for (const auto& [name, t] : tensors) bytes.push_back(to_bytes(name, t));
  char file[40];
  std::snprintf(file, sizeof(file), "step-%012lld.safetensors", static_cast<long long>(step));
  nlohmann::json meta = state;
  meta["step"] = step;
  write_safetensors(dir + "/" + file, bytes, {{kStateKey, meta.dump()}});
  auto all = checkpoints(dir);
  const auto keep_n = static_cast<std::size_t>(std::max(keep, 1));
  for (std::size_t i = 0; i + keep_n < all.size(); ++i) fs::remove(all[i].second, ec);
}

std::optional<TrainingCheckpoint> load_latest_training_checkpoint(const std::string& dir) {
  return load_training_checkpoint(dir, std::numeric_limits<std::int64_t>::max());
}

std::optional<std::int64_t> latest_training_checkpoint_step(const std::string& dir) {
  const auto all = checkpoints(dir);
  if (all.empty()) return std::nullopt;
  return all.back().first;
}

std::optional<TrainingCheckpoint> load_training_checkpoint(const std::string& dir, std::int64_t at_most) {
  auto all = checkpoints(dir);
  while (!all.empty() && all.back().first > at_most) all.pop_back();
  if (all.empty()) return std::nullopt;
  const std::string& path = all.back().second;
  const SafetensorsFile file(path);
  auto it = file.metadata().find(kStateKey);
  if (it == file.metadata().end()) throw ModelError(path + ": no training state in the metadata");
  TrainingCheckpoint out;
  out.path = path;
  out.state = nlohmann::json::parse(it->second, nullptr, false);
  if (!out.state.is_object() || !out.state.contains("step") || !out.state["step"].is_number_integer())
    throw ModelError(path + ": the training state is not a JSON object with a step");
  out.step = out.state["step"].get<std::int64_t>();
  if (out.step != all.back().first) throw ModelError(path + ": the file name and the recorded step disagree");
  for (const auto& [name, info] : file.tensors())
    out.tensors.emplace_back(
        name, copy_tensor(info, {DType::kF64, DType::kF32, DType::kI64}, path, ", not a checkpoint dtype"));
  return out;
}

void remove_training_checkpoints(const std::string& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
}

void copy_into(at::Tensor& to, const at::Tensor& from, const std::string& what) {
  if (!to.sizes().equals(from.sizes())) throw ModelError(what + ": checkpoint tensor has the wrong shape");
  c10::NoGradGuard no_grad;
  to.copy_(from);
}

}  // namespace linsweep
