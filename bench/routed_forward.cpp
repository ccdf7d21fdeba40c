// Where routing wins: a model of a given shape with random weights, scored plainly and with a
// share of the positions routed to a d×d affine map in some of its layers (MlpHook::use_routed,
// RoutedCompute::kGather: the MLP runs only on the kept positions). A linear Gate per routed
// layer, its direction random and its threshold at the quantile that routes a share of that
// layer's positions over the timed windows, decides; it is paid at every position, as in a
// real routed forward. The model is built once and measured at every share in `--shares`.
// Plain and routed passes alternate after an untimed warm-up of each; per repeat the routed
// pass is paired with the plain one before it. Prints one JSON line per share (`--json`) or text,
// and with `--breakdown` the parts of one routed layer timed alone (gate, index lists,
// gather, MLP on the kept rows, affine map on the others, scatter) against its plain MLP.
// Usage: bench_routed_forward [--arch gpt2|gpt_neox] [--d D] [--layers L] [--heads H] [--d-ff F]
//   [--vocab V] [--context T] [--batch B] [--windows W] [--shares S[,S...]] [--every K]
//   [--repeats R] [--threads N] [--device cpu|cuda] [--dtype float32|bfloat16] [--breakdown] [--json]
// Defaults: gpt2, GPT-2 Large's shape (1280, 36, 20, 4·d, 50257), T 256, B 2, W 2, S 0.5,
// every 2nd layer routed, 5 repeats, 2 threads, cpu, float32.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/corpus/windows.hpp"
#include "engine/eval/scoring.hpp"
#include "engine/machine_info.hpp"
#include "engine/model/load_model.hpp"
#include "engine/runtime.hpp"
#include "experiments/numerics/flops.hpp"
#include "experiments/numerics/gate_model.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

struct Args {
  std::string arch = "gpt2", device = "cpu", dtype = "float32";
  std::int64_t d = 1280, layers = 36, heads = 20, d_ff = 0, vocab = 50257;
  std::int64_t context = 256, batch = 2, windows = 2, every = 2, repeats = 5;
  std::vector<double> shares = {0.5};
  int threads = 2;
  bool breakdown = false, json = false;
};

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr, "bench_routed_forward: %s (see the file's header)\n", what.c_str());
  std::exit(2);
}

// The whole of `text` as a number, else a usage error naming the option.
template <typename T>
T number(const std::string& option, const std::string& text) {
  std::size_t used = 0;
  try {
    const T v =
        std::is_integral_v<T> ? static_cast<T>(std::stoll(text, &used)) : static_cast<T>(std::stod(text, &used));
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  usage_error(option + ": '" + text + "' is not a number");
}

Args parse(int argc, char** argv) {
  Args a;
  std::map<std::string, std::int64_t*> ints = {
      {"--d", &a.d},         {"--layers", &a.layers},   {"--heads", &a.heads}, {"--d-ff", &a.d_ff},
      {"--vocab", &a.vocab}, {"--context", &a.context}, {"--batch", &a.batch}, {"--windows", &a.windows},
      {"--every", &a.every}, {"--repeats", &a.repeats}};
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    const bool has_value = i + 1 < argc;
    if (k == "--breakdown") {
      a.breakdown = true;
    } else if (k == "--json") {
      a.json = true;
    } else if (ints.count(k) != 0 && has_value) {
      *ints[k] = number<std::int64_t>(k, argv[++i]);
    } else if ((k == "--share" || k == "--shares") && has_value) {
      a.shares.clear();
      std::stringstream list(argv[++i]);
      for (std::string item; std::getline(list, item, ',');) a.shares.push_back(number<double>(k, item));
    } else if (k == "--threads" && has_value) {
      a.threads = number<int>(k, argv[++i]);
    } else if (k == "--arch" && has_value) {
      a.arch = argv[++i];
    } else if (k == "--device" && has_value) {
      a.device = argv[++i];
    } else if (k == "--dtype" && has_value) {
      a.dtype = argv[++i];
    } else {
      usage_error("unknown or incomplete option '" + k + "'");
    }
  }
  if (a.d_ff == 0) a.d_ff = 4 * a.d;
  const bool shares_ok =
      !a.shares.empty() && std::all_of(a.shares.begin(), a.shares.end(), [](double s) { return s >= 0 && s <= 1; });
  if (!shares_ok) usage_error("--shares must be in [0, 1]");
  for (const auto& [option, value] : ints)
    if (*value < 1) usage_error(option + " must be at least 1");
  if (a.threads < 1) usage_error("--threads must be at least 1");
  if (a.every > a.layers) usage_error("--every must not exceed --layers (no layer would be routed)");
  return a;
}

