// Exporting a training unit's weights as an HF directory that `linsweep eval` and HF tools load.
#include "experiments/training/training_export.hpp"

#include "common/atomic_file.hpp"
#include "engine/comm/communicator.hpp"
#include "engine/model/export_hf.hpp"
#include "experiments/training/training_run.hpp"

namespace linsweep {

void export_trained_model(TrainingRun& run, const std::map<std::int64_t, AffineMap>& linear,
                          const std::string& variant) {
  const ExperimentInput& in = run.input();
  if (in.group == nullptr || in.group->rank() == 0) {
    ExportOptions options;
    options.metadata = {{"linsweep.unit", in.unit_id}, {"linsweep.variant", variant}};
    const std::string dir = in.store.trained_model(in.model_name, variant);
    export_hf_directory(run.model(), linear, in.model_path, dir, options);
    atomic_write_text(StoreLayout::model_owner(dir), in.unit_id + "\n");
  }
  if (in.group != nullptr) in.group->barrier();
}

}  // namespace linsweep
