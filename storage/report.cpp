// Summary tables.
#include "storage/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "common/errors.hpp"
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

// Every layer's all-linear Δ% with its interval, one column per corpus (corpora in name order).
void all_linear_per_layer(const Tables& tables, std::vector<ReportTable>* out) {
  const Table& t = tables.at("all_linear");
  if (t.rows.empty()) return;
  Rows a{t};
  std::set<std::string> corpora;
  std::map<std::pair<std::string, std::int64_t>, std::map<std::string, const Row*>> cells;
  for (const auto& r : t.rows) {
    corpora.insert(a.s(r, "corpus"));
    cells[{a.s(r, "model"), a.i(r, "layer")}][a.s(r, "corpus")] = &r;
  }
  ReportTable rt{"all_linear_per_layer", "All-linear cost of every layer: Δ% PPL with the layer's MLP replaced by its surrogate",
                 {"model", "layer"}, {}, kZeroNote};
  for (const auto& c : corpora) rt.headers.push_back("Δ% " + c + " [95% CI]");
  for (const auto& [key, by_corpus] : cells) {
    std::vector<std::string> row = {key.first, std::to_string(key.second)};
    for (const auto& c : corpora) {
      auto it = by_corpus.find(c);
      row.push_back(it == by_corpus.end() ? "" : delta(a.f(*it->second, "delta_pct"), a.f(*it->second, "ci_low"), a.f(*it->second, "ci_high")));
    }
    rt.rows.push_back(std::move(row));
  }
  out->push_back(std::move(rt));
}

// Sorts rows by the values of `keys` (strings and integers), for stable report order.
std::vector<const Row*> sorted_rows(const Table& t, std::vector<const char*> keys) {
  std::vector<const Row*> rows;
  for (const auto& r : t.rows) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(), [&](const Row* a, const Row* b) {
    for (const char* k : keys) {
      const auto i = static_cast<std::size_t>(t.column_index(k));
      if ((*a)[i] != (*b)[i]) return (*a)[i] < (*b)[i];
    }
    return false;
  });
  return rows;
}

std::string pct(double v) { return std::isfinite(v) ? fmt::format("{:.1f}", v) : "n/a"; }

// Cross-model summary from each layer's selected gate (chosen on the select split).
void gating(const Tables& tables, std::vector<ReportTable>* out) {
  const Table& g = tables.at("gates");
  if (g.rows.empty()) return;
  Rows a{g};
  std::map<std::pair<std::string, std::string>, std::vector<const Row*>> groups;
  for (const auto& r : g.rows)
    if (a.i(r, "selected") == 1) groups[{a.s(r, "model"), a.s(r, "corpus")}].push_back(&r);
  if (groups.empty()) return;  // rows from before the `selected` column: no choice to summarise
  ReportTable rt{"gating_summary", "Gating summary: each layer's gate chosen on the select split, reported on eval",
                 {"model", "corpus", "base PPL", "layers", "best layer", "best gate", "AUC", "Δ% [95% CI]", "% routed linear",
                  "avg % routed linear"},
                 {}, kZeroNote};
  for (const auto& [key, rows] : groups) {
    double share = 0;
    for (const Row* r : rows) share += a.f(*r, "pct_linear");
    // Best layer: the smallest Δ% with its chosen gate.
    const Row* best = *std::min_element(rows.begin(), rows.end(), [&](const Row* x, const Row* y) { return a.f(*x, "delta_pct") < a.f(*y, "delta_pct"); });
    rt.rows.push_back({key.first, key.second, num(a.f(*best, "ppl_base"), 6), std::to_string(rows.size()),
                       std::to_string(a.i(*best, "layer")), a.s(*best, "gate"), num(a.f(*best, "auc"), 3),
                       delta(a.f(*best, "delta_pct"), a.f(*best, "ci_low"), a.f(*best, "ci_high")), pct(a.f(*best, "pct_linear")),
                       pct(share / static_cast<double>(rows.size()))});
  }
  out->push_back(std::move(rt));
}

