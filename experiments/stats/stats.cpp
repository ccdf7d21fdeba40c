// `stats`: one forward pass over the fit split accumulating float64 normal-equation statistics
// for every selected layer at once.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include "common/errors.hpp"
#include "engine/comm/communicator.hpp"
#include "engine/model/language_model.hpp"
#include "experiments/fit/fit_units.hpp"
#include "experiments/framework/experiment.hpp"
#include "experiments/framework/unit_data.hpp"
#include "experiments/numerics/normal_equations.hpp"
#include "storage/surrogate_store.hpp"

namespace linsweep {
namespace {

UnitResult run_stats(const ExperimentInput& in) {
  LanguageModel& model = *in.model;
  const auto p = in.params.get<StatsUnitParams>();
  const std::vector<std::int64_t>& layers = p.layers;
  const std::int64_t context = p.basics.context;
  const Windows w = my_shard(in, unit_windows(in, p.basics.split, context));
  const std::int64_t d = model.config().d_model;
  const at::Device device = model.parameters().front().device();
  const auto f64 = at::TensorOptions().dtype(at::kDouble).device(device);

  HookReset reset(model);
  std::vector<NormalEquationSums> sums;
  sums.reserve(layers.size());  // the hooks hold references
  for (std::size_t i = 0; i < layers.size(); ++i) {
    NormalEquationSums& s = sums.emplace_back(d, f64);
    model.hook(layers[i]).set_capture([&s](const at::Tensor& x, const at::Tensor& y) { s.add(x, y); });
  }
  {
    c10::InferenceMode guard;
    for (std::int64_t first = 0; first < w.count; first += in.batch) {
      const std::int64_t n = std::min(in.batch, w.count - first);
      auto ids = at::from_blob(const_cast<TokenId*>(w.ids.data() + first * context), {n, context}, at::kInt)
                     .to(device, at::kLong);
      model.hidden_states(ids);  // the hooks see every position; no head needed
    }
  }
  if (in.group != nullptr)  // sum every rank's partial sums, one message per layer
    for (NormalEquationSums& s : sums) s.allreduce(*in.group);
  UnitResult out = unit_result(in);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    StoredSurrogate st;
    st.stats = sums[i].centred();
    put_surrogate(out, surrogate_key(in.model_name, in.corpus_name, layers[i]), st);
  }
  return out;
}

// The forward pass, every layer's normal equations, the centred copy of one of them, and a
// batch's rows in float64.
MemoryNeed stats_memory(const MemoryQuery& q) {
  MemoryNeed n = forward_need(q);
  const auto layers = static_cast<double>(q.params.at("layers").size());
  const double rows = static_cast<double>(q.batch * q.context);
  n.statistics = (layers + 1) * normal_equation_bytes(q.model) + rows * static_cast<double>(q.model.d_model) * 16;
  return n;
}

const UnitKindRegistrar kStats{"stats", run_stats, /*needs_model=*/true, stats_memory, /*runs_split=*/true};

}  // namespace
}  // namespace linsweep
