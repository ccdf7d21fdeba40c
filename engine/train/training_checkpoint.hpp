// Checkpoints inside a training unit: named tensors plus JSON state, one safetensors file per step.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace linsweep {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

struct TrainingCheckpoint {
  std::int64_t step = 0;  // optimizer steps completed
  nlohmann::json state;   // the unit's own state (phase, rows so far, optimizer step counts, ...)
  NamedTensors tensors;   // on the CPU, in the dtype they were saved in
  std::string path;
};

// Writes dir/step-<step, 12 digits>.safetensors (created with its parents) atomically and
// durably (write_safetensors: temporary file, fsync, rename, directory fsync), then deletes
// all but the newest `keep` checkpoints. Tensors are saved from any device as CPU
// float32/float64/int64, contiguous. Throws ModelError on failure; an older checkpoint is
// only deleted after the new one is durable.
void save_training_checkpoint(const std::string& dir, std::int64_t step, const NamedTensors& tensors,
                              const nlohmann::json& state, int keep = 2);

// The newest checkpoint in `dir`, or nullopt when there is none (or no directory). Leftover
// temporary files are ignored. Throws ModelError naming the file when the newest checkpoint
// cannot be parsed (a committed checkpoint is never half written, so that is damage).
std::optional<TrainingCheckpoint> load_latest_training_checkpoint(const std::string& dir);

// The newest checkpoint in `dir` whose step is at most `at_most`, as load_latest_training_checkpoint.
std::optional<TrainingCheckpoint> load_training_checkpoint(const std::string& dir, std::int64_t at_most);

// The step of the newest checkpoint in `dir` (from its file name), or nullopt when there is none.
std::optional<std::int64_t> latest_training_checkpoint_step(const std::string& dir);

// Deletes `dir` and every checkpoint in it (after the unit commits). Missing is fine.
void remove_training_checkpoints(const std::string& dir);

// Copies `from` into `to` (same shape; any device/dtype), without recording autograd.
// Throws ModelError naming `what` on a shape mismatch.
void copy_into(at::Tensor& to, const at::Tensor& from, const std::string& what);

}  // namespace linsweep