// A linear gate routing where u·x > t: u a random unit direction, t the (1 − share) quantile of
// u·x over `x` [n, d], built through Gate::load so that it computes as a trained gate does.
linsweep::Gate quantile_gate(const at::Tensor& x, double share) {
  const std::int64_t d = x.size(1);
  at::Tensor u = at::randn({d}, at::kDouble);
  u /= u.norm();
  const at::Tensor proj = x.to(at::kCPU, at::kDouble).mv(u);
  const double t = share >= 1 ? -1e300 : share <= 0 ? 1e300 : at::quantile(proj, 1.0 - share).item<double>();
  auto array = [](const at::Tensor& v) {
    const at::Tensor c = v.contiguous();
    return linsweep::ArrayData{c.sizes().vec(),
                               std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel())};
  };
  linsweep::UnitResult unit;
  unit.arrays["g/kind"] = {{2}, {0, 0}};
  unit.arrays["g/scaler/mean"] = array(at::zeros({d}, at::kDouble));
  unit.arrays["g/scaler/scale"] = array(at::ones({d}, at::kDouble));
  unit.arrays["g/logistic/weight"] = array(u);
  unit.arrays["g/logistic/bias"] = {{1}, {-t}};
  return linsweep::Gate::load(unit, "g");
}

// The model and windows every share is measured on, built once.
struct Bench {
  linsweep::ModelConfig config;
  std::string device;
  at::Device dev{at::kCPU};
  std::shared_ptr<linsweep::LanguageModel> model;
  double build_s = 0;
  linsweep::Windows w;
  std::vector<std::int64_t> routed_layers;  // every `every`-th, from the second (1, 3, 5, ...)
  linsweep::AffineMap map;
};

Bench build(const Args& a) {
  Bench b;
  b.config = linsweep::model_config(a.arch, {.vocab_size = a.vocab,
                                             .d_model = a.d,
                                             .n_layers = a.layers,
                                             .n_heads = a.heads,
                                             .d_ff = a.d_ff,
                                             .max_positions = std::max<std::int64_t>(a.context, 1024)});
  if (a.arch == "gpt_neox") b.config.rotary_pct = 0.25;  // Pythia's
  b.device = linsweep::resolve_device(a.device);
  b.dev = at::Device(b.device);
  const at::ScalarType dtype = linsweep::parse_compute_dtype(a.dtype);
  if (dtype == at::kBFloat16 && b.device == "cpu") linsweep::configure_cpu_bfloat16();
  const auto t_build = Clock::now();
  b.model = linsweep::build_model(b.config);
  b.model->eval();
  b.model->to(b.dev, dtype);
  b.build_s = since(t_build);
  std::vector<linsweep::TokenId> stream(static_cast<std::size_t>(a.windows * a.context));
  for (auto& t : stream) t = static_cast<linsweep::TokenId>(std::rand() % a.vocab);
  b.w = linsweep::make_windows(stream, {0, a.windows * a.context}, a.context, "random tokens");
  for (std::int64_t l = a.every - 1; l < a.layers; l += a.every) b.routed_layers.push_back(l);
  b.map = {(at::randn({a.d, a.d}) * 0.02).to(b.dev, dtype), at::zeros({a.d}).to(b.dev, dtype)};
  return b;
}

// Each gate's threshold is set on its own layer's input in a first routed pass over every
// timed window at once, layer by layer, so that the layers before it are already routed and
// the share over the timed windows is `share` (up to ties), not the plain model's share.
std::vector<linsweep::Gate> calibrate(Bench& b, double share) {
  std::vector<std::optional<linsweep::Gate>> gates(b.routed_layers.size());
  for (std::size_t k = 0; k < b.routed_layers.size(); ++k)
    b.model->hook(b.routed_layers[k]).use_routed(b.map, [&gates, share, k](const at::Tensor& x) {
      gates[k] = quantile_gate(x.reshape({-1, x.size(-1)}), share);
      return gates[k]->route(x);
    });
  b.model->hidden_states(linsweep::window_ids(b.w, 0, b.w.count, b.dev));
  b.model->reset_hooks();
  std::vector<linsweep::Gate> out;
  for (auto& g : gates) out.push_back(std::move(*g));
  return out;
}

// Routes the first `n` routed layers by their gates; each mask's routed count is added to
// `*counted` when it is given.
void use_gates(Bench& b, const std::vector<linsweep::Gate>& gates, std::size_t n, double* counted = nullptr) {
  for (std::size_t k = 0; k < n; ++k)
    b.model->hook(b.routed_layers[k]).use_routed(b.map, [&gates, k, counted](const at::Tensor& x) {
      at::Tensor mask = gates[k].route(x);
      if (counted != nullptr) *counted += static_cast<double>(mask.sum().item<std::int64_t>());
      return mask;
    });
}

