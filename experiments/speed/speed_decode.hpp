// `speed`'s decode measurement (docs/methods.md, "Speed"): plain against routed generation with
// a KV cache, one token per sequence per step, at each batch size of `decode_batches`, timed in
// paired, interleaved repeats, beside the bytes each step reads and the saving they predict,
// the machine's memory bandwidth and load, and the routed continuation's PPL under the plain
// model. speed.cpp runs it after the forwards; the report's decode table, figure and findings
// are speed_decode_report.cpp's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/corpus/windows.hpp"
#include "engine/model/affine_map.hpp"
#include "experiments/framework/experiment.hpp"
#include "experiments/numerics/gate_model.hpp"
#include "storage/table_def.hpp"

namespace linsweep {

// The chosen gates and the surrogates of a speed unit's layers, on the model's device and in
// its dtype.
struct SpeedGates {
  std::vector<std::int64_t> layers;
  std::vector<Gate> gates;
  std::vector<AffineMap> maps;
};

// The unit's decode settings (the speed experiment's decode_* parameters).
struct DecodeSettings {
  std::vector<std::int64_t> batches;
  std::int64_t prompt_tokens = 0, new_tokens = 0;
  std::int64_t min_pairs = 5, max_pairs = 50;
  double width_pct = 2.0, max_seconds = 60;
};

struct SpeedDecodeRow {
  std::string model, corpus, layer_set;
  std::int64_t batch = 0, prompt_tokens = 0, new_tokens = 0, routed_layers = 0;
  double pct_routed = 0;
  double plain_tokens_per_s = 0, routed_tokens_per_s = 0;
  double saving_pct = 0, saving_low = 0, saving_high = 0;
  std::int64_t pairs = 0, capped = 0;
  double seconds = 0, predicted_saving_pct = 0;
  double plain_bytes_per_token = 0, routed_bytes_per_token = 0, bandwidth_gb_s = 0, roofline_tokens_per_s = 0;
  double ppl_plain_text = 0, ppl_routed_text = 0, text_delta_pct = 0, same_tokens_pct = 0;
  double load_before = 0, load_after = 0, cpu_share = 0;
  std::string device, dtype, machine, kernels;
};

// Table `speed_decode`: one row per model, corpus, layer set and batch size.
const TableDef<SpeedDecodeRow>& speed_decode_table();

// Times plain and routed (every gate of `gates` at once) greedy generation from the first
// prompt_tokens tokens of the first windows of `w` (window b % count for sequence b), at each
// batch size. Leaves the model's hooks reset. Throws InputError when a prompt and its new
// tokens do not fit the windows' context. Call on one rank only: it times this process alone.
std::vector<SpeedDecodeRow> time_decoding(const ExperimentInput& in, const DecodeSettings& s, const SpeedGates& gates,
                                          const Windows& w);

// The compute dtype's name as the spec writes it.
std::string dtype_text(at::ScalarType t);

}  // namespace linsweep
