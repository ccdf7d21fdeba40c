// Plain against routed decoding: paired timing, bytes per token, the continuation's quality.
#include "experiments/speed/speed_decode.hpp"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>

#include "common/errors.hpp"
#include "engine/eval/scoring.hpp"
#include "engine/machine_info.hpp"
#include "engine/model/generation.hpp"
#include "engine/model/language_model.hpp"
#include "experiments/framework/layer_params.hpp"
#include "experiments/framework/unit_data.hpp"
#include "experiments/speed/decode_cost.hpp"
#include "experiments/speed/memory_bandwidth.hpp"
#include "experiments/speed/paired_timing.hpp"

namespace linsweep {
namespace {

double decode_median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// Sequence b's prompt: the first `tokens` ids of window b % count, [B, tokens] int64 on the CPU.
at::Tensor decode_prompts(const Windows& w, std::int64_t batch, std::int64_t tokens) {
  at::Tensor out = at::empty({batch, tokens}, at::kLong);
  auto* p = out.data_ptr<std::int64_t>();
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t t = 0; t < tokens; ++t)
      p[b * tokens + t] = w.ids[static_cast<std::size_t>((b % w.count) * w.context + t)];
  return out;
}

// The PPL, under the model as its hooks stand (plain), of the n new tokens of each sequence of
// `ids` [B, P + n] given what precedes them.
double continuation_ppl(LanguageModel& model, const at::Tensor& ids, std::int64_t prompt) {
  const at::Tensor on = ids.to(model.parameters().front().device());
  const at::Tensor nll = token_nll(model, model.hidden_states(on), on);  // [B, P + n − 1]: position t predicts t + 1
  return std::exp(nll.narrow(1, prompt - 1, ids.size(1) - prompt).mean().item<double>());
}

// Routes every gate at once; with `steps`, counts each layer's decode steps and decisions.
void route_all(LanguageModel& model, const SpeedGates& g, std::vector<LayerSteps>* steps) {
  for (std::size_t k = 0; k < g.layers.size(); ++k)
    model.hook(g.layers[k]).use_routed(g.maps[k], [&g, k, steps](const at::Tensor& x) {
      at::Tensor mask = g.gates[k].route(x);
      if (steps != nullptr && x.size(1) == 1) (*steps)[k].count(mask);  // a decode step: one position a sequence
      return mask;
    });
}

// What the bytes per step predict, from the routed warm-up's decisions (greedy decoding makes
// the same ones in every run): the rows' bytes and predicted saving.
void predict(const ExperimentInput& in, const DecodeSettings& s, const SpeedGates& g,
             const std::vector<LayerSteps>& steps, std::int64_t batch, SpeedDecodeRow& row) {
  const ModelConfig& c = in.model->config();
  const DecodeCost cost = decode_cost(c, in.model->parameters().front().scalar_type(), batch);
  std::vector<const LayerSteps*> routed(static_cast<std::size_t>(c.n_layers), nullptr);
  std::vector<double> gate(static_cast<std::size_t>(c.n_layers), 0.0);
  double decided = 0, sent = 0;
  for (std::size_t k = 0; k < g.layers.size(); ++k) {
    routed[static_cast<std::size_t>(g.layers[k])] = &steps[k];
    gate[static_cast<std::size_t>(g.layers[k])] = gate_bytes(g.gates[k].variant(), c.d_model);
    decided += static_cast<double>(steps[k].tokens);
    sent += static_cast<double>(steps[k].routed);
  }
  const std::int64_t n = s.new_tokens - 1, start = s.prompt_tokens + 1;
  const double tokens = static_cast<double>(n * batch);
  row.plain_bytes_per_token = decode_bytes(cost, batch, start, n, {}, {}) / tokens;
  row.routed_bytes_per_token = decode_bytes(cost, batch, start, n, routed, gate) / tokens;
  row.predicted_saving_pct = 100.0 * (1.0 - row.routed_bytes_per_token / row.plain_bytes_per_token);
  row.pct_routed = decided > 0 ? 100.0 * sent / decided : 0.0;
  if (row.bandwidth_gb_s > 0) row.roofline_tokens_per_s = row.bandwidth_gb_s * 1e9 / row.plain_bytes_per_token;
}

SpeedDecodeRow time_batch(const ExperimentInput& in, const DecodeSettings& s, const SpeedGates& g, const Windows& w,
                          std::int64_t batch, SpeedDecodeRow row) {
  LanguageModel& model = *in.model;
  const at::Tensor prompts = decode_prompts(w, batch, s.prompt_tokens);
  GenerationOptions o;
  o.max_new_tokens = s.new_tokens;
  o.greedy = true;
  auto run = [&](bool routed, std::vector<LayerSteps>* steps) {
    model.reset_hooks();
    if (routed) route_all(model, g, steps);
    return generate(model, prompts, o);
  };
  const Generation plain = run(false, nullptr);
  std::vector<LayerSteps> steps(g.layers.size());
  const Generation routed = run(true, &steps);
  const PairedTiming t = time_pairs(
      [&] { return run(false, nullptr).decode_seconds; }, [&] { return run(true, nullptr).decode_seconds; },
      {.min_repeats = s.min_pairs, .max_repeats = s.max_pairs, .width_pct = s.width_pct, .max_seconds = s.max_seconds});
  model.reset_hooks();
  const double tokens = static_cast<double>(batch * (s.new_tokens - 1));
  row.batch = batch;
  row.plain_tokens_per_s = tokens / decode_median(t.plain_s);
  row.routed_tokens_per_s = tokens / decode_median(t.routed_s);
  row.saving_pct = t.saving.saving_pct;
  row.saving_low = t.saving.low_pct;
  row.saving_high = t.saving.high_pct;
  row.pairs = t.saving.pairs;
  row.capped = t.capped ? 1 : 0;
  row.seconds = t.seconds;
  row.load_before = t.load_before;
  row.load_after = t.load_after;
  row.cpu_share = t.cpu_share;
  predict(in, s, g, steps, batch, row);
  row.ppl_plain_text = continuation_ppl(model, plain.ids, s.prompt_tokens);
  row.ppl_routed_text = continuation_ppl(model, routed.ids, s.prompt_tokens);
  row.text_delta_pct = 100.0 * (row.ppl_routed_text / row.ppl_plain_text - 1.0);
  const at::Tensor same =
      plain.ids.narrow(1, s.prompt_tokens, s.new_tokens).eq(routed.ids.narrow(1, s.prompt_tokens, s.new_tokens));
  row.same_tokens_pct = 100.0 * same.to(at::kDouble).mean().item<double>();
  return row;
}

}  // namespace

