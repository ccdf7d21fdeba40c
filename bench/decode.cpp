// Routed decoding against plain decoding on a model of a given shape with random weights
// (default TinyLlama 1.1B's: Llama, 22 layers, d 2048, d_ff 5632, 32 heads over 4 key/value
// heads, vocabulary 32000). Every `every`-th layer is routed by a linear Gate whose direction is
// random and whose threshold is the quantile of its layer's inputs that routes `share` of the
// new tokens of a plain greedy continuation of every prompt (set layer by layer on a routed
// forward, as bench_routed_forward sets its thresholds); each new token's gate decides at each
// routed layer: the MLP, or a d×d affine map (engine/model/generation.hpp; a branch at batch 1,
// the kept rows gathered at batch B).
// Per share and batch: greedy generation of `new` tokens after prompts of `prompt` random
// tokens, plain and routed in pairs, interleaved, until the saving's 95% interval is narrower
// than `width` points (at least 5 pairs) or `max-seconds` pass (experiments/speed/paired_timing.hpp);
// tokens/s of the decode steps, the machine's memory bandwidth (a read and a copy of 1 GiB, and
// d_ff × d projections at batch 1 over 1 GiB of weights), the bytes each step reads plain and
// routed (experiments/speed/decode_cost.hpp) and the saving they predict, the load average
// before and after each measurement and the process's CPU seconds per wall second.
// Usage: bench_decode [--arch llama|gpt2|gpt_neox] [--d D] [--layers L] [--heads H] [--kv-heads K]
//   [--d-ff F] [--vocab V] [--prompt P] [--new N] [--batches B[,B...]] [--shares S[,S...]]
//   [--every K] [--width W] [--max-seconds S] [--max-repeats R] [--threads N] [--device cpu|cuda]
//   [--dtype float32|bfloat16] [--json]
// Defaults: TinyLlama's shape, P 16, N 24, batches 1,8, shares 0.25,0.5,0.75, every layer
// routed, width 2, 300 s, 40 repeats, 2 threads, cpu, float32.
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

#include "engine/machine_info.hpp"
#include "engine/model/generation.hpp"
#include "engine/model/load_model.hpp"
#include "engine/model/threaded_gemm.hpp"
#include "engine/runtime.hpp"
#include "experiments/numerics/gate_model.hpp"
#include "experiments/speed/decode_cost.hpp"
#include "experiments/speed/memory_bandwidth.hpp"
#include "experiments/speed/paired_timing.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Args {
  std::string arch = "llama", device = "cpu", dtype = "float32";
  std::int64_t d = 2048, layers = 22, heads = 32, kv_heads = 4, d_ff = 5632, vocab = 32000;
  std::int64_t prompt = 16, fresh = 24, every = 1, max_repeats = 40;
  std::vector<std::int64_t> batches = {1, 8};
  std::vector<double> shares = {0.25, 0.5, 0.75};
  double width = 2.0, max_seconds = 300;
  int threads = 2;
  bool json = false;
};

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr, "bench_decode: %s (see the file's header)\n", what.c_str());
  std::exit(2);
}

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

template <typename T>
std::vector<T> numbers(const std::string& option, const std::string& text) {
  std::vector<T> out;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) out.push_back(number<T>(option, item));
  if (out.empty()) usage_error(option + ": no values");
  return out;
}

