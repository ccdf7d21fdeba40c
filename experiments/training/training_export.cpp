// Exporting a training unit's weights as an HF directory that `linsweep eval` and HF tools load.
#include "experiments/training/training_export.hpp"

#include <ATen/ATen.h>
#include <c10/util/accumulate.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/atomic_file.hpp"
#include "engine/comm/communicator.hpp"
#include "engine/model/export_hf.hpp"
#include "engine/model/staged_model.hpp"
#include "engine/train/parameter_groups.hpp"
#include "experiments/training/training_run.hpp"

namespace linsweep {
namespace {

using NamedParameters = std::vector<std::pair<std::string, at::Tensor>>;

NamedParameters parameters_of(torch::nn::Module& m) {
  NamedParameters out;
  for (const auto& item : m.named_parameters(/*recurse=*/true)) out.emplace_back(item.key(), item.value());
  return out;
}

// A later stage's parameters to the replica's first rank: the byte count of a JSON header (names
// and shapes), the header, then every tensor's float32 values in one message.
void send_stage(const NamedParameters& mine, Communicator& replica) {
  nlohmann::json header = nlohmann::json::array();
  std::vector<at::Tensor> values;
  for (const auto& [name, t] : mine) {
    header.push_back({{"name", name}, {"shape", t.sizes().vec()}});
    values.push_back(t.detach().to(at::kCPU, at::kFloat).reshape({-1}));
  }
  const std::string text = header.dump();
  const std::uint64_t size = text.size();
  const at::Tensor flat = values.empty() ? at::empty({0}, at::kFloat) : at::cat(values);
  replica.send(&size, sizeof size, 0);
  replica.send(text.data(), text.size(), 0);
  replica.send(flat.data_ptr(), static_cast<std::size_t>(flat.nbytes()), 0);
}

// A stage's parameters split around its layers: those before its first layer's (the
// embeddings), the layers', and those after its last layer's (the final norm, the head).
struct StageParts {
  NamedParameters leading, layers, trailing;
};

StageParts parts_of(NamedParameters stage) {
  StageParts p;
  for (auto& item : stage) {
    if (parameter_layer(item.first) >= 0)
      p.layers.push_back(std::move(item));
    else
      (p.layers.empty() ? p.leading : p.trailing).push_back(std::move(item));
  }
  return p;
}

// A later stage's parameters as send_stage sent them.
NamedParameters receive_stage(Communicator& replica, int stage) {
  std::uint64_t size = 0;
  replica.recv(&size, sizeof size, stage);
  std::string text(size, '\0');
  replica.recv(text.data(), text.size(), stage);
  const nlohmann::json header = nlohmann::json::parse(text);
  std::int64_t total = 0;
  for (const auto& h : header) total += c10::multiply_integers(h["shape"].get<std::vector<std::int64_t>>());
  at::Tensor flat = at::empty({total}, at::kFloat);
  replica.recv(flat.data_ptr(), static_cast<std::size_t>(flat.nbytes()), stage);
  NamedParameters out;
  std::int64_t at_ = 0;
  for (const auto& h : header) {
    const auto shape = h["shape"].get<std::vector<std::int64_t>>();
    const std::int64_t n = c10::multiply_integers(shape);
    out.emplace_back(h["name"].get<std::string>(), flat.slice(0, at_, at_ + n).view(shape));
    at_ += n;
  }
  return out;
}

// The whole model's parameters in the unsplit model's module order: the first stage's
// embeddings, every stage's layers in stage order, the last stage's final norm and head. What
// another stage holds beside its layers (the tied token matrix again, a final norm it never
// applies) is left out.
NamedParameters gather_stages(NamedParameters first, Communicator& replica) {
  StageParts mine = parts_of(std::move(first));
  NamedParameters all = std::move(mine.leading), trailing = std::move(mine.trailing);
  for (auto& item : mine.layers) all.push_back(std::move(item));
  for (int s = 1; s < replica.size(); ++s) {
    StageParts theirs = parts_of(receive_stage(replica, s));
    for (auto& item : theirs.layers) all.push_back(std::move(item));
    trailing = std::move(theirs.trailing);
  }
  for (auto& item : trailing) all.push_back(std::move(item));
  return all;
}

}  // namespace

void export_trained_model(TrainingRun& run, const std::map<std::int64_t, AffineMap>& linear,
                          const std::string& variant) {
  const ExperimentInput& in = run.input();
  const bool writer = in.group == nullptr || in.group->rank() == 0;
  ExportOptions options;
  options.metadata = {{"linsweep.unit", in.unit_id}, {"linsweep.variant", variant}};
  const std::string dir = in.store.trained_model(in.model_name, variant);
  if (in.stages > 1) {
    // The first replica's stages send their parameters to its first rank, which writes.
    auto& staged = dynamic_cast<StagedModel&>(run.model());
    if (in.group->rank() < in.stages) {
      NamedParameters mine = parameters_of(staged.stage_model());
      if (!writer) {
        send_stage(mine, *in.replica);
      } else {
        export_hf_parameters(staged.config(), gather_stages(std::move(mine), *in.replica), linear, in.model_path, dir,
                             options);
        atomic_write_text(StoreLayout::model_owner(dir), in.unit_id + "\n");
      }
    }
  } else if (writer) {
    export_hf_directory(run.model(), linear, in.model_path, dir, options);
    atomic_write_text(StoreLayout::model_owner(dir), in.unit_id + "\n");
  }
  if (in.group != nullptr) in.group->barrier();
}

}  // namespace linsweep
