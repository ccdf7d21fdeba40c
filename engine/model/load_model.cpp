// Parameter-by-parameter copy from a safetensors checkpoint into the architecture's module,
// already on its device.
#include "engine/model/load_model.hpp"

#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <torch/utils.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "common/errors.hpp"
#include "common/mapped_file.hpp"
#include "engine/model/architecture_registry.hpp"
#include "engine/model/hf_weights.hpp"
#include "engine/model/model_stages.hpp"
#include "engine/model/shape_text.hpp"
#include "engine/runtime.hpp"
#include "engine/safetensors_tensor.hpp"

namespace linsweep {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The layer a checkpoint tensor belongs to ("model.layers.17.mlp…" → 17), or −1 for the
// embedding, the head and the final norm.
std::int64_t layer_of(const std::string& name, const Architecture& arch) {
  std::string rest = name;
  for (const auto& prefix : arch.checkpoint_prefixes)
    if (rest.rfind(prefix, 0) == 0) rest = rest.substr(prefix.size());
  const std::string& layers = arch.mlp.layer_prefix;
  if (rest.rfind(layers, 0) != 0) return -1;
  const auto dot = rest.find('.', layers.size());
  const std::string index =
      rest.substr(layers.size(), dot == std::string::npos ? std::string::npos : dot - layers.size());
  if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos || index.size() > 9) return -1;
  return std::stoll(index);
}

}  // namespace

at::ScalarType parse_compute_dtype(const std::string& name) {
  check_dtype_name(name);
  if (name == "bfloat16") return at::kBFloat16;
  if (name == "float16") return at::kHalf;
  return at::kFloat;
}

std::shared_ptr<LanguageModel> build_model(const ModelConfig& config) {
  return ArchitectureRegistry::instance().build(config, "model config");
}

LoadedModel load_model(const std::string& dir, const ModelOptions& options) {
  LoadedModel out;
  out.dir = dir;
  const ModelConfig config = read_model_config(dir);
  const Architecture& arch = ArchitectureRegistry::instance().get(config.architecture, dir + "/config.json");
  const at::ScalarType dtype = parse_compute_dtype(options.dtype);
  const std::string device = resolve_device(options.device);
  if (dtype == at::kHalf && device == "cpu")
    throw InputError(
        "dtype float16 needs a CUDA device (LibTorch's CPU kernels lack half-precision LayerNorm); "
        "use bfloat16 or float32 on CPU");
  if (dtype == at::kBFloat16 && device == "cpu") configure_cpu_bfloat16();
  HfWeights ckpt(dir);
  const std::string where = ckpt.files().size() == 1 ? ckpt.files()[0] : dir + "/model.safetensors.index.json";

  // Refuse before allocating when config.json asks for more parameters than the files hold
  // (a hostile or mistaken config must not allocate terabytes).
  std::int64_t stored = 0;
  for (const auto& name : ckpt.names()) {
    const TensorInfo* t = ckpt.find(name);
    if (t->dtype == DType::kF32 || t->dtype == DType::kF16 || t->dtype == DType::kBF16) stored += t->numel();
  }
  const std::int64_t wanted = arch.count_parameters(config);
  if (wanted > stored)
    throw ModelError(dir + "/config.json: describes " + std::to_string(wanted) + " parameters but " + where +
                     " holds only " + std::to_string(stored) + " weights");

  torch::NoGradGuard no_grad;
  ModelConfig built = config;
  built.built_dtype = options.dtype;
  built.built_to_load = true;  // every parameter is copied from the checkpoint below
  if (options.stages > 1) {
    const StageLayers mine = split_stages(config, options.stages).at(static_cast<std::size_t>(options.stage));
    built.built_first = mine.first, built.built_end = mine.end;
  }
  auto model = ArchitectureRegistry::instance().build(built, dir + "/config.json");
  // The module goes to its device and dtype before the weights arrive: each tensor of the file
  // then travels once, in the dtype it is stored in, straight into its parameter (converted
  // there), so a model for a GPU, or in bfloat16, is never held whole in float32 on the host.
  // On a GPU the copies leave from pinned memory without waiting, so reading the next tensor
  // overlaps them; the stream orders them before any use of the model.
  model->to(at::Device(device), dtype);
  const bool cuda = at::Device(device).is_cuda();
  std::set<std::string> used;
  std::set<std::string> stored_dtypes;
  for (auto& item : model->named_parameters(/*recurse=*/true)) {
    const std::string& name = item.key();
    const TensorInfo* info = nullptr;
    std::string key;
    for (const auto& prefix : arch.checkpoint_prefixes) {
      if ((info = ckpt.find(prefix + name)) != nullptr) {
        key = prefix + name;
        break;
      }
    }
    if (info == nullptr && (info = ckpt.find(name)) != nullptr) key = name;
    if (info == nullptr) throw ModelError(where + ": tensor '" + name + "' is missing");
    at::Tensor param = item.value();
    if (at::IntArrayRef(info->shape) != param.sizes())
      throw ModelError(where + ": tensor '" + key + "' has shape " + shape_text(info->shape) +
                       " but config.json implies " + shape_text(param.sizes()));
    param.copy_(copy_tensor(*info, {DType::kF32, DType::kF16, DType::kBF16}, where,
                            "; weights must be F32, F16 or BF16", /*pinned=*/cuda),
                /*non_blocking=*/cuda);
    drop_resident_pages(info->data);  // the copy is what stays: peak memory holds one tensor of the file
    stored_dtypes.insert(dtype_name(info->dtype));
    used.insert(key);
  }
  std::int64_t other_stages = 0;  // parameters of the layers other stages hold
  for (const auto& name : ckpt.names()) {
    if (used.count(name) != 0) continue;
    const std::int64_t layer = layer_of(name, arch);
    bool ignorable = false;
    for (const auto& suffix : arch.ignored_suffixes) ignorable = ignorable || ends_with(name, suffix);
    // A tensor of no layer that this stage left out is another stage's embedding or head.
    const bool elsewhere = layer >= 0 ? !built.builds_layer(layer) : !built.builds_input() || !built.builds_output();
    if (elsewhere) {
      // A stored head is ignorable as a tied model's copy of the embedding; an untied one is a
      // parameter of the whole model.
      const bool own_head =
          !config.tied_head && std::find(arch.roles.head.begin(), arch.roles.head.end(), name) != arch.roles.head.end();
      if (!ignorable || own_head) other_stages += ckpt.find(name)->numel();
      continue;
    }
    if (!ignorable)
      throw ModelError(where + ": unexpected tensor '" + name + "' for a " + config.architecture +
                       " model with this config.json (wrong architecture or layer count?)");
  }
  model->eval();
  out.model = model;
  out.device = device;
  out.dtype = dtype;
  out.parameter_count = other_stages;
  for (const auto& p : model->parameters()) out.parameter_count += p.numel();
  for (const auto& d : stored_dtypes) out.checkpoint_dtypes += (out.checkpoint_dtypes.empty() ? "" : ",") + d;
  return out;
}

}  // namespace linsweep