Args parse(int argc, char** argv) {
  Args a;
  std::map<std::string, std::int64_t*> ints = {{"--d", &a.d},           {"--layers", &a.layers},
                                               {"--heads", &a.heads},   {"--kv-heads", &a.kv_heads},
                                               {"--d-ff", &a.d_ff},     {"--vocab", &a.vocab},
                                               {"--prompt", &a.prompt}, {"--new", &a.fresh},
                                               {"--every", &a.every},   {"--max-repeats", &a.max_repeats}};
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    const bool has_value = i + 1 < argc;
    if (k == "--json") {
      a.json = true;
    } else if (ints.count(k) != 0 && has_value) {
      *ints[k] = number<std::int64_t>(k, argv[++i]);
    } else if (k == "--shares" && has_value) {
      a.shares = numbers<double>(k, argv[++i]);
    } else if (k == "--batches" && has_value) {
      a.batches = numbers<std::int64_t>(k, argv[++i]);
    } else if (k == "--width" && has_value) {
      a.width = number<double>(k, argv[++i]);
    } else if (k == "--max-seconds" && has_value) {
      a.max_seconds = number<double>(k, argv[++i]);
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
  for (const auto& [option, value] : ints)
    if (*value < 1) usage_error(option + " must be at least 1");
  if (a.fresh < 2) usage_error("--new must be at least 2 (one decode step)");
  if (std::any_of(a.shares.begin(), a.shares.end(), [](double s) { return s < 0 || s > 1; }))
    usage_error("--shares must be in [0, 1]");
  if (std::any_of(a.batches.begin(), a.batches.end(), [](std::int64_t b) { return b < 1; }))
    usage_error("--batches must be at least 1");
  if (a.threads < 1) usage_error("--threads must be at least 1");
  if (a.every > a.layers) usage_error("--every must not exceed --layers");
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

struct Bench {
  linsweep::ModelConfig config;
  std::string device;
  at::ScalarType dtype = at::kFloat;
  std::shared_ptr<linsweep::LanguageModel> model;
  at::Tensor prompts;                       // [max batch, P] on the CPU
  std::vector<std::int64_t> routed_layers;  // every `every`-th, from the last of the first `every`
  linsweep::AffineMap map;
  double build_s = 0;
};

Bench build(const Args& a) {
  Bench b;
  const std::int64_t positions = std::max<std::int64_t>(2048, a.prompt + a.fresh);
  b.config = linsweep::model_config(a.arch, {.vocab_size = a.vocab,
                                             .d_model = a.d,
                                             .n_layers = a.layers,
                                             .n_heads = a.heads,
                                             .d_ff = a.d_ff,
                                             .max_positions = positions});
  if (a.arch != "gpt2" && a.arch != "gpt_neox") b.config.n_kv_heads = a.kv_heads;
  if (a.arch == "gpt_neox") b.config.rotary_pct = 0.25;  // Pythia's
  b.device = linsweep::resolve_device(a.device);
  b.dtype = linsweep::parse_compute_dtype(a.dtype);
  if (b.dtype == at::kBFloat16 && b.device == "cpu") linsweep::configure_cpu_bfloat16();
  const auto t0 = Clock::now();
  b.model = linsweep::build_model(b.config);
  b.model->eval();
  b.model->to(at::Device(b.device), b.dtype);
  b.build_s = since(t0);
  const std::int64_t most = *std::max_element(a.batches.begin(), a.batches.end());
  b.prompts = at::randint(0, a.vocab, {std::max<std::int64_t>(most, 8), a.prompt}, at::kLong);
  for (std::int64_t l = a.every - 1; l < a.layers; l += a.every) b.routed_layers.push_back(l);
  const auto opts = at::TensorOptions().device(b.device).dtype(b.dtype);
  b.map = {(at::randn({a.d, a.d}) * (1.0 / std::sqrt(static_cast<double>(a.d)))).to(opts), at::zeros({a.d}, opts)};
  return b;
}

// The memory bandwidth this process sees, in GB/s: a read and a copy of 1 GiB of float32
// (experiments/speed/memory_bandwidth.hpp), and the kernel a decode step runs, d_ff × d
// projections at batch 1, over 1 GiB of distinct weights (so that none is in the last-level
// cache when it is read again): their bytes over the fastest of five passes.
nlohmann::json bandwidth(const Bench& b) {
  const linsweep::MemoryBandwidth m =
      linsweep::measure_memory_bandwidth(std::int64_t{1} << 30, 5, at::Device(b.device));
  const auto opts = at::TensorOptions().device(b.device).dtype(b.dtype);
  const at::Tensor x = at::randn({1, b.config.d_model}, opts);
  std::vector<at::Tensor> weights;
  double bytes = 0;
  while (bytes < static_cast<double>(std::int64_t{1} << 30)) {
    weights.push_back(at::randn({b.config.d_ff, b.config.d_model}, opts));
    bytes += static_cast<double>(weights.back().numel() * weights.back().element_size());
  }
  double best = 1e300;
  for (int i = 0; i < 6; ++i) {  // the first warms
    const auto t0 = Clock::now();
    for (const at::Tensor& w : weights) linsweep::threaded_linear(x, w, {})[0][0].item<float>();
    if (i > 0) best = std::min(best, since(t0));
  }
  return {{"read_gb_s", m.read_gb_s}, {"copy_gb_s", m.copy_gb_s}, {"projection_gb_s", bytes / best / 1e9}};
}

// Gates routing `share` of the tokens a decode step reads: each layer's threshold is set on the
// new tokens of a plain greedy continuation of every prompt, in a routed forward over the
// prompts and their continuations, layer by layer (so that the layers below are routed).
std::vector<linsweep::Gate> calibrate(Bench& b, const at::Tensor& sequences, std::int64_t prompt, double share) {
  std::vector<std::optional<linsweep::Gate>> gates(b.routed_layers.size());
  for (std::size_t k = 0; k < b.routed_layers.size(); ++k)
    b.model->hook(b.routed_layers[k]).use_routed(b.map, [&gates, share, k, prompt](const at::Tensor& x) {
      const at::Tensor fresh = x.narrow(1, prompt, x.size(1) - prompt);
      gates[k] = quantile_gate(fresh.reshape({-1, x.size(-1)}), share);
      return gates[k]->route(x);
    });
  b.model->hidden_states(sequences.to(at::Device(b.device)));
  b.model->reset_hooks();
  std::vector<linsweep::Gate> out;
  for (auto& g : gates) out.push_back(std::move(*g));
  return out;
}

// Routes the routed layers by `gates`; with `steps`, counts each layer's decode steps (inputs of
// one position per sequence) and what they routed.
void use_gates(Bench& b, const std::vector<linsweep::Gate>& gates, std::vector<linsweep::LayerSteps>* steps) {
  for (std::size_t k = 0; k < gates.size(); ++k)
    b.model->hook(b.routed_layers[k]).use_routed(b.map, [&gates, k, steps](const at::Tensor& x) {
      at::Tensor mask = gates[k].route(x);
      if (steps != nullptr && x.size(1) == 1) (*steps)[k].count(mask);
      return mask;
    });
}

}  // namespace

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// Plain against routed generation of `batch` sequences at one share: pairs until the interval
// is narrow enough or the time is up; the bytes per step plain and routed from the routed
// warm-up's decisions (greedy decoding repeats them in every run).
nlohmann::json measure(const Args& a, Bench& b, const std::vector<linsweep::Gate>& gates, std::int64_t batch,
                       double read_gb_s) {
  const at::Tensor prompts = b.prompts.narrow(0, 0, batch);
  linsweep::GenerationOptions o;
  o.max_new_tokens = a.fresh;
  o.greedy = true;
  auto run = [&](bool routed, std::vector<linsweep::LayerSteps>* steps) {
    b.model->reset_hooks();
    if (routed) use_gates(b, gates, steps);
    return linsweep::generate(*b.model, prompts, o);
  };
  run(false, nullptr);
  std::vector<linsweep::LayerSteps> steps(gates.size());
  run(true, &steps);
  const linsweep::PairedTiming t = linsweep::time_pairs(
      [&] { return run(false, nullptr).decode_seconds; }, [&] { return run(true, nullptr).decode_seconds; },
      {.min_repeats = 5, .max_repeats = a.max_repeats, .width_pct = a.width, .max_seconds = a.max_seconds});
  b.model->reset_hooks();
  const linsweep::DecodeCost cost = linsweep::decode_cost(b.config, b.dtype, batch);
  std::vector<const linsweep::LayerSteps*> routed(static_cast<std::size_t>(a.layers), nullptr);
  std::vector<double> gate(static_cast<std::size_t>(a.layers), 0.0);
  double decided = 0, sent = 0;
  for (std::size_t k = 0; k < gates.size(); ++k) {
    const auto l = static_cast<std::size_t>(b.routed_layers[k]);
    routed[l] = &steps[k];
    gate[l] = linsweep::gate_bytes(gates[k].variant(), a.d);
    decided += static_cast<double>(steps[k].tokens);
    sent += static_cast<double>(steps[k].routed);
  }
  const std::int64_t n = a.fresh - 1;  // decode steps
  const double plain_bytes = linsweep::decode_bytes(cost, batch, a.prompt + 1, n, {}, {}) / static_cast<double>(n);
  const double routed_bytes =
      linsweep::decode_bytes(cost, batch, a.prompt + 1, n, routed, gate) / static_cast<double>(n);
  const double tokens = static_cast<double>(batch * n);
  const double plain_tps = tokens / median(t.plain_s), routed_tps = tokens / median(t.routed_s);
  return {{"batch", batch},
          {"share", decided > 0 ? sent / decided : 0.0},
          {"plain_tokens_per_s", plain_tps},
          {"routed_tokens_per_s", routed_tps},
          {"speedup", routed_tps / plain_tps},
          {"measured_saving_pct", t.saving.saving_pct},
          {"saving_low_pct", t.saving.low_pct},
          {"saving_high_pct", t.saving.high_pct},
          {"interval_contains_zero", t.saving.contains_zero()},
          {"pairs", t.saving.pairs},
          {"capped", t.capped},
          {"seconds", t.seconds},
          {"plain_s", t.plain_s},
          {"routed_s", t.routed_s},
          {"plain_bytes_per_step", plain_bytes},
          {"routed_bytes_per_step", routed_bytes},
          {"predicted_saving_pct", 100.0 * (1.0 - routed_bytes / plain_bytes)},
          {"predicted_speedup", plain_bytes / routed_bytes},
          {"roofline_plain_tokens_per_s", static_cast<double>(batch) * read_gb_s * 1e9 / plain_bytes},
          {"load_before", t.load_before},
          {"load_after", t.load_after},
          {"cpu_share", t.cpu_share}};
}

void print_text(const nlohmann::json& j) {
  std::printf(
      "share %5.1f%%  batch %lld: plain %7.2f tok/s, routed %7.2f tok/s (%.3fx); saving measured %5.1f%% [%5.1f, "
      "%5.1f]%s over %lld pairs%s, predicted %5.1f%% (%.3fx; %.0f MB/step plain, %.0f routed); load %.2f->%.2f, "
      "cpu %.2f\n",
      100 * j["share"].get<double>(), static_cast<long long>(j["batch"].get<std::int64_t>()),
      j["plain_tokens_per_s"].get<double>(), j["routed_tokens_per_s"].get<double>(), j["speedup"].get<double>(),
      j["measured_saving_pct"].get<double>(), j["saving_low_pct"].get<double>(), j["saving_high_pct"].get<double>(),
      j["interval_contains_zero"].get<bool>() ? "†" : "", static_cast<long long>(j["pairs"].get<std::int64_t>()),
      j["capped"].get<bool>() ? " (capped)" : "", j["predicted_saving_pct"].get<double>(),
      j["predicted_speedup"].get<double>(), j["plain_bytes_per_step"].get<double>() / 1e6,
      j["routed_bytes_per_step"].get<double>() / 1e6, j["load_before"].get<double>(), j["load_after"].get<double>(),
      j["cpu_share"].get<double>());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) try {
  const Args a = parse(argc, argv);
  linsweep::configure_threads(a.threads);
  at::manual_seed(0);
  Bench b = build(a);
  c10::InferenceMode guard;
  const linsweep::MachineInfo machine = linsweep::machine_info(b.device);
  const nlohmann::json bw = bandwidth(b);
  const nlohmann::json head = {{"arch", a.arch},
                               {"d", a.d},
                               {"layers", a.layers},
                               {"heads", a.heads},
                               {"kv_heads", a.kv_heads},
                               {"d_ff", a.d_ff},
                               {"vocab", a.vocab},
                               {"prompt", a.prompt},
                               {"new", a.fresh},
                               {"routed_layers", b.routed_layers.size()},
                               {"device", b.device},
                               {"dtype", a.dtype},
                               {"threads", a.threads},
                               {"build_s", b.build_s},
                               {"bandwidth_gb_s", bw},
                               {"machine", machine.machine},
                               {"kernels", machine.kernels}};
  if (!a.json)
    std::printf(
        "%s d=%lld L=%lld heads=%lld/%lld d_ff=%lld vocab=%lld, %s %s, %d threads; prompt %lld, %lld new\n"
        "bandwidth: read %.1f GB/s, copy %.1f GB/s, projection at batch 1 %.1f GB/s\n%s; %s\n",
        a.arch.c_str(), static_cast<long long>(a.d), static_cast<long long>(a.layers), static_cast<long long>(a.heads),
        static_cast<long long>(a.kv_heads), static_cast<long long>(a.d_ff), static_cast<long long>(a.vocab),
        b.device.c_str(), a.dtype.c_str(), a.threads, static_cast<long long>(a.prompt), static_cast<long long>(a.fresh),
        bw["read_gb_s"].get<double>(), bw["copy_gb_s"].get<double>(), bw["projection_gb_s"].get<double>(),
        machine.machine.c_str(), machine.kernels.c_str());
  linsweep::GenerationOptions plain;
  plain.max_new_tokens = a.fresh;
  const at::Tensor sequences = linsweep::generate(*b.model, b.prompts, plain).ids;  // greedy
  for (const double share : a.shares) {
    const std::vector<linsweep::Gate> gates = calibrate(b, sequences, a.prompt, share);
    for (const std::int64_t batch : a.batches) {
      nlohmann::json j = head;
      j["share_asked"] = share;
      j.update(measure(a, b, gates, batch, bw["read_gb_s"].get<double>()));
      if (a.json)
        std::printf("%s\n", j.dump().c_str());
      else
        print_text(j);
      std::fflush(stdout);
    }
  }
  return 0;
} catch (const std::exception& e) {  // a shape the model refuses, a device this build lacks
  std::fprintf(stderr, "bench_decode: %s\n", e.what());
  return 2;
}
