// Linear gate training (Gate::train: standardise, then Newton logistic regression) on data
// written by bench/gate_training.py, timed for bench/gate_training.sh. Writes the solution
// (standardised space: weight then bias) as float64 .npy for the scikit-learn comparison and
// the timings as JSON.
// Usage: bench_gate_training X.npy Y.npy COEF_OUT.npy JSON_OUT [repeats] [threads]
//   X.npy float32 [n, d] C-order, Y.npy uint8 [n]; repeats default 3, threads default 2.
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/runtime.hpp"
#include "experiments/numerics/gate_model.hpp"
#include "experiments/numerics/logistic_regression.hpp"
#include "experiments/numerics/pca.hpp"
#include "storage/unit_file.hpp"

namespace {

struct Npy {
  std::string descr;
  std::vector<std::int64_t> shape;
  std::vector<char> data;
};

// Minimal .npy reader (versions 1–3, C order); validates the data size against the shape.
Npy read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path + ": cannot open");
  char magic[8];
  if (!f.read(magic, 8) || std::string(magic, 6) != "\x93NUMPY" || magic[6] < 1 || magic[6] > 3)
    throw std::runtime_error(path + ": not a .npy file");
  std::uint32_t hlen = 0;
  unsigned char b[4] = {0, 0, 0, 0};
  if (!f.read(reinterpret_cast<char*>(b), magic[6] == 1 ? 2 : 4)) throw std::runtime_error(path + ": truncated header");
  hlen = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<std::uint32_t>(b[3]) << 24);
  std::string header(hlen, '\0');
  if (hlen > (1u << 20) || !f.read(header.data(), hlen)) throw std::runtime_error(path + ": bad header");
  Npy out;
  auto value = [&](const std::string& key) {
    const auto k = header.find("'" + key + "'");
    if (k == std::string::npos) throw std::runtime_error(path + ": header lacks " + key);
    return header.substr(header.find(':', k) + 1);
  };
  const std::string descr = value("descr");
  out.descr = descr.substr(descr.find('\'') + 1, descr.find('\'', descr.find('\'') + 1) - descr.find('\'') - 1);
  const std::string order = value("fortran_order");
  if (order.compare(order.find_first_not_of(' '), 5, "False") != 0)
    throw std::runtime_error(path + ": fortran_order arrays are not supported");
  std::string shape = value("shape");
  shape = shape.substr(shape.find('(') + 1, shape.find(')') - shape.find('(') - 1);
  std::stringstream ss(shape);
  std::string item;
  std::int64_t count = 1;
  while (std::getline(ss, item, ','))
    if (item.find_first_not_of(' ') != std::string::npos)
      out.shape.push_back(std::stoll(item)), count *= out.shape.back();
  const std::int64_t item_size = out.descr == "<f4" ? 4 : out.descr == "|u1" ? 1 : 0;
  if (item_size == 0) throw std::runtime_error(path + ": dtype " + out.descr + " (expected <f4 or |u1)");
  const auto start = f.tellg();
  f.seekg(0, std::ios::end);
  if (static_cast<std::int64_t>(f.tellg() - start) != count * item_size)
    throw std::runtime_error(path + ": data size does not match shape");
  f.seekg(start);
  out.data.resize(static_cast<std::size_t>(count * item_size));
  f.read(out.data.data(), static_cast<std::streamsize>(out.data.size()));
  return out;
}

void write_npy_f8(const std::string& path, const std::vector<double>& v) {
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (" + std::to_string(v.size()) + ",), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header.push_back('\n');
  std::ofstream f(path, std::ios::binary);
  const std::uint16_t hlen = static_cast<std::uint16_t>(header.size());
  f.write("\x93NUMPY\x01\x00", 8);
  f.put(static_cast<char>(hlen & 0xff)).put(static_cast<char>(hlen >> 8));
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(double)));
  if (!f) throw std::runtime_error(path + ": write failed");
}

template <class F>
double seconds(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s X.npy Y.npy COEF_OUT.npy JSON_OUT [repeats] [threads]\n", argv[0]);
    return 2;
  }
  const int repeats = argc > 5 ? std::atoi(argv[5]) : 3;
  const int threads = argc > 6 ? std::atoi(argv[6]) : 2;
  linsweep::configure_threads(threads);  // torch's pool and OpenBLAS's
  Npy xn = read_npy(argv[1]), yn = read_npy(argv[2]);
  if (xn.descr != "<f4" || xn.shape.size() != 2 || yn.descr != "|u1" || yn.shape.size() != 1 ||
      yn.shape[0] != xn.shape[0]) {
    std::fprintf(stderr, "bench_gate_training: X must be float32 [n, d] and Y uint8 [n]\n");
    return 2;
  }
  const std::int64_t n = xn.shape[0], d = xn.shape[1];
  const at::Tensor x = at::from_blob(xn.data.data(), {n, d}, at::kFloat);
  const at::Tensor y = at::from_blob(yn.data.data(), {n}, at::kByte);

  const auto variant = linsweep::GateVariant::parse("linear");
  std::vector<double> train_s;
  linsweep::Gate gate;
  for (int r = 0; r < repeats; ++r)
    train_s.push_back(seconds([&] { gate = linsweep::Gate::train(variant, x, y, linsweep::GateTraining{}); }));
  std::vector<double> sorted = train_s;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];

  // Breakdown (not part of the headline time): the scaler's moments, then fit_logistic alone,
  // which also gives the iteration count and final gradient (Gate keeps only the solution).
  linsweep::Standardizer scaler;
  const double standardise_s = seconds([&] { scaler = linsweep::fit_standardizer(x); });
  linsweep::LogisticModel m;
  const double fit_s =
      seconds([&] { m = linsweep::fit_logistic(x, scaler, y.to(at::kDouble), linsweep::GateTraining{}.logistic); });

  linsweep::UnitResult unit;
  gate.save(unit, "gate");
  std::vector<double> coef = unit.arrays.at("gate/logistic/weight").values;
  coef.push_back(unit.arrays.at("gate/logistic/bias").values.at(0));
  write_npy_f8(argv[3], coef);
  const double same = (at::from_blob(coef.data(), {d}, at::kDouble) - m.weight).abs().max().item<double>();

  std::printf("linsweep Gate::train linear, n=%lld d=%lld, %d torch/OpenBLAS threads\n", static_cast<long long>(n),
              static_cast<long long>(d), at::get_num_threads());
  std::printf("  Gate::train: median %.2f s of %d (", median, repeats);
  for (std::size_t i = 0; i < train_s.size(); ++i) std::printf("%s%.2f", i ? ", " : "", train_s[i]);
  std::printf(
      ")\n  breakdown: standardise %.2f s, fit_logistic %.2f s, %lld Newton iterations, gradient max %.2e, %s\n",
      standardise_s, fit_s, static_cast<long long>(m.iterations), m.gradient_max,
      m.converged ? "converged" : "NOT converged");
  std::ofstream json(argv[4]);
  json << "{\"median\": " << median << ", \"seconds\": [";
  for (std::size_t i = 0; i < train_s.size(); ++i) json << (i ? ", " : "") << train_s[i];
  json << "], \"standardise\": " << standardise_s << ", \"fit\": " << fit_s << ", \"iterations\": " << m.iterations
       << ", \"gradient_max\": " << m.gradient_max << ", \"converged\": " << (m.converged ? "true" : "false")
       << ", \"threads\": " << at::get_num_threads() << ", \"gate_vs_fit_max_diff\": " << same << "}\n";
  return m.converged ? 0 : 1;
}