// Every gate variant of every layer; the chosen one marked *.
void gates_per_layer(const Tables& tables, std::vector<ReportTable>* out) {
  const Table& g = tables.at("gates");
  if (g.rows.empty()) return;
  Rows a{g};
  ReportTable rt{"gates_per_layer", "Gates per layer (* chosen on the select split; AUC on the gate split's hold-out)",
                 {"model", "corpus", "layer", "gate", "params", "AUC", "select AUC", "% routed linear", "PPL", "Δ% [95% CI]"}, {}, kZeroNote};
  for (const Row* r : sorted_rows(g, {"model", "corpus", "layer"}))
    rt.rows.push_back({a.s(*r, "model"), a.s(*r, "corpus"), std::to_string(a.i(*r, "layer")),
                       a.s(*r, "gate") + (a.i(*r, "selected") == 1 ? " *" : ""), std::to_string(a.i(*r, "params")),
                       num(a.f(*r, "auc"), 3), num(a.f(*r, "select_auc"), 3), pct(a.f(*r, "pct_linear")), num(a.f(*r, "ppl"), 6),
                       delta(a.f(*r, "delta_pct"), a.f(*r, "ci_low"), a.f(*r, "ci_high"))});
  out->push_back(std::move(rt));
}

// A pivot of token_context: one row per (model, corpus, layer), one column per variant.
void token_context(const Tables& tables, std::vector<ReportTable>* out) {
  const Table& t = tables.at("token_context");
  if (t.rows.empty()) return;
  Rows a{t};
  std::vector<std::string> variants;
  struct Cell {
    std::map<std::string, double> auc;
    double e = 0, c = 0, cos = 0;
  };
  std::map<std::tuple<std::string, std::string, std::int64_t>, Cell> cells;
  for (const Row* r : sorted_rows(t, {"model", "corpus", "layer"})) {
    const std::string v = a.s(*r, "variant");
    if (std::find(variants.begin(), variants.end(), v) == variants.end()) variants.push_back(v);
    Cell& c = cells[{a.s(*r, "model"), a.s(*r, "corpus"), a.i(*r, "layer")}];
    c.auc[v] = a.f(*r, "auc");
    c.e = a.f(*r, "e_norm"), c.c = a.f(*r, "c_norm"), c.cos = a.f(*r, "cosine");
  }
  ReportTable rt{"token_context", "Token vs context: gate AUC on X, on the token component e, on the context c = X − e",
                 {"model", "corpus", "layer"}, {}, ""};
  for (const auto& v : variants) rt.headers.push_back("AUC " + v);
  for (const char* h : {"‖e‖", "‖c‖", "cos(e, c)"}) rt.headers.push_back(h);
  for (const auto& [key, c] : cells) {
    std::vector<std::string> row = {std::get<0>(key), std::get<1>(key), std::to_string(std::get<2>(key))};
    for (const auto& v : variants) row.push_back(c.auc.count(v) ? num(c.auc.at(v), 3) : "");
    row.push_back(num(c.e, 3)), row.push_back(num(c.c, 3)), row.push_back(num(c.cos, 3));
    rt.rows.push_back(std::move(row));
  }
  out->push_back(std::move(rt));
}

void routing_lists(const Tables& tables, std::vector<ReportTable>* out) {
  const Table& t = tables.at("nofly");
  if (t.rows.empty()) return;
  Rows a{t};
  ReportTable rt{"routing_lists", "Routing lists (No-Fly): built on the source corpus, tested on the target with a refitted surrogate",
                 {"model", "layer", "source → target", "listed", "found", "still listed", "flipped", "Pearson r"}, {}, ""};
  for (const Row* r : sorted_rows(t, {"model", "layer", "source", "target"}))
    rt.rows.push_back({a.s(*r, "model"), std::to_string(a.i(*r, "layer")), a.s(*r, "source") + " → " + a.s(*r, "target"),
                       std::to_string(a.i(*r, "listed")), std::to_string(a.i(*r, "found")), std::to_string(a.i(*r, "still_listed")),
                       std::to_string(a.i(*r, "flipped")), num(a.f(*r, "pearson_r"), 3)});
  out->push_back(std::move(rt));
}

