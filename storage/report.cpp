// Summary tables.
#include "storage/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "storage/query.hpp"
#include "storage/store.hpp"

namespace linsweep {
namespace {

// Typed accessors for a row of a known table.
struct Rows {
  const Table& t;
  std::string s(const Row& r, const char* c) const { return std::get<std::string>(r[idx(c)]); }
  std::int64_t i(const Row& r, const char* c) const { return std::get<std::int64_t>(r[idx(c)]); }
  double f(const Row& r, const char* c) const { return std::get<double>(r[idx(c)]); }
  std::size_t idx(const char* c) const { return static_cast<std::size_t>(t.column_index(c)); }
};

std::string num(double v, int digits = 4) { return std::isfinite(v) ? fmt::format("{:.{}g}", v, digits) : "n/a"; }

// "+1.23 [0.50, 2.10]" with † when the interval contains zero.
std::string delta(double d, double lo, double hi) {
  const bool zero = lo <= 0 && hi >= 0;
  return fmt::format("{:+.2f} [{:+.2f}, {:+.2f}]{}", d, lo, hi, zero ? " †" : "");
}

constexpr const char* kZeroNote = "† the 95% bootstrap interval contains zero";

using Tables = std::map<std::string, Table>;

void all_linear(const Tables& tables, std::vector<ReportTable>* out) {
  const Table& t = tables.at("all_linear");
  if (t.rows.empty()) return;
  Rows a{t};
  std::map<std::pair<std::string, std::string>, std::vector<const Row*>> groups;
  for (const auto& r : t.rows) groups[{a.s(r, "model"), a.s(r, "corpus")}].push_back(&r);
  ReportTable rt{"all_linear_extremes", "All-linear cost per layer: cheapest and most expensive layer",
                 {"model", "corpus", "layers", "base PPL", "cheapest layer", "Δ% [95% CI]", "most expensive layer", "Δ% [95% CI]"},
                 {}, kZeroNote};
  for (const auto& [key, rows] : groups) {
    auto by = [&](const Row* x, const Row* y) { return a.f(*x, "delta_pct") < a.f(*y, "delta_pct"); };
    const Row& lo = **std::min_element(rows.begin(), rows.end(), by);
    const Row& hi = **std::max_element(rows.begin(), rows.end(), by);
    rt.rows.push_back({key.first, key.second, std::to_string(rows.size()), num(a.f(lo, "ppl_base"), 6),
                       std::to_string(a.i(lo, "layer")), delta(a.f(lo, "delta_pct"), a.f(lo, "ci_low"), a.f(lo, "ci_high")),
                       std::to_string(a.i(hi, "layer")), delta(a.f(hi, "delta_pct"), a.f(hi, "ci_low"), a.f(hi, "ci_high"))});
  }
  out->push_back(std::move(rt));
}

void gating(const Tables& tables, std::vector<ReportTable>* out) {
  const Table& g = tables.at("gates");
  if (g.rows.empty()) return;
  const Table& al = tables.at("all_linear");
  Rows a{g}, b{al};
  std::map<std::string, double> base;
  for (const auto& r : al.rows) base[b.s(r, "model")] = b.f(r, "ppl_base");
  std::map<std::string, std::vector<const Row*>> by_model;
  for (const auto& r : g.rows) by_model[a.s(r, "model")].push_back(&r);
  ReportTable rt{"gating_summary", "Gating summary per model",
                 {"model", "base PPL", "layers", "best layer", "best gate", "Δ% [95% CI]", "avg % routed linear"}, {}, kZeroNote};
  for (const auto& [model, rows] : by_model) {
    std::set<std::int64_t> layers;
    double share = 0;
    for (const Row* r : rows) layers.insert(a.i(*r, "layer")), share += a.f(*r, "pct_linear");
    const Row& best = **std::min_element(rows.begin(), rows.end(), [&](const Row* x, const Row* y) {
      return a.f(*x, "delta_pct") < a.f(*y, "delta_pct");
    });
    rt.rows.push_back({model, base.count(model) ? num(base[model], 6) : "n/a", std::to_string(layers.size()),
                       std::to_string(a.i(best, "layer")), a.s(best, "gate"),
                       delta(a.f(best, "delta_pct"), a.f(best, "ci_low"), a.f(best, "ci_high")),
                       num(share / static_cast<double>(rows.size()), 3)});
  }
  out->push_back(std::move(rt));
}

// A pivot of token_context: one row per (model, layer), one column per variant.
void token_context(const Tables& tables, std::vector<ReportTable>* out) {
  const Table& t = tables.at("token_context");
  if (t.rows.empty()) return;
  Rows a{t};
  std::vector<std::string> variants;
  std::map<std::pair<std::string, std::int64_t>, std::map<std::string, double>> cells;
  for (const auto& r : t.rows) {
    const std::string v = a.s(r, "variant");
    if (std::find(variants.begin(), variants.end(), v) == variants.end()) variants.push_back(v);
    cells[{a.s(r, "model"), a.i(r, "layer")}][v] = a.f(r, "auc");
  }
  ReportTable rt{"token_context", "Gate AUC on X, on the token component e, on the context component c", {"model", "layer"}, {}, ""};
  for (const auto& v : variants) rt.headers.push_back("AUC " + v);
  for (const auto& [key, m] : cells) {
    std::vector<std::string> row = {key.first, std::to_string(key.second)};
    for (const auto& v : variants) row.push_back(m.count(v) ? num(m.at(v), 3) : "");
    rt.rows.push_back(std::move(row));
  }
  out->push_back(std::move(rt));
}

// Tables whose rows are reported as they are, with chosen columns and titles.
void plain(const Tables& tables, const char* table, const char* name, const char* title, std::vector<ReportTable>* out) {
  const Table& t = tables.at(table);
  if (t.rows.empty()) return;
  ReportTable rt{name, title, {}, {}, ""};
  for (const auto& c : t.columns)
    if (c.name != "unit") rt.headers.push_back(c.name);
  for (const auto& r : t.rows) {
    std::vector<std::string> row;
    for (std::size_t c = 0; c < t.columns.size(); ++c)
      if (t.columns[c].name != "unit") row.push_back(value_to_string(r[c]));
    rt.rows.push_back(std::move(row));
  }
  out->push_back(std::move(rt));
}

std::string latex_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': case '%': case '$': case '#': case '_': case '{': case '}': o += '\\'; o += c; break;
      case '~': o += "\\textasciitilde{}"; break;
      case '^': o += "\\textasciicircum{}"; break;
      case '\\': o += "\\textbackslash{}"; break;
      default: o += c;
    }
  }
  // UTF-8 symbols used in headers and cells.
  std::string r;
  for (std::size_t i = 0; i < o.size();) {
    if (o.compare(i, 2, "Δ") == 0) r += "$\\Delta$", i += 2;
    else if (o.compare(i, 3, "†") == 0) r += "$^\\dagger$", i += 3;
    else r += o[i++];
  }
  return r;
}