// Plain and routed passes over every window, alternating after a warm-up of each.
nlohmann::json time_passes(const Args& a, Bench& b, const std::vector<linsweep::Gate>& gates) {
  std::vector<double> nll(static_cast<std::size_t>(a.windows));
  double routed_positions = 0;
  auto pass = [&](bool routed, bool count) {
    b.model->reset_hooks();
    if (routed) use_gates(b, gates, gates.size(), count ? &routed_positions : nullptr);
    const auto t0 = Clock::now();
    for (std::int64_t s = 0; s < a.windows; s += a.batch) {
      const std::int64_t n = std::min(a.batch, a.windows - s);
      const at::Tensor ids = linsweep::window_ids(b.w, s, n, b.dev);
      linsweep::score_hidden(*b.model, b.model->hidden_states(ids), ids, &nll[static_cast<std::size_t>(s)], nullptr);
    }
    return since(t0);
  };
  pass(false, false), pass(true, true);  // warm-up; counts the routed positions once
  std::vector<double> plain_s, routed_s, ratio;
  for (std::int64_t r = 0; r < a.repeats; ++r) {
    plain_s.push_back(pass(false, false));
    routed_s.push_back(pass(true, false));
    ratio.push_back(routed_s.back() / plain_s.back());
  }
  b.model->reset_hooks();
  const double share = routed_positions / static_cast<double>(b.routed_layers.size() * a.windows * a.context);
  // The bench's models are dense: every routed layer's MLP costs the same.
  const double per_routed =
      linsweep::mlp_flops(b.config, b.routed_layers.front()) - linsweep::surrogate_flops(b.config);
  const double gate = linsweep::gate_flops(linsweep::GateVariant{}, b.config);
  const double predicted =
      static_cast<double>(b.routed_layers.size()) * (share * per_routed - gate) / linsweep::model_flops(b.config);
  const double tokens = static_cast<double>(a.windows * a.context);
  return {{"share", share},
          {"plain_s", plain_s},
          {"routed_s", routed_s},
          {"plain_tokens_per_s", tokens / median(plain_s)},
          {"routed_tokens_per_s", tokens / median(routed_s)},
          {"ratio_median", median(ratio)},
          {"ratio_min", *std::min_element(ratio.begin(), ratio.end())},
          {"ratio_max", *std::max_element(ratio.begin(), ratio.end())},
          {"measured_saving_pct", 100.0 * (1.0 - median(ratio))},
          {"predicted_saving_pct", 100.0 * predicted}};
}

// One routed layer's parts, timed alone on one batch's X, the routed layers below it routed as
// in the routed pass (so that its input, and the share its gate routes, are that pass's).
nlohmann::json breakdown(const Args& a, Bench& b, const std::vector<linsweep::Gate>& gates) {
  const std::size_t mid = b.routed_layers.size() / 2;
  const std::int64_t l = b.routed_layers[mid];
  const linsweep::Gate& g = gates[mid];
  use_gates(b, gates, mid);
  std::int64_t routed_rows = 0;
  const linsweep::AffineMap& map = b.map;
  std::map<std::string, std::vector<double>> parts;
  const int reps = 5;
  b.model->hook(l).use_override([&](const at::Tensor& x, const linsweep::MlpFn& mlp) {
    auto timed = [&](const std::string& name, const auto& fn) {
      fn();  // warm
      for (int i = 0; i < reps; ++i) {
        const auto t0 = Clock::now();
        fn();
        if (x.is_cuda()) at::zeros({1}, x.options()).item<float>();  // waits for the device
        parts[name].push_back(since(t0));
      }
    };
    const at::Tensor flat = x.reshape({-1, x.size(-1)});
    const at::Tensor mask = g.route(x).reshape({-1});
    routed_rows = mask.sum().item<std::int64_t>();
    const at::Tensor lin_at = mask.nonzero().squeeze(1), mlp_at = mask.logical_not().nonzero().squeeze(1);
    const at::Tensor kept = flat.index_select(0, mlp_at).unsqueeze(0), other = flat.index_select(0, lin_at);
    const at::Tensor y_kept = mlp(kept).squeeze(0);
    const at::Tensor y_other = at::addmm(map.bias, other, map.weight);
    at::Tensor out = at::empty_like(flat);
    timed("mlp, every position", [&] { return mlp(x); });
    timed("gate logits and mask", [&] { return g.route(x); });
    timed("index lists (nonzero)", [&] { return mask.nonzero(), mask.logical_not().nonzero(); });
    timed("gather (index_select)", [&] { return flat.index_select(0, mlp_at), flat.index_select(0, lin_at); });
    timed("mlp, kept positions", [&] { return mlp(kept); });
    timed("affine map, routed positions", [&] { return at::addmm(map.bias, other, map.weight); });
    timed("scatter (index_copy_)", [&] { return out.index_copy_(0, mlp_at, y_kept).index_copy_(0, lin_at, y_other); });
    timed("routed hook, whole", [&] {
      linsweep::MlpHook h;
      h.use_routed(map, [&g](const at::Tensor& t) { return g.route(t); });
      return h.apply(x, mlp);
    });
    return mlp(x);
  });
  b.model->hidden_states(linsweep::window_ids(b.w, 0, std::min(a.batch, a.windows), b.dev));
  b.model->reset_hooks();
  nlohmann::json s = nlohmann::json::object();
  for (const auto& [name, t] : parts) s[name] = median(t);
  return {{"breakdown_layer", l},
          {"breakdown_rows", std::min(a.batch, a.windows) * a.context},
          {"breakdown_routed_rows", routed_rows},
          {"breakdown_s", s}};
}