const TableDef<SpeedDecodeRow>& speed_decode_table() {
  using R = SpeedDecodeRow;
  static const TableDef<R> t =
      TableDef<R>("speed_decode",
                  "one row per model, corpus and batch size: plain against routed generation (every compound "
                  "gate at once), one token per sequence per step")
          .key("model", &R::model)
          .key("corpus", &R::corpus)
          .key("layer_set", &R::layer_set, "compound's gated layers (joins the speed and compound tables)")
          .key("batch", &R::batch, "sequences decoded together")
          .column("prompt_tokens", &R::prompt_tokens, "prompt length: the first tokens of eval windows")
          .column("new_tokens", &R::new_tokens, "tokens generated per sequence (greedy); new_tokens − 1 timed steps")
          .column("routed_layers", &R::routed_layers, "layers routed in the routed generation")
          .column("pct_routed", &R::pct_routed, "% of the routed layers' decode-step decisions sent to the surrogate")
          .column("plain_tokens_per_s", &R::plain_tokens_per_s, "decode steps' tokens per second, plain (median run)")
          .column("routed_tokens_per_s", &R::routed_tokens_per_s, "the same, routed")
          .column("saving_pct", &R::saving_pct,
                  "measured: 100·(1 − geometric mean over pairs of routed/plain decode time)")
          .column("saving_low", &R::saving_low, "its 95% interval (Student's t on the log ratios), low end")
          .column("saving_high", &R::saving_high, "its high end")
          .column("pairs", &R::pairs, "paired repeats (plain and routed, alternating which runs first)")
          .column("capped", &R::capped, "1 when the time or repeat cap ended the pairs before the interval width")
          .column("seconds", &R::seconds, "wall time of the paired repeats")
          .column("predicted_saving_pct", &R::predicted_saving_pct,
                  "100·(1 − routed/plain bytes read per decode step), from the routed run's decisions")
          .column("plain_bytes_per_token", &R::plain_bytes_per_token, "bytes a plain step reads, per token")
          .column("routed_bytes_per_token", &R::routed_bytes_per_token, "bytes a routed step reads, per token")
          .column("bandwidth_gb_s", &R::bandwidth_gb_s,
                  "memory read bandwidth measured on the device (a sum over 512 MiB)")
          .column("roofline_tokens_per_s", &R::roofline_tokens_per_s,
                  "bandwidth / plain bytes per token: the fastest plain decoding the bandwidth allows")
          .column("ppl_plain_text", &R::ppl_plain_text,
                  "PPL of the plain generation's new tokens under the plain model")
          .column("ppl_routed_text", &R::ppl_routed_text,
                  "PPL of the routed generation's new tokens under the plain model")
          .column("text_delta_pct", &R::text_delta_pct, "100·(ppl_routed_text / ppl_plain_text − 1)")
          .column("same_tokens_pct", &R::same_tokens_pct, "% of new tokens the routed generation shares with the plain")
          .column("load_before", &R::load_before, "1-minute load average before the pairs (−1: unreadable)")
          .column("load_after", &R::load_after, "1-minute load average after them")
          .column("cpu_share", &R::cpu_share, "this process's CPU seconds per wall second during the pairs")
          .column("device", &R::device, "where it ran (cpu, cuda:N)")
          .column("dtype", &R::dtype, "compute dtype")
          .column("machine", &R::machine, "processor and CPUs (and the device)")
          .column("kernels", &R::kernels, "LibTorch, ATen's CPU capability, oneDNN, the BLAS core, threads");
  return t;
}
const TableRegistrar kSpeedDecodeTable{speed_decode_table().schema()};

