// index.html: the findings, contents, the paper's figures, the tables, a part per model, provenance.
#include "presentation/report_html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <map>

#include "common/atomic_file.hpp"
#include "common/shell_word.hpp"
#include "presentation/cells.hpp"
#include "presentation/figures.hpp"
#include "presentation/findings.hpp"
#include "presentation/setting_comparison.hpp"
#include "presentation/svg_text.hpp"
#include "storage/store.hpp"
#include "storage/units_table.hpp"

namespace linsweep {
namespace {

constexpr const char* kStyle = R"css(
:root { color-scheme: light; }
body { font-family: "DejaVu Sans", Arial, Helvetica, sans-serif; margin: 0; color: #1d1d1d; background: #f7f7f7;
       line-height: 1.45; }
header, nav, main { max-width: 1180px; margin: 0 auto; padding: 0 20px; box-sizing: border-box; }
header { padding-top: 14px; }
main nav { padding: 0; }
h1 { font-size: 1.6em; margin: .4em 0 .2em; }
h2 { font-size: 1.3em; border-bottom: 2px solid #0072B2; padding-bottom: 3px; margin-top: 1.8em; }
h3 { font-size: 1.08em; margin: 1.2em 0 .4em; }
a { color: #005a8c; }
nav ol { margin: .3em 0; padding-left: 1.4em; }
nav > ol > li { margin: .25em 0; }
nav li li { font-size: .92em; }
@media (min-width: 900px) { nav ol ol { columns: 2; column-gap: 2.5em; } }
figure { margin: 1em 0; background: #fff; border: 1px solid #dcdcdc; padding: 10px; box-sizing: border-box; }
figure svg { display: block; max-width: 100%; height: auto; }
figcaption { font-size: .9em; color: #3a3a3a; margin-top: .5em; }
div.wide { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; width: 100%; font-size: .84em; background: #fff; margin: .3em 0; }
th, td { border: 1px solid #d6d6d6; padding: 3px 6px; text-align: left; vertical-align: top; overflow-wrap: normal;
         word-break: normal; hyphens: none; }
th { background: #eef2f6; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
span.nw { white-space: nowrap; }
#headlines { padding-left: 1.3em; max-width: 70em; }
#headlines li { margin: .4em 0; }
#findings table { font-size: .9em; }
#findings td:nth-child(-n+2) { font-weight: bold; white-space: nowrap; }
.links, .note { font-size: .88em; color: #444; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #fff; border: 1px solid #dcdcdc; padding: 8px;
      font-size: .82em; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; }
dl.facts dt { font-weight: bold; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
details { margin: .6em 0; }
details > summary { cursor: pointer; font-weight: bold; }
.empty { color: #666; font-style: italic; }
)css";

std::string esc(const std::string& s) { return xml_escape(s); }

// A cell that reads as a number ("+1.23 [..]", "12.3", "n/a") is right-aligned.
bool numeric_cell(const std::string& c) {
  return !c.empty() && (std::isdigit(static_cast<unsigned char>(c[0])) || c[0] == '+' || c[0] == '-' || c == "n/a");
}

// A cell's text, escaped, with every piece between spaces that may hold a line-break opportunity
// of its own kept on one line. Only a run of ASCII letters and digits has none (no hyphenation);
// punctuation ("gpt2-m", "-0.03", "a={b:") and non-ASCII text (CJK breaks between characters)
// may, so such a piece is wrapped in a no-wrap span.
std::string cell_html(const std::string& text) {
  std::string o, piece;
  const auto flush = [&] {
    const bool breakable = std::any_of(piece.begin(), piece.end(), [](char c) {
      return !std::isalnum(static_cast<unsigned char>(c)) || static_cast<unsigned char>(c) >= 0x80;
    });
    o += breakable ? "<span class=\"nw\">" + esc(piece) + "</span>" : esc(piece);
    piece.clear();
  };
  for (char c : text) {
    if (c == ' ' || c == '\n') {
      flush();
      o += c;
    } else {
      piece += c;
    }
  }
  flush();
  return o;
}

// `numbers_right`: cells that read as numbers are right-aligned (not in prose tables).
std::string html_table(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows,
                       bool numbers_right = true) {
  // Cells break only between words; a table wider than the page scrolls inside its box.
  std::string o = "<div class=\"wide\">\n<table>\n<thead><tr>";
  for (const auto& h : headers) o += "<th>" + cell_html(h) + "</th>";
  o += "</tr></thead>\n<tbody>\n";
  for (const auto& r : rows) {
    o += "<tr>";
    for (const auto& c : r)
      o += (numbers_right && numeric_cell(c) ? "<td class=\"num\">" : "<td>") + cell_html(c) + "</td>";
    o += "</tr>\n";
  }
  return o + "</tbody>\n</table>\n</div>\n";
}

std::string store_table(const Table& t) {
  std::vector<std::string> headers;
  for (const auto& c : t.columns) headers.push_back(c.name);
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : t.rows) {
    std::vector<std::string> cells;
    for (const auto& v : r) cells.push_back(value_to_string(v));
    rows.push_back(std::move(cells));
  }
  return html_table(headers, rows);
}

std::string duration_text(double s) {
  if (s < 120) return fmt::format("{:.1f} s", s);
  if (s < 7200) return fmt::format("{:.1f} min", s / 60);
  return fmt::format("{:.1f} h", s / 3600);
}

// Every planning of the sweep with its spec file and overrides, and each distinct spec text
// (overrides applied) once, naming the plannings that used it.
std::string plans_html(const Provenance& p) {
  std::string o = "<h3 id=\"provenance-runs\">Runs: each planning's spec and overrides</h3>\n";
  if (p.plans.empty()) return o + "<p class=\"empty\">no planning recorded</p>\n";
  std::vector<std::vector<std::string>> rows;
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> texts;  // in order of first use
  for (const auto& r : p.plans) {
    std::string overrides;
    for (const auto& v : r.overrides) overrides += (overrides.empty() ? "" : " ") + shell_word(v);
    rows.push_back({std::to_string(r.seq), utc_time(r.time), r.command, r.spec.empty() ? "not recorded" : r.spec,
                    overrides.empty() ? "none" : overrides, std::to_string(r.slots.size())});
    if (r.spec_text.empty()) continue;
    auto it = std::find_if(texts.begin(), texts.end(), [&](const auto& t) { return t.first == r.spec_text; });
    if (it == texts.end()) texts.push_back({r.spec_text, {}}), it = texts.end() - 1;
    it->second.push_back(r.seq);
  }
  o += html_table({"planning", "time", "command", "spec", "overrides", "units planned"}, rows);
  for (const auto& [text, seqs] : texts) {
    std::string which;
    for (std::int64_t q : seqs) which += (which.empty() ? "" : ", ") + std::to_string(q);
    o += "<details class=\"planned-spec\"><summary>The spec as planning " + which +
         " read it, overrides applied</summary>\n<pre>" + esc(text) + "</pre>\n</details>\n";
  }
  return o;
}

std::string provenance_html(const Provenance& p, double now) {
  const StoreStatus& st = p.status;
  int failed = 0, unfinished = 0;
  for (const auto& [k, c] : st.by_kind) failed += c.failed, unfinished += c.unfinished;
  std::string o = "<section id=\"provenance\">\n<h2>Provenance</h2>\n<dl class=\"facts\">\n";
  auto fact = [&](const std::string& k, const std::string& v) { o += "<dt>" + esc(k) + "</dt><dd>" + v + "</dd>\n"; };
  fact("store", esc(p.store));
  fact("report written", esc(utc_time(now)) + " by linsweep " + esc(p.written_by));
  fact("spec",
       p.spec_path.empty() ? "<span class=\"empty\">not recorded (no readable run.json)</span>" : esc(p.spec_path));
  if (!p.overrides.empty()) {
    std::string list;
    for (const auto& v : p.overrides) list += (list.empty() ? "" : " ") + esc(v);
    fact("overrides", "<code>" + list + "</code>");
  }
  fact("units", fmt::format("{} committed, {} failed, {} unfinished", st.committed(), failed, unfinished));
  if (!p.precision.empty()) {
    std::string lines;
    for (const auto& line : p.precision) lines += (lines.empty() ? "" : "<br>") + esc(line);
    fact("precision", lines);
  }
  if (st.first_event > 0)
    fact("journal", esc(utc_time(st.first_event)) + " to " + esc(utc_time(st.last_event)) + " (" +
                        esc(duration_text(st.last_event - st.first_event)) + ")");
  o += "</dl>\n<h3 id=\"provenance-experiments\">Units by experiment</h3>\n";
  std::vector<std::vector<std::string>> kinds;
  for (const auto& [k, c] : st.by_kind)
    kinds.push_back({k, std::to_string(c.committed), std::to_string(c.failed), std::to_string(c.unfinished),
                     fmt::format("{:.1f}", c.seconds), fmt::format("{:.0f}", c.tokens_per_second())});
  o += kinds.empty() ? "<p class=\"empty\">no units</p>\n"
                     : html_table({"experiment", "committed", "failed", "unfinished", "seconds", "tokens/s"}, kinds);
  o += "<h3 id=\"provenance-hosts\">Hosts</h3>\n";
  std::vector<std::vector<std::string>> hosts;
  for (const auto& h : p.hosts)
    hosts.push_back({h.host, std::to_string(h.committed), utc_time(h.first), utc_time(h.last)});
  o += hosts.empty() ? "<p class=\"empty\">the journal records no committed unit</p>\n"
                     : html_table({"host", "units committed", "first commit", "last commit"}, hosts);
  o += "<h3 id=\"provenance-failures\">Failures</h3>\n";
  if (st.failures.empty()) o += "<p>none: every unit whose last event is known committed or is still unfinished</p>\n";
  for (const auto& f : st.failures)
    o += fmt::format("<p><code>{}</code> on {} rank {} after {} attempts:</p>\n<pre>{}</pre>\n", esc(f.unit),
                     esc(f.host), f.rank, f.attempts, esc(f.error));
  if (p.units) {
    o += "<details id=\"provenance-units\"><summary>Every unit: version, host and times (" +
         std::to_string(p.units->rows.size()) + ")</summary>\n" + store_table(*p.units) + "</details>\n";
  }
  o += plans_html(p);
  if (!p.spec_text.empty())
    o += "<details id=\"provenance-spec\"><summary>spec.yaml, as written when the store was created</summary>\n<pre>" +
         esc(p.spec_text) + "</pre>\n</details>\n";
  return o + "</section>\n";
}

// The summary that opens the report: the sentences that state the results, each (model,
// corpus) row's findings, then the note on how they were chosen.
std::string findings_html(const std::vector<std::string>& headlines, const ReportTable& findings) {
  std::string o = "<section id=\"findings\">\n<h2>Findings</h2>\n";
  if (!headlines.empty()) {
    o += "<ul id=\"headlines\">\n";
    for (const auto& h : headlines) o += "<li>" + esc(h) + "</li>\n";
    o += "</ul>\n";
  }
  if (findings.rows.empty())
    return o + "<p class=\"empty\">No experiment with a summary has results in this store yet.</p>\n</section>\n";
  o += "<h3 id=\"findings-table\">Per model and corpus</h3>\n<p class=\"links\"><a href=\"csv/findings.csv\">CSV</a> "
       "· the tables and figures below hold every number</p>\n";
  o += html_table(findings.headers, findings.rows, /*numbers_right=*/false);
  return o + "<p class=\"note\">" + esc(findings.note) + "</p>\n</section>\n";
}

std::string figure_id(const Figure& f) { return "fig-" + f.stem; }

std::string figure_html(const Figure& f) {
  std::string o = "<figure id=\"" + figure_id(f) + "\">\n<h3>" + (f.paper.empty() ? "" : esc(f.paper) + " · ") +
                  esc(f.title) + "</h3>\n" + f.svg;
  o += "<figcaption>" + esc(f.caption) + (f.caption.empty() ? "" : " ") + "<a href=\"figures/" + f.stem +
       ".svg\">SVG</a></figcaption>\n</figure>\n";
  return o;
}

std::string table_html(const ReportTable& t) {
  std::string o = "<h3 id=\"table-" + t.name + "\">" + esc(t.title) + "</h3>\n<p class=\"links\"><a href=\"csv/" +
                  t.name + ".csv\">CSV</a>" + (t.paper.empty() ? "" : " · the paper's " + esc(t.paper)) + " · " +
                  std::to_string(t.rows.size()) + (t.rows.size() == 1 ? " row" : " rows") + "</p>\n";
  o += html_table(t.headers, t.rows);
  if (!t.note.empty()) o += "<p class=\"note\">" + esc(t.note) + "</p>\n";
  return o;
}

// The figures in report order: the paper's by figure number, each model's, the rest.
struct Arrangement {
  std::vector<const Figure*> paper, other;
  std::map<std::string, std::vector<const Figure*>> by_model;
};
Arrangement arrange(const std::vector<Figure>& figures) {
  Arrangement a;
  for (const auto& f : figures) {
    if (!f.paper.empty())
      a.paper.push_back(&f);
    else if (!f.model.empty())
      a.by_model[f.model].push_back(&f);
    else
      a.other.push_back(&f);
  }
  std::stable_sort(a.paper.begin(), a.paper.end(),
                   [](const Figure* x, const Figure* y) { return x->paper < y->paper; });
  return a;
}

std::string contents_html(const Arrangement& a, const std::vector<ReportTable>& tables) {
  std::string o = "<nav id=\"contents\">\n<h2>Contents</h2>\n<ol>\n<li><a href=\"#findings\">Findings</a></li>\n";
  auto list = [&](const std::vector<const Figure*>& figs, bool with_paper) {
    o += "<ol>\n";
    for (const Figure* f : figs)
      o += "<li><a href=\"#" + figure_id(*f) + "\">" + (with_paper ? esc(f->paper) + " · " : "") + esc(f->title) +
           "</a></li>\n";
    o += "</ol>\n";
  };
  if (!a.paper.empty()) {
    o += "<li><a href=\"#paper-figures\">The paper's figures</a>\n";
    list(a.paper, true);
    o += "</li>\n";
  }
  for (const bool diagnostic : {false, true}) {
    std::string items;
    for (const auto& t : tables)
      if (t.diagnostic == diagnostic) items += "<li><a href=\"#table-" + t.name + "\">" + esc(t.title) + "</a></li>\n";
    if (!items.empty())
      o += std::string(diagnostic ? "<li><a href=\"#diagnostics\">Diagnostics</a>\n"
                                  : "<li><a href=\"#tables\">Tables</a>\n") +
           "<ol>\n" + items + "</ol>\n</li>\n";
  }
  if (!a.by_model.empty()) {
    o += "<li><a href=\"#models\">Per model</a>\n<ol>\n";
    for (const auto& [model, figs] : a.by_model)
      o += "<li><a href=\"#model-" + safe_name(model) + "\">" + esc(model) + "</a></li>\n";
    o += "</ol>\n</li>\n";
  }
  if (!a.other.empty()) {
    o += "<li><a href=\"#more-figures\">More figures</a>\n";
    list(a.other, false);
    o += "</li>\n";
  }
  return o + "<li><a href=\"#provenance\">Provenance</a></li>\n</ol>\n</nav>\n";
}

std::string models_html(const Arrangement& a) {
  std::string o = "<section id=\"models\">\n<h2>Per model</h2>\n";
  for (const auto& [model, figs] : a.by_model) {
    o += "<section id=\"model-" + safe_name(model) + "\">\n<h3>" + esc(model) + "</h3>\n";
    std::vector<const Figure*> folded;
    for (const Figure* f : figs)
      if (f->folded)
        folded.push_back(f);
      else
        o += figure_html(*f);
    if (!folded.empty()) {
      o += "<details><summary>" + esc(folded.front()->title.substr(0, folded.front()->title.find(':'))) + " (" +
           std::to_string(folded.size()) + ")</summary>\n";
      for (const Figure* f : folded) o += figure_html(*f);
      o += "</details>\n";
    }
    o += "</section>\n";
  }
  return o + "</section>\n";
}

}  // namespace

std::string render_html(const Provenance& provenance, const std::vector<std::string>& headlines,
                        const ReportTable& findings, const std::vector<ReportTable>& tables,
                        const std::vector<Figure>& figures, double now) {
  const Arrangement a = arrange(figures);
  std::string o =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<link rel=\"icon\" href=\"data:,\">\n<title>linsweep report: " +
      esc(provenance.store) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  o += "<header>\n<h1>linsweep report</h1>\n<p>Where transformer MLP nonlinearity is needed: the results of <code>" +
       esc(provenance.store) + "</code>, every table and figure of the paper for which the store has data.</p>\n";
  if (!provenance.precision.empty()) {
    std::string lines;
    for (const auto& line : provenance.precision) lines += (lines.empty() ? ": " : "; ") + esc(line);
    o += "<p class=\"precision\">Every number below was computed in this precision" + lines + ".</p>\n";
  }
  o += "</header>\n";
  o += "<main>\n" + findings_html(headlines, findings) + contents_html(a, tables);
  if (tables.empty() && figures.empty()) o += "<p class=\"empty\">The store has no result rows yet.</p>\n";
  if (!a.paper.empty()) {
    o += "<section id=\"paper-figures\">\n<h2>The paper's figures</h2>\n";
    for (const Figure* f : a.paper) o += figure_html(*f);
    o += "</section>\n";
  }
  for (const bool diagnostic : {false, true}) {
    std::string body;
    for (const auto& t : tables)
      if (t.diagnostic == diagnostic) body += table_html(t);
    if (!body.empty())
      o += std::string(diagnostic ? "<section id=\"diagnostics\">\n<h2>Diagnostics</h2>\n<p class=\"note\">Checks "
                                    "of the method, not results: each compares runs that should agree.</p>\n"
                                  : "<section id=\"tables\">\n<h2>Tables</h2>\n") +
           body + "</section>\n";
  }
  if (!a.by_model.empty()) o += models_html(a);
  if (!a.other.empty()) {
    o += "<section id=\"more-figures\">\n<h2>More figures</h2>\n";
    for (const Figure* f : a.other) o += figure_html(*f);
    o += "</section>\n";
  }
  return o + provenance_html(provenance, now) + "</main>\n</body>\n</html>\n";
}

HtmlReportFiles write_html_report(const Store& store, const std::string& out_dir, const std::string& version) {
  const TableSet all = store.read_tables();  // every unit file read once, before anything is written
  std::string shown;                         // a sweep's settings: the one the sections show
  const TableSet tables = filter_to_one_setting(all, &shown);
  std::vector<ReportTable> report = build_report(tables);
  if (!shown.empty()) report.push_back(settings_table(compare_settings(store, all.at(units_table().name())), shown));
  ReportTable findings = findings_table(collect_findings(tables));
  if (!shown.empty() && !findings.rows.empty())
    findings.note += " The page shows setting " + shown +
                     " of the sweep; the table \"Settings side by side\" (under Diagnostics) compares every setting.";
  const std::vector<Figure> figures = build_figures(tables, store);
  Provenance provenance = read_provenance(store, all);
  provenance.written_by = version;
  const std::string html = render_html(provenance, collect_headlines(tables), findings, report, figures,
                                       static_cast<double>(std::time(nullptr)));
  HtmlReportFiles out;
  if (!findings.rows.empty()) report.insert(report.begin(), findings);  // first in tables.md and csv/ too
  const ReportFiles written = write_report(report, out_dir);            // tables.md, tables.tex, csv/
  make_output_dir(out_dir + "/figures");
  out.index = out_dir + "/index.html";
  out.files.push_back(out.index);
  out.files.insert(out.files.end(), written.files.begin(), written.files.end());
  for (const auto& f : figures) {
    out.svg.push_back(out_dir + "/figures/" + f.stem + ".svg");
    out.files.push_back(out.svg.back());
    atomic_write_text(out.svg.back(), f.svg);
  }
  out.markdown = written.markdown;
  atomic_write_text(out.index, html);
  out.tables = report.size();
  out.figures = figures.size();
  return out;
}

}  // namespace linsweep