void print_text(const Args& a, const nlohmann::json& j) {
  std::printf("%s d=%lld L=%lld heads=%lld d_ff=%lld vocab=%lld; %lld windows of %lld, batch %lld; %s %s, %d threads\n",
              a.arch.c_str(), static_cast<long long>(a.d), static_cast<long long>(a.layers),
              static_cast<long long>(a.heads), static_cast<long long>(a.d_ff), static_cast<long long>(a.vocab),
              static_cast<long long>(a.windows), static_cast<long long>(a.context), static_cast<long long>(a.batch),
              j["device"].get<std::string>().c_str(), a.dtype.c_str(), a.threads);
  std::printf("routed: %lld layers, %.1f%% of their positions; plain %.0f tokens/s, routed %.0f tokens/s\n",
              static_cast<long long>(j["routed_layers"].get<std::int64_t>()), 100 * j["share"].get<double>(),
              j["plain_tokens_per_s"].get<double>(), j["routed_tokens_per_s"].get<double>());
  std::printf(
      "routed/plain: median %.3f [%.3f, %.3f] over %lld paired repeats; saving measured %.1f%%, predicted %.1f%%\n",
      j["ratio_median"].get<double>(), j["ratio_min"].get<double>(), j["ratio_max"].get<double>(),
      static_cast<long long>(a.repeats), j["measured_saving_pct"].get<double>(),
      j["predicted_saving_pct"].get<double>());
  if (j.contains("breakdown_s"))
    std::printf("  layer %lld: %lld of %lld rows routed\n",
                static_cast<long long>(j["breakdown_layer"].get<std::int64_t>()),
                static_cast<long long>(j["breakdown_routed_rows"].get<std::int64_t>()),
                static_cast<long long>(j["breakdown_rows"].get<std::int64_t>()));
  if (j.contains("breakdown_s"))
    for (const auto& [name, s] : j["breakdown_s"].items())
      std::printf("  layer %lld, %s: %.2f ms\n", static_cast<long long>(j["breakdown_layer"].get<std::int64_t>()),
                  name.c_str(), 1e3 * s.get<double>());
  std::printf("%s; %s\n", j["machine"].get<std::string>().c_str(), j["kernels"].get<std::string>().c_str());
}

}  // namespace

int main(int argc, char** argv) try {
  const Args a = parse(argc, argv);
  linsweep::configure_threads(a.threads);
  at::manual_seed(0);
  Bench b = build(a);
  c10::InferenceMode guard;
  const linsweep::MachineInfo machine = linsweep::machine_info(b.device);
  for (const double share : a.shares) {  // one model build for every share: a large one takes seconds
    const std::vector<linsweep::Gate> gates = calibrate(b, share);
    nlohmann::json j = {{"arch", a.arch},
                        {"d", a.d},
                        {"layers", a.layers},
                        {"heads", a.heads},
                        {"d_ff", a.d_ff},
                        {"vocab", a.vocab},
                        {"context", a.context},
                        {"batch", a.batch},
                        {"windows", a.windows},
                        {"routed_layers", b.routed_layers.size()},
                        {"share_asked", share},
                        {"device", b.device},
                        {"dtype", a.dtype},
                        {"threads", a.threads},
                        {"build_s", b.build_s},
                        {"machine", machine.machine},
                        {"kernels", machine.kernels}};
    j.update(time_passes(a, b, gates));
    if (a.breakdown) j.update(breakdown(a, b, gates));
    if (a.json)
      std::printf("%s\n", j.dump().c_str());
    else
      print_text(a, j);
    std::fflush(stdout);
  }
  return 0;
} catch (const std::exception& e) {  // a shape the model refuses, a device this build lacks
  std::fprintf(stderr, "bench_routed_forward: %s\n", e.what());
  return 2;
}
