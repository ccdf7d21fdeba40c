// Float64 normal-equation sums: one GEMM per batch, one all-reduce per unit.
#include "experiments/numerics/normal_equations.hpp"

#include <ATen/ATen.h>

#include <vector>

#include "engine/comm/communicator.hpp"

namespace linsweep {
namespace {

std::vector<double> host_values(const at::Tensor& t) {
  const at::Tensor c = t.cpu().contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

}  // namespace

NormalEquationSums::NormalEquationSums(std::int64_t d, const at::TensorOptions& f64)
    : d_(d), sx_(at::zeros({d}, f64)), sy_(at::zeros({d}, f64)), xz_(at::zeros({d, 2 * d}, f64)) {}

void NormalEquationSums::add(const at::Tensor& x, const at::Tensor& y) {
  // z = [x y] in float64, [N, 2d]; XᵀX and XᵀY are the two halves of xᵀz.
  const at::Tensor z = at::cat({x.reshape({-1, d_}), y.reshape({-1, d_})}, 1).to(at::kDouble);
  const at::Tensor xd = z.narrow(1, 0, d_), yd = z.narrow(1, d_, d_);
  const at::Tensor col = z.sum(0);  // [2d]
  sx_ += col.narrow(0, 0, d_);
  sy_ += col.narrow(0, d_, d_);
  xz_.addmm_(xd.t(), z);
  yy_ += yd.square().sum().item<double>();
  n_ += z.size(0);
}

void NormalEquationSums::allreduce(Communicator& group) {
  const at::Tensor packed =
      at::cat({sx_, sy_, xz_.flatten(), at::tensor({yy_, static_cast<double>(n_)}, sx_.options())}).cpu().contiguous();
  std::vector<double> buf(packed.data_ptr<double>(), packed.data_ptr<double>() + packed.numel());
  group.allreduce_sum(buf);
  const at::Tensor r = at::tensor(buf, at::kDouble).to(sx_.device());
  sx_ = r.narrow(0, 0, d_).clone();
  sy_ = r.narrow(0, d_, d_).clone();
  xz_ = r.narrow(0, 2 * d_, 2 * d_ * d_).view({d_, 2 * d_}).clone();
  yy_ = buf[static_cast<std::size_t>(2 * d_ + 2 * d_ * d_)];
  n_ = static_cast<std::int64_t>(buf[static_cast<std::size_t>(2 * d_ + 2 * d_ * d_ + 1)]);
}

SurrogateStats NormalEquationSums::centred() const {
  const double n = static_cast<double>(n_);
  const at::Tensor mx = sx_ / n, my = sy_ / n;
  SurrogateStats st;
  st.d = d_;
  st.n = n_;
  st.mean_x = host_values(mx);
  st.mean_y = host_values(my);
  st.xcxc = host_values(xz_.narrow(1, 0, d_) - n * at::outer(mx, mx));
  st.xcyc = host_values(xz_.narrow(1, d_, d_) - n * at::outer(mx, my));
  st.ycyc_trace = yy_ - n * my.square().sum().item<double>();
  return st;
}

}  // namespace linsweep
