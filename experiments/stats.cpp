// `stats`: one forward pass over the fit split accumulating float64 normal-equation statistics
// for every selected layer at once.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include "common/errors.hpp"
#include "experiments/experiment.hpp"
#include "experiments/unit_data.hpp"
#include "storage/surrogate_store.hpp"
#include "workers/comm/communicator.hpp"
#include "workers/model/language_model.hpp"

namespace linsweep {
namespace {

// Uncentred float64 sums of one layer; centred at the end (n·x̄·x̄ᵀ subtracted).
struct Sums {
  at::Tensor sx, sy, xx, xy;  // [d], [d], [d, d], [d, d] float64
  double yy = 0;              // Σ‖y‖²
  std::int64_t n = 0;
};

UnitResult run_stats(const ExperimentInput& in) {
  LanguageModel& model = *in.model;
  const auto layers = in.params["layers"].get<std::vector<std::int64_t>>();
  const std::int64_t context = in.params["context"].get<std::int64_t>();
  const Windows w = my_shard(in, unit_windows(in, in.params["split"], context));
  const std::int64_t d = model.config().d_model;
  const at::Device device = model.parameters().front().device();
  const auto f64 = at::TensorOptions().dtype(at::kDouble).device(device);

  HookReset reset(model);
  std::vector<Sums> sums(layers.size());
  for (std::size_t i = 0; i < layers.size(); ++i) {
    Sums& s = sums[i];
    s.sx = at::zeros({d}, f64), s.sy = at::zeros({d}, f64), s.xx = at::zeros({d, d}, f64), s.xy = at::zeros({d, d}, f64);
    model.hook(layers[i]).set_capture([&s, d](const at::Tensor& x, const at::Tensor& y) {
      const at::Tensor xd = x.reshape({-1, d}).to(at::kDouble), yd = y.reshape({-1, d}).to(at::kDouble);  // [N, d]
      s.sx += xd.sum(0);
      s.sy += yd.sum(0);
      s.xx.addmm_(xd.t(), xd);
      s.xy.addmm_(xd.t(), yd);
      s.yy += yd.square().sum().item<double>();
      s.n += xd.size(0);
    });
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
  if (in.group != nullptr) {  // sum every rank's partial sums, one message per layer
    for (Sums& s : sums) {
      const at::Tensor packed = at::cat({s.sx, s.sy, s.xx.flatten(), s.xy.flatten(),
                                         at::tensor({s.yy, static_cast<double>(s.n)}, f64)})
                                    .cpu()
                                    .contiguous();
      std::vector<double> buf(packed.data_ptr<double>(), packed.data_ptr<double>() + packed.numel());
      in.group->allreduce_sum(buf);
      const at::Tensor r = at::tensor(buf, at::kDouble).to(device);
      s.sx = r.narrow(0, 0, d);
      s.sy = r.narrow(0, d, d);
      s.xx = r.narrow(0, 2 * d, d * d).view({d, d});
      s.xy = r.narrow(0, 2 * d + d * d, d * d).view({d, d});
      s.yy = buf[static_cast<std::size_t>(2 * d + 2 * d * d)];
      s.n = static_cast<std::int64_t>(buf[static_cast<std::size_t>(2 * d + 2 * d * d + 1)]);
    }
  }
  UnitResult out;
  out.unit_id = in.unit_id;
  out.kind = in.kind;
  out.params = in.provenance;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const Sums& s = sums[i];
    const double n = static_cast<double>(s.n);
    const at::Tensor mx = s.sx / n, my = s.sy / n;
    const at::Tensor xcxc = (s.xx - n * at::outer(mx, mx)).cpu().contiguous();
    const at::Tensor xcyc = (s.xy - n * at::outer(mx, my)).cpu().contiguous();
    StoredSurrogate st;
    st.stats.d = d;
    st.stats.n = s.n;
    auto vec = [](const at::Tensor& t) {
      const at::Tensor c = t.cpu().contiguous();
      return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
    };
    st.stats.mean_x = vec(mx);
    st.stats.mean_y = vec(my);
    st.stats.xcxc = vec(xcxc);
    st.stats.xcyc = vec(xcyc);
    st.stats.ycyc_trace = s.yy - n * my.square().sum().item<double>();
    put_surrogate(out, surrogate_key(in.model_name, in.corpus_name, layers[i]), st);
  }
  return out;
}

const ExperimentRegistrar kStats{"stats", run_stats, /*needs_model=*/true};

}  // namespace
}  // namespace linsweep