// Keeps the † footnote only on tables that use the mark.
void drop_unused_notes(std::vector<ReportTable>* tables) {
  for (auto& t : *tables) {
    if (t.note != kZeroNote) continue;
    bool used = false;
    for (const auto& r : t.rows)
      for (const auto& c : r) used = used || c.find("†") != std::string::npos;
    if (!used) t.note.clear();
  }
}

}  // namespace

std::vector<ReportTable> build_report(const Store& store) {
  const Tables tables = store.read_tables();  // every unit file read once
  std::vector<ReportTable> out;
  all_linear(tables, &out);
  gating(tables, &out);
  token_context(tables, &out);
  plain(tables, "nofly", "routing_lists", "Routing-list (No-Fly) transfer across corpora", &out);
  plain(tables, "clusters", "clusters", "Residual clusters: PCA(50) + k-means(20)", &out);
  plain(tables, "compound", "compound", "Compound gating: every layer's chosen gate at once", &out);
  plain(tables, "progressive", "progressive", "Progressive linearization steps", &out);
  plain(tables, "finetune", "finetune", "Fine-tuning variants and the control", &out);
  drop_unused_notes(&out);
  return out;
}

std::string render_markdown(const std::vector<ReportTable>& tables) {
  std::string out;
  for (const auto& t : tables) {
    out += "## " + t.title + "\n\n|";
    for (const auto& h : t.headers) out += " " + h + " |";
    out += "\n|";
    for (std::size_t i = 0; i < t.headers.size(); ++i) out += "---|";
    out += "\n";
    for (const auto& r : t.rows) {
      out += "|";
      for (const auto& c : r) out += " " + c + " |";
      out += "\n";
    }
    if (!t.note.empty()) out += "\n" + t.note + "\n";
    out += "\n";
  }
  return out;
}

std::string render_latex(const std::vector<ReportTable>& tables) {
  std::string out = "% Generated by linsweep tables; \\usepackage{booktabs}\n";
  for (const auto& t : tables) {
    out += "\\begin{table}[t]\n\\centering\n\\caption{" + latex_escape(t.title) + "}\n\\begin{tabular}{" +
           std::string(t.headers.size(), 'l') + "}\n\\toprule\n";
    for (std::size_t i = 0; i < t.headers.size(); ++i) out += (i ? " & " : "") + latex_escape(t.headers[i]);
    out += " \\\\\n\\midrule\n";
    for (const auto& r : t.rows) {
      for (std::size_t i = 0; i < r.size(); ++i) out += (i ? " & " : "") + latex_escape(r[i]);
      out += " \\\\\n";
    }
    out += "\\bottomrule\n\\end{tabular}\n";
    if (!t.note.empty()) out += "\\\\[2pt]{\\footnotesize " + latex_escape(t.note) + "}\n";
    out += "\\end{table}\n\n";
  }
  return out;
}

std::string render_csv(const ReportTable& t) {
  std::string out;
  for (std::size_t i = 0; i < t.headers.size(); ++i) out += (i ? "," : "") + csv_field(t.headers[i]);
  out += "\n";
  for (const auto& r : t.rows) {
    for (std::size_t i = 0; i < r.size(); ++i) out += (i ? "," : "") + csv_field(r[i]);
    out += "\n";
  }
  return out;
}

}  // namespace linsweep