void clusters(const Tables& tables, std::vector<ReportTable>* out) {
  const Table& t = tables.at("clusters");
  if (t.rows.empty()) return;
  Rows a{t};
  ReportTable rt{"clusters", "Residual clusters: PCA + k-means of X; clean clusters share one label on ≥90% of their rows",
                 {"model", "corpus", "layer", "PCA variance %", "clean clusters", "cluster AUC", "samples"}, {}, ""};
  for (const Row* r : sorted_rows(t, {"model", "corpus", "layer"}))
    rt.rows.push_back({a.s(*r, "model"), a.s(*r, "corpus"), std::to_string(a.i(*r, "layer")), pct(100 * a.f(*r, "pca_var")),
                       std::to_string(a.i(*r, "clean_clusters")) + " / " + std::to_string(a.i(*r, "k")), num(a.f(*r, "cluster_auc"), 3),
                       std::to_string(a.i(*r, "samples"))});
  out->push_back(std::move(rt));
}

void compound(const Tables& tables, std::vector<ReportTable>* out) {
  const Table& t = tables.at("compound");
  if (t.rows.empty()) return;
  Rows a{t};
  ReportTable rt{"compound", "Compound gating: every layer's chosen gate active at once (eval split)",
                 {"model", "corpus", "layers", "base PPL", "PPL", "Δ% [95% CI]", "% routed linear", "MLP FLOPs saved %",
                  "total FLOPs saved %"},
                 {}, kZeroNote};
  for (const Row* r : sorted_rows(t, {"model", "corpus"}))
    rt.rows.push_back({a.s(*r, "model"), a.s(*r, "corpus"), std::to_string(a.i(*r, "layers")), num(a.f(*r, "ppl_base"), 6),
                       num(a.f(*r, "ppl"), 6), delta(a.f(*r, "delta_pct"), a.f(*r, "ci_low"), a.f(*r, "ci_high")),
                       pct(a.f(*r, "pct_linear")), pct(a.f(*r, "mlp_flops_saved_pct")), pct(a.f(*r, "total_flops_saved_pct"))});
  out->push_back(std::move(rt));
}

// Progressive linearization: one line per evaluation (step, layers linearized), PPL and Δ%
// against the untouched model on every eval corpus side by side.
void progressive(const Tables& tables, std::vector<ReportTable>* out) {
  const Table& t = tables.at("progressive");
  if (t.rows.empty()) return;
  Rows a{t};
  std::set<std::string> corpora;
  for (const auto& r : t.rows) corpora.insert(a.s(r, "corpus"));
  ReportTable rt{"progressive", "Progressive linearization: PPL (Δ% vs the untouched model) after each layer",
                 {"model", "step", "linear layers", "layers", "train loss"}, {}, ""};
  for (const auto& c : corpora) rt.headers.push_back(c);
  std::map<std::tuple<std::string, std::int64_t>, std::map<std::string, const Row*>> lines;
  for (const auto& r : t.rows) lines[{a.s(r, "model"), a.i(r, "step")}][a.s(r, "corpus")] = &r;
  for (const auto& [key, by_corpus] : lines) {
    const Row& any = *by_corpus.begin()->second;
    std::vector<std::string> row = {std::get<0>(key), std::to_string(std::get<1>(key)), std::to_string(a.i(any, "n_linear")),
                                    a.s(any, "layers").empty() ? "-" : a.s(any, "layers"), num(a.f(any, "train_loss"))};
    for (const auto& c : corpora) {
      auto it = by_corpus.find(c);
      row.push_back(it == by_corpus.end() ? "" : num(a.f(*it->second, "ppl"), 6) + " (" + fmt::format("{:+.2f}", a.f(*it->second, "delta_pct")) + ")");
    }
    rt.rows.push_back(std::move(row));
  }
  out->push_back(std::move(rt));
}

// Fine-tuning: the last evaluation of every variant beside the control with the same budget.
// A variant that claims an improvement over the untouched model (Δ% < 0) while the control
// does at least as well is marked: the gain comes from the extra training, not from the
// linearization.
constexpr const char* kControlNote = "‡ the control (same steps, nothing linearized) matches or beats this variant";

