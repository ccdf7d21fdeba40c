// HF directory export: parameters to safetensors, affine maps folded into MLP weights, atomic install.
#include "engine/model/export_hf.hpp"

#include <ATen/ATen.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <torch/utils.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "engine/model/activation.hpp"
#include "engine/model/architecture_registry.hpp"
#include "engine/model/model_config.hpp"
#include "engine/model/shape_text.hpp"
#include "engine/safetensors.hpp"

namespace linsweep {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxTokenizerBytes = 512u << 20;  // tokenizer.json of large vocabularies stays far below

// The layer's MLP tensor names by the architecture's record.
struct LayerMlp {
  std::string up, down, gate;  // name stems: "<stem>.weight", "<stem>.bias"; gate empty when ungated
  bool in_out;
};

LayerMlp layer_mlp(const ModelConfig& c, std::int64_t layer) {
  const MlpLayout& m = ArchitectureRegistry::instance().get(c.architecture, "export").mlp;
  const std::string p = m.layer_prefix + std::to_string(layer);
  return {p + m.up, p + m.down, m.gate.empty() ? "" : p + m.gate, m.in_out};
}

void check_maps(const ModelConfig& c, const std::map<std::int64_t, AffineMap>& linear) {
  if (linear.empty()) return;
  const std::int64_t d = c.d_model;
  if (const std::string problem = affine_export_problem(c); !problem.empty()) throw ModelError("export: " + problem);
  for (const auto& [layer, map] : linear) {
    const std::string what = "export: affine map for layer " + std::to_string(layer);
    if (layer < 0 || layer >= c.n_layers)
      throw ModelError(what + ": the model has layers 0.." + std::to_string(c.n_layers - 1));
    if (!map.weight.defined() || !map.bias.defined() || map.weight.dim() != 2 || map.bias.dim() != 1 ||
        map.weight.size(0) != d || map.weight.size(1) != d || map.bias.size(0) != d)
      throw ModelError(what + ": weight must be [" + std::to_string(d) + ", " + std::to_string(d) + "] and bias [" +
                       std::to_string(d) + "]");
    // A NaN would not fail anything later: it would silently ship a broken checkpoint.
    if (!at::isfinite(map.weight).all().item<bool>() || !at::isfinite(map.bias).all().item<bool>())
      throw ModelError(what + ": weight or bias is not finite");
  }
}

// config.json is copied, not regenerated, so it must be the config the model was built from.
void check_source_config(const ModelConfig& model, const std::string& source_dir) {
  const ModelConfig src = read_model_config(source_dir);
  const std::string where = source_dir + "/config.json";
  auto same = [&](const char* field, auto a, auto b) {
    if (a != b) throw ModelError("export: " + where + " does not describe the model (" + field + " differs)");
  };
  same("architecture", src.architecture, model.architecture);
  same("vocab_size", src.vocab_size, model.vocab_size);
  same("d_model", src.d_model, model.d_model);
  same("n_layers", src.n_layers, model.n_layers);
  same("n_heads", src.n_heads, model.n_heads);
  same("d_ff", src.d_ff, model.d_ff);
  same("max_positions", src.max_positions, model.max_positions);
  same("tied_head", src.tied_head, model.tied_head);
  same("attention_bias", src.attention_bias, model.attention_bias);
  same("activation", src.activation, model.activation);
  same("parallel_residual", src.parallel_residual, model.parallel_residual);
  same("n_kv_heads", src.kv_heads(), model.kv_heads());
  same("head_dim", src.head_dim(), model.head_dim());
  same("gated_mlp", src.gated_mlp, model.gated_mlp);
  same("mlp_bias", src.mlp_bias, model.mlp_bias);
  same("norm", src.norm, model.norm);
}

TensorBytes to_bytes(const std::string& name, const at::Tensor& t) {
  const at::Tensor c = t.detach().to(at::kCPU, at::kFloat).contiguous();
  const auto* p = static_cast<const std::uint8_t*>(c.data_ptr());
  return {name, DType::kF32, c.sizes().vec(), {p, p + c.numel() * static_cast<std::int64_t>(sizeof(float))}};
}

// The MLP tensors that make the layer compute x·W + b, in the architecture's orientation.
// Ungated: up maps x to [x, −x, 0…] and down takes [W; −W; 0] with bias b, since act(z) − act(−z)
// = z for GELU (exact and tanh) and SiLU. Gated: the gate's weight is 0 and its bias 1, so every
// unit is scaled by the constant a = act(1) ≠ 0; up computes (x·W)/a in the first d units and
// down adds them up with bias b.
std::map<std::string, at::Tensor> folded_mlp(const LayerMlp& m, const AffineMap& map, const ModelConfig& c) {
  const std::int64_t d = c.d_model, d_ff = c.d_ff;
  const at::Tensor w = map.weight.detach().to(at::kCPU, at::kFloat);
  const at::Tensor b = map.bias.detach().to(at::kCPU, at::kFloat);
  const at::Tensor eye = at::eye(d, at::kFloat);
  at::Tensor up = at::zeros({d, d_ff}, at::kFloat);    // [in, out]
  at::Tensor down = at::zeros({d_ff, d}, at::kFloat);  // [in, out]
  std::map<std::string, at::Tensor> out;
  if (m.gate.empty()) {
    up.narrow(1, 0, d).copy_(eye);
    up.narrow(1, d, d).copy_(-eye);
    down.narrow(0, 0, d).copy_(w);
    down.narrow(0, d, d).copy_(-w);
  } else {
    const double a = activate(at::ones({1}, at::kDouble), c.activation).item<double>();
    up.narrow(1, 0, d).copy_(w / a);
    down.narrow(0, 0, d).copy_(eye);
    out[m.gate + ".weight"] = at::zeros({d_ff, d}, at::kFloat);
    out[m.gate + ".bias"] = at::ones({d_ff}, at::kFloat);
  }
  if (!m.in_out) {
    up = up.t().contiguous();
    down = down.t().contiguous();
  }
  out[m.up + ".weight"] = up;
  out[m.up + ".bias"] = at::zeros({d_ff}, at::kFloat);
  out[m.down + ".weight"] = down;
  out[m.down + ".bias"] = b.clone();
  return out;
}

std::string strip_trailing_slashes(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

[[noreturn]] void throw_errno(const std::string& what, int e) { throw ModelError(what + ": " + std::strerror(e)); }

void sync_or_throw(const std::string& path) {
  if (const int e = fsync_path(path); e != 0) throw_errno(path + ": fsync failed", e);
}

// A new, uniquely named directory `parent/.<name>.export-<pid>-<random>`, created with mkdir
// (so the usual umask applies, unlike mkdtemp's 0700) and never an existing one.
std::string make_temp_dir(const std::string& parent, const std::string& name) {
  std::random_device rd;
  for (int attempt = 0; attempt < 64; ++attempt) {
    char tag[32];
    std::snprintf(tag, sizeof tag, "%ld-%08x", static_cast<long>(::getpid()), static_cast<unsigned>(rd()));
    const std::string path = parent + "/." + name + ".export-" + tag;
    if (::mkdir(path.c_str(), 0777) == 0) return path;
    if (errno != EEXIST) throw_errno(path + ": cannot create", errno);
  }
  throw ModelError(parent + ": cannot create a unique temporary export directory");
}

void write_bytes_synced(const std::string& path, const std::string& bytes) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw_errno(path + ": cannot write", errno);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) throw ModelError(path + ": write failed");
  }
  sync_or_throw(path);
}