std::string dtype_text(at::ScalarType t) {
  return t == at::kBFloat16 ? "bfloat16" : t == at::kHalf ? "float16" : t == at::kFloat ? "float32" : "other";
}

std::vector<SpeedDecodeRow> time_decoding(const ExperimentInput& in, const DecodeSettings& s, const SpeedGates& gates,
                                          const Windows& w) {
  if (s.prompt_tokens + s.new_tokens > w.context)
    throw InputError(in.unit_id + ": decode_prompt " + std::to_string(s.prompt_tokens) + " and decode_new " +
                     std::to_string(s.new_tokens) + " exceed the context of " + std::to_string(w.context));
  LanguageModel& model = *in.model;
  HookReset reset(model);
  c10::InferenceMode guard;
  const at::Tensor first = model.parameters().front();
  const MachineInfo machine = machine_info(first.device().str());
  SpeedDecodeRow base{.model = in.model_name,
                      .corpus = in.corpus_name,
                      .layer_set = layer_set(gates.layers),
                      .prompt_tokens = s.prompt_tokens,
                      .new_tokens = s.new_tokens,
                      .routed_layers = static_cast<std::int64_t>(gates.layers.size()),
                      .device = first.device().str(),
                      .dtype = dtype_text(first.scalar_type()),
                      .machine = machine.machine,
                      .kernels = machine.kernels};
  // 512 MiB: past the last-level cache of the CPUs in docs/benchmarks.md.
  base.bandwidth_gb_s = measure_memory_bandwidth(std::int64_t{512} << 20, 3, first.device()).read_gb_s;
  std::vector<SpeedDecodeRow> rows;
  for (const std::int64_t batch : s.batches) rows.push_back(time_batch(in, s, gates, w, batch, base));
  return rows;
}

}  // namespace linsweep
