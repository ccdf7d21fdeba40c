// Paper-style summary tables from a store's results, as Markdown, CSV and LaTeX.
#pragma once

#include <string>
#include <vector>

#include "storage/table.hpp"

namespace linsweep {

class Store;

// A rendered summary: a title, headers and string cells (already formatted).
struct ReportTable {
  std::string name;   // file stem, e.g. "all_linear_extremes"
  std::string title;  // one line
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;
  std::string note;   // footnote (e.g. the mark for intervals containing zero)
};

// Builds every summary that the store has rows for (DESIGN §7): all-linear cost per layer
// (cheapest and most expensive layer per model and corpus, then every layer with one column
// per corpus), the cross-model gating summary
// (base PPL, layers, best layer = smallest Δ% with its chosen gate, that gate, average share
// routed linear over the chosen gates; omitted when no row marks a chosen gate), every gate per layer, token-vs-context AUCs with ‖e‖,
// ‖c‖ and their cosine, routing-list transfer, residual clusters, compound gating,
// progressive linearization (PPL and Δ% per eval corpus after each layer), fine-tuning (each
// variant's last evaluation beside the control's, a ‡ where the control matches or beats a
// claimed improvement) and the two-phase gates' effective linearization per layer. Every
// measured Δ% carries its interval and a † when the interval contains zero (training Δ% are
// single runs without intervals). Tables without rows are omitted.
std::vector<ReportTable> build_report(const Store& store);

std::string render_markdown(const std::vector<ReportTable>& tables);
std::string render_latex(const std::vector<ReportTable>& tables);
std::string render_csv(const ReportTable& table);

// What write_report wrote.
struct ReportFiles {
  std::string markdown;            // the Markdown of every table
  std::vector<std::string> files;  // tables.md, tables.tex, then csv/<name>.csv per table
  std::size_t tables = 0;
};

// Writes `out_dir`/tables.md, tables.tex and csv/<name>.csv for `tables` (each atomically;
// out_dir and csv/ are created). Throws StorageError when a directory or file cannot be made.
ReportFiles write_report(const std::vector<ReportTable>& tables, const std::string& out_dir);

}  // namespace linsweep