std::string read_or_throw(const std::string& path, std::size_t max_bytes) {
  try {
    return read_file(path, max_bytes);
  } catch (const InputError& e) {
    throw ModelError(std::string("export: ") + e.what());
  }
}

// Moves the finished `tmp` to `out`. An existing `out` is swapped with `tmp` in one
// renameat2(RENAME_EXCHANGE), so `out` is always either the old or the new directory; where the
// file system lacks it, two renames (old aside, new in) with the old one restored on failure.
// Returns the path now holding the old directory ("" when there was none), for deletion.
std::string install(const std::string& tmp, const std::string& out, bool exists) {
  if (!exists) {
    if (std::rename(tmp.c_str(), out.c_str()) != 0) throw_errno(out + ": cannot rename " + tmp + " into place", errno);
    return "";
  }
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, out.c_str(), RENAME_EXCHANGE) == 0) return tmp;
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) throw_errno(out + ": cannot exchange with " + tmp, errno);
  const std::string old = tmp + ".old";
  if (std::rename(out.c_str(), old.c_str()) != 0) throw_errno(out + ": cannot move aside to " + old, errno);
  if (std::rename(tmp.c_str(), out.c_str()) != 0) {
    const int e = errno;
    std::rename(old.c_str(), out.c_str());  // best effort: put the old directory back
    throw_errno(out + ": cannot rename " + tmp + " into place", e);
  }
  return old;
}

}  // namespace

