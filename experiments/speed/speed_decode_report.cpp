// The report's decode section: plain against routed decoding per model, corpus and batch size,
// the measured saving against the bytes' prediction (table, figure) and the findings, which
// state a saving only from at least kMinPairsStated paired repeats and mark an interval that
// contains zero with †.
#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "experiments/speed/speed_decode.hpp"
#include "presentation/cells.hpp"
#include "presentation/figures.hpp"
#include "presentation/section.hpp"
#include "presentation/svg_chart.hpp"

namespace linsweep {
namespace {

// Fewer paired repeats than this state no saving (docs/methods.md, "Speed").
constexpr std::int64_t kMinPairsStated = 5;

constexpr const char* kDecodeNote =
    "measured: geometric mean of paired routed/plain decode times, 95% interval (Student's t on the log ratios); "
    "† the interval contains zero; predicted: bytes read per decode step";

// "12.3 [10.1, 14.0]", with " †" when the interval contains zero; "–" below kMinPairsStated pairs.
std::string decode_saving_cell(const SpeedDecodeRow& r) {
  if (r.pairs < kMinPairsStated) return "– (" + std::to_string(r.pairs) + " pairs)";
  const bool zero = r.saving_low <= 0 && r.saving_high >= 0;
  return pct(r.saving_pct) + " [" + pct(r.saving_low) + ", " + pct(r.saving_high) + "]" + (zero ? " †" : "");
}

std::vector<SpeedDecodeRow> decode_rows(const TableSet& tables) {
  return speed_decode_table().sorted_rows(
      tables, [](const SpeedDecodeRow& r) { return std::tie(r.model, r.corpus, r.layer_set, r.batch); });
}

void decode_tables(const TableSet& tables, std::vector<ReportTable>* out) {
  const auto rows = decode_rows(tables);
  if (rows.empty()) return;
  ReportTable t{"speed_decode",
                "Routed decoding: tokens/s plain and routed (every compound gate at once), measured against "
                "predicted saving",
                {"model", "corpus", "batch", "% routed", "plain tokens/s", "routed tokens/s", "predicted saving %",
                 "measured saving % [95%]", "pairs", "MB per token plain/routed", "bandwidth GB/s",
                 "text PPL plain → routed (Δ%)", "same tokens %", "load", "machine"},
                {},
                kDecodeNote};
  for (const auto& r : rows)
    t.rows.push_back(
        {r.model, r.corpus, std::to_string(r.batch), pct(r.pct_routed), num(r.plain_tokens_per_s, 4),
         num(r.routed_tokens_per_s, 4), pct(r.predicted_saving_pct), decode_saving_cell(r),
         std::to_string(r.pairs) + (r.capped != 0 ? " (capped)" : ""),
         num(r.plain_bytes_per_token / 1e6, 3) + "/" + num(r.routed_bytes_per_token / 1e6, 3),
         r.bandwidth_gb_s > 0 ? num(r.bandwidth_gb_s, 3) : "-",
         num(r.ppl_plain_text, 4) + " → " + num(r.ppl_routed_text, 4) + " (" + signed2(r.text_delta_pct) + ")",
         pct(r.same_tokens_pct), num(r.load_before, 3) + " → " + num(r.load_after, 3),
         r.machine + " (" + r.device + ", " + r.dtype + ")"});
  out->push_back(std::move(t));
}

// Measured against predicted saving, one point per model and corpus, a series per batch size,
// with the line where the two agree.
void decode_figures(const FigureInput& in, std::vector<Figure>* out) {
  const auto rows = decode_rows(in.tables);
  std::map<std::int64_t, ChartSeries> by_batch;
  double lo = 0, hi = 0;
  for (const auto& r : rows) {
    if (r.pairs < kMinPairsStated) continue;
    ChartSeries& s = by_batch[r.batch];
    s.label = "batch " + std::to_string(r.batch);
    s.mark = Mark::kPoints;
    s.x.push_back(r.predicted_saving_pct);
    s.y.push_back(r.saving_pct);
    s.low.push_back(r.saving_low);
    s.high.push_back(r.saving_high);
    s.notes.push_back(r.model + "/" + r.corpus);
    lo = std::min({lo, r.predicted_saving_pct, r.saving_low});
    hi = std::max({hi, r.predicted_saving_pct, r.saving_high});
  }
  if (by_batch.empty()) return;
  SvgChart chart("Routed decoding: measured against predicted saving", "predicted saving % (bytes read per step)",
                 "measured saving % (95% interval)");
  for (auto& [batch, s] : by_batch) chart.add_series(std::move(s));
  ChartSeries diagonal;
  diagonal.label = "measured = predicted";
  diagonal.x = {lo, hi};
  diagonal.y = {lo, hi};
  chart.add_series(std::move(diagonal));
  chart.add_reference({.label = "no saving", .y = 0});
  out->push_back({"speed_decode_predicted_vs_measured", chart.render(),
                  "Routed decoding: measured against predicted saving",
                  "One point per model and corpus, a series per batch size; bars are 95% intervals over paired "
                  "repeats (measurements of fewer than 5 pairs are left out). On the line, the bytes each decode "
                  "step reads predict its time.",
                  "", ""});
}

void decode_findings(const TableSet& tables, std::vector<Finding>* out) {
  for (const auto& r : decode_rows(tables)) {
    const std::string topic = "decode saving, batch " + std::to_string(r.batch);
    const std::string where = r.machine + ", " + r.device + " " + r.dtype + ", load " + num(r.load_before, 3);
    if (r.pairs < kMinPairsStated) {
      out->push_back({r.model, r.corpus, topic,
                      "not stated: " + std::to_string(r.pairs) + " paired repeats (fewer than " +
                          std::to_string(kMinPairsStated) + "); bytes predict " + pct(r.predicted_saving_pct) + "%"});
      continue;
    }
    const bool zero = r.saving_low <= 0 && r.saving_high >= 0;
    out->push_back({r.model, r.corpus, topic,
                    (zero ? "no saving shown † " : "saving ") + pct(r.saving_pct) + "% [" + pct(r.saving_low) + ", " +
                        pct(r.saving_high) + "] over " + std::to_string(r.pairs) + " paired repeats, bytes predict " +
                        pct(r.predicted_saving_pct) + "%; routed text PPL " + signed2(r.text_delta_pct) + "%; " +
                        where});
  }
}

const SectionRegistrar kSpeedDecodeSection{{"speed_decode", 66, decode_tables, decode_figures, decode_findings}};

}  // namespace
}  // namespace linsweep