void finetune(const Tables& tables, std::vector<ReportTable>* out) {
  const Table& t = tables.at("finetune");
  if (t.rows.empty()) return;
  Rows a{t};
  std::map<std::tuple<std::string, std::string, std::string>, const Row*> last;  // (model, corpus, variant) -> last row
  for (const auto& r : t.rows) {
    const Row*& slot = last[{a.s(r, "model"), a.s(r, "corpus"), a.s(r, "variant")}];
    if (slot == nullptr || a.i(r, "step") > a.i(*slot, "step")) slot = &r;
  }
  ReportTable rt{"finetune", "Fine-tuning with one budget: linearized and two-phase variants against the control",
                 {"model", "corpus", "variant", "steps", "linear layers", "base PPL", "PPL", "Δ% vs base", "Δ% vs control"}, {}, ""};
  bool marked = false;
  for (const auto& [key, r] : last) {
    const auto& [model, corpus, variant] = key;
    auto c = last.find({model, corpus, "control"});
    const double ppl = a.f(*r, "ppl");
    std::string vs_control = "n/a", mark;
    if (c != last.end() && variant != "control") {
      const double control = a.f(*c->second, "ppl");
      vs_control = fmt::format("{:+.2f}", 100.0 * (ppl / control - 1.0));
      if (a.f(*r, "delta_pct") < 0 && control <= ppl) mark = " ‡", marked = true;
    } else if (variant == "control") {
      vs_control = "-";
    }
    rt.rows.push_back({model, corpus, variant + mark, std::to_string(a.i(*r, "step")), a.s(*r, "layers").empty() ? "-" : a.s(*r, "layers"),
                       num(a.f(*r, "ppl_base"), 6), num(ppl, 6), fmt::format("{:+.2f}", a.f(*r, "delta_pct")), vs_control});
  }
  if (marked) rt.note = kControlNote;
  out->push_back(std::move(rt));

  const Table& g = tables.at("soft_gates");
  if (g.rows.empty()) return;
  Rows b{g};
  std::map<std::tuple<std::string, std::string, std::int64_t>, const Row*> gate_last;  // (model, corpus, layer)
  for (const auto& r : g.rows) {
    const Row*& slot = gate_last[{b.s(r, "model"), b.s(r, "corpus"), b.i(r, "layer")}];
    if (slot == nullptr || b.i(r, "step") > b.i(*slot, "step")) slot = &r;
  }
  ReportTable gt{"soft_gates", "Two-phase gating: effective linearization (1 − mean gate) per layer at the last step",
                 {"model", "corpus", "layer", "step", "mean gate", "effective linearization"}, {}, ""};
  for (const auto& [key, r] : gate_last)
    gt.rows.push_back({std::get<0>(key), std::get<1>(key), std::to_string(std::get<2>(key)), std::to_string(b.i(*r, "step")),
                       num(b.f(*r, "mean_gate")), pct(100.0 * b.f(*r, "effective_linear")) + "%"});
  out->push_back(std::move(gt));
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
    else if (o.compare(i, 3, "‡") == 0) r += "$^\\ddagger$", i += 3;
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
  all_linear_per_layer(tables, &out);
  gating(tables, &out);
  gates_per_layer(tables, &out);
  token_context(tables, &out);
  routing_lists(tables, &out);
  clusters(tables, &out);
  compound(tables, &out);
  progressive(tables, &out);
  finetune(tables, &out);
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

ReportFiles write_report(const std::vector<ReportTable>& tables, const std::string& out_dir) {
  make_output_dir(out_dir + "/csv");
  ReportFiles r;
  r.markdown = render_markdown(tables);
  r.tables = tables.size();
  r.files = {out_dir + "/tables.md", out_dir + "/tables.tex"};
  atomic_write_text(r.files[0], r.markdown);
  atomic_write_text(r.files[1], render_latex(tables));
  for (const auto& t : tables) {
    r.files.push_back(out_dir + "/csv/" + t.name + ".csv");
    atomic_write_text(r.files.back(), render_csv(t));
  }
  return r;
}

}  // namespace linsweep
