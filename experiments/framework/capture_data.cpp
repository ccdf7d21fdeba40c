// Shard paths and reading captured rows.
#include "experiments/framework/capture_data.hpp"

#include <ATen/ATen.h>

#include "common/errors.hpp"
#include "storage/activation_shard.hpp"

namespace linsweep {

CapturedRows read_captured(const StoreLayout& store, const UnitResult& capture, const std::string& split,
                           std::int64_t layer) {
  if (capture.kind != "capture") throw InputError("unit " + capture.unit_id + " is not a capture unit");
  auto it = capture.arrays.find("capture/parts");
  if (it == capture.arrays.end() || it->second.values.size() != 1 || it->second.values[0] < 1 ||
      it->second.values[0] > 65536)
    throw StorageError("capture unit " + capture.unit_id + ": missing or malformed capture/parts", ExitCode::kBadInput);
  const auto parts = static_cast<std::int64_t>(it->second.values[0]);
  CapturedRows out;
  std::vector<at::Tensor> xs;
  std::int64_t d = -1;
  bool every_part_has_next = true;
  for (std::int64_t p = 0; p < parts; ++p) {
    const std::string path = store.activation_shard(capture.unit_id, split, layer, p);
    const ActivationReader r(path);
    if (!r.has_delta()) throw StorageError(path + ": shard has no delta dataset", ExitCode::kBadInput);
    if (d >= 0 && r.d() != d) throw StorageError(path + ": width differs from the other parts", ExitCode::kBadInput);
    d = r.d();
    const std::int64_t n = r.rows();
    std::vector<float> x = r.x(0, n);
    xs.push_back(at::from_blob(x.data(), {n, d}, at::kFloat).clone());
    for (float v : r.delta(0, n)) out.delta.push_back(v);
    for (auto v : r.token_ids(0, n)) out.token_ids.push_back(v);
    every_part_has_next = every_part_has_next && r.has_next_token_ids();
    if (every_part_has_next)
      for (auto v : r.next_token_ids(0, n)) out.next_token_ids.push_back(v);
    for (auto v : r.position(0, n)) out.position.push_back(v);
    for (auto v : r.window(0, n)) out.window.push_back(v);
  }
  if (!every_part_has_next) out.next_token_ids.clear();
  out.x = at::cat(xs, 0);
  return out;
}

LabelledRows read_labelled(const ExperimentInput& in, std::int64_t layer, const HoldoutDraw& draw) {
  if (draw.by != "window" && draw.by != "row")
    throw InputError("holdout_by '" + draw.by + "' is neither window nor row");
  LabelledRows out;
  out.rows = read_captured(in.store, dep_of_kind(in.deps, "capture", in.unit_id), "gate", layer);
  out.threshold = gate_label_threshold(out.rows.delta);
  out.labels = gate_labels(out.rows.delta, out.threshold);
  out.split = draw.by == "row" ? holdout_split(out.rows.size(), draw.fraction, draw.seed)
                               : holdout_split_by_window(out.rows.window, draw.fraction, draw.seed);
  return out;
}

at::Tensor rows_of(const at::Tensor& x, const std::vector<std::int64_t>& index) {
  return x.index_select(0, at::tensor(index, at::kLong)).to(at::kDouble);
}

std::vector<double> to_vector(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kCPU, at::kDouble).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

const UnitResult& dep_of_kind(const std::vector<UnitResult>& deps, std::string_view kind, const std::string& unit_id) {
  for (const auto& d : deps)
    if (d.kind == kind) return d;
  throw InputError(unit_id + ": needs a committed " + std::string(kind) + " unit");
}

}  // namespace linsweep
