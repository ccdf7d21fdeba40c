// Exporting a training unit's weights as an HF directory that `linsweep eval` and HF tools load.
#include "experiments/training_export.hpp"

#include "experiments/training_run.hpp"
#include "workers/comm/communicator.hpp"
#include "workers/model/export_hf.hpp"

namespace linsweep {

std::string trained_model_dir(const std::string& store_dir, const std::string& model, const std::string& variant) {
  return store_dir + "/models/" + model + "." + variant;
}

void export_trained_model(TrainingRun& run, const std::map<std::int64_t, AffineMap>& linear, const std::string& variant) {
  const ExperimentInput& in = run.input();
  if (in.group == nullptr || in.group->rank() == 0) {
    ExportOptions options;
    options.metadata = {{"linsweep.unit", in.unit_id}, {"linsweep.variant", variant}};
    export_hf_directory(run.model(), linear, in.model_path, trained_model_dir(in.store_dir, in.model_name, variant), options);
  }
  if (in.group != nullptr) in.group->barrier();
}

}  // namespace linsweep
