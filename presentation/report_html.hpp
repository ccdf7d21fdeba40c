// The HTML report (`linsweep report`): one self-contained index.html with every summary table
// and figure of a store, the provenance of its results and a table of contents; beside it the
// tables as CSV (linked from the page) and Markdown/LaTeX, and the figures as SVG files.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "presentation/provenance.hpp"
#include "presentation/report.hpp"
#include "presentation/section.hpp"

namespace linsweep {

class Store;

// The page: the SVG figures and the stylesheet inline, no script and no external resource, so
// that it reads the same from a file, a web server or an e-mail attachment. Tables link to
// `csv/<name>.csv`, figures to `figures/<stem>.svg` (relative). `now` is printed as the time
// the report was written (seconds since the epoch). The page opens with `headlines` (one
// sentence each) and `findings` (presentation/findings.hpp), then the contents, the paper's
// figures, the tables (those marked `diagnostic` in a section after the others), each model's
// figures and the other figures; the provenance comes last.
std::string render_html(const Provenance& provenance, const std::vector<std::string>& headlines,
                        const ReportTable& findings, const std::vector<ReportTable>& tables,
                        const std::vector<Figure>& figures, double now);

struct HtmlReportFiles {
  std::string index;               // out_dir/index.html
  std::vector<std::string> files;  // every file written, index.html first
  std::vector<std::string> svg;    // the figures' files (also in `files`)
  std::string markdown;            // the tables as Markdown (tables.md)
  std::size_t tables = 0, figures = 0;
};

// Reads the store once (tables, shards, journal, run.json, spec.yaml), then writes
// out_dir/index.html, tables.md, tables.tex, csv/<table>.csv and figures/<stem>.svg (each
// atomically; directories created). `version` is the linsweep that writes the report. Throws
// StorageError on a damaged store (before anything is written) or a failed write.
HtmlReportFiles write_html_report(const Store& store, const std::string& out_dir, const std::string& version);

}  // namespace linsweep