void export_hf_directory(LanguageModel& model, const std::map<std::int64_t, AffineMap>& linear,
                         const std::string& source_dir, const std::string& out_dir, const ExportOptions& options) {
  std::vector<std::pair<std::string, at::Tensor>> parameters;
  for (const auto& item : model.named_parameters(/*recurse=*/true)) parameters.emplace_back(item.key(), item.value());
  export_hf_parameters(model.config(), parameters, linear, source_dir, out_dir, options);
}

void export_hf_parameters(const ModelConfig& config, const std::vector<std::pair<std::string, at::Tensor>>& parameters,
                          const std::map<std::int64_t, AffineMap>& linear, const std::string& source_dir,
                          const std::string& out_dir, const ExportOptions& options) {
  layer_mlp(config, 0);  // unknown architectures are refused even without maps
  check_maps(config, linear);

  std::map<std::string, std::string> metadata = options.metadata;
  if (auto it = metadata.find("format"); it != metadata.end() && it->second != "pt")
    throw ModelError("export: metadata 'format' must be 'pt', not '" + it->second + "'");
  metadata["format"] = "pt";

  const std::string out = strip_trailing_slashes(out_dir);
  const fs::path out_path(out);
  const std::string name = out_path.filename().string();
  if (out.empty() || name.empty() || name == "." || name == "..")
    throw ModelError("export: '" + out_dir + "' is not a usable output directory");
  const std::string parent = out_path.has_parent_path() ? out_path.parent_path().string() : ".";
  struct stat st {};
  bool exists = false;
  if (::lstat(out.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw ModelError(out + ": exists and is not a directory; not replaced");
    exists = true;
  } else if (errno != ENOENT) {
    throw_errno(out + ": cannot stat", errno);
  }

  check_source_config(config, source_dir);
  const std::string config_bytes = read_or_throw(source_dir + "/config.json", kMaxConfigBytes);

  // Every parameter in module order; the folded layers' MLP tensors are replaced, with their
  // names and shapes checked against the module's own.
  std::map<std::string, at::Tensor> replaced;
  for (const auto& [layer, map] : linear)
    for (auto& kv : folded_mlp(layer_mlp(config, layer), map, config)) replaced.insert(kv);
  std::vector<TensorBytes> tensors;
  std::size_t used = 0;
  {
    torch::NoGradGuard no_grad;
    for (const auto& [name, value] : parameters) {
      const auto it = replaced.find(name);
      if (it == replaced.end()) {
        tensors.push_back(to_bytes(name, value));
        continue;
      }
      if (it->second.sizes() != value.sizes())
        throw ModelError("export: folded tensor '" + name + "' has shape " + shape_text(it->second.sizes()) +
                         " but the model's is " + shape_text(value.sizes()));
      tensors.push_back(to_bytes(name, it->second));
      ++used;
    }
  }
  if (used != replaced.size())
    throw ModelError("export: the model lacks some MLP parameters of its architecture's layout");

  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw ModelError(parent + ": cannot create: " + ec.message());
  const std::string tmp = make_temp_dir(parent, name);
  std::string old;
  try {
    write_bytes_synced(tmp + "/config.json", config_bytes);
    write_safetensors(tmp + "/model.safetensors", tensors, metadata);
    tensors.clear();
    sync_or_throw(tmp + "/model.safetensors");
    for (const char* file : kExportedTokenizerFiles) {
      const std::string src = source_dir + "/" + file;
      if (is_regular_file(src)) write_bytes_synced(tmp + "/" + file, read_or_throw(src, kMaxTokenizerBytes));
    }
    sync_or_throw(tmp);  // the entries of the new directory, before it becomes visible
    old = install(tmp, out, exists);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  // The new directory is in place; a replaced one that cannot be deleted is only clutter, so
  // it is left behind rather than reported as a failed export. One parent fsync covers both.
  if (!old.empty()) fs::remove_all(old, ec);
  sync_or_throw(parent);
}

}  // namespace linsweep
