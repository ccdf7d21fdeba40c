// Table schemas and validation.
#include "storage/table.hpp"

#include <fmt/format.h>

#include <cmath>

#include "common/errors.hpp"

namespace linsweep {
namespace {

constexpr ColumnType S = ColumnType::kString, I = ColumnType::kInt, F = ColumnType::kFloat;

Table schema(const char* name, std::vector<Column> columns) { return Table{name, std::move(columns), {}}; }
// Columns added after the first schema: optional when reading older files.
Column added(const char* name, ColumnType type) { return Column{name, type, false}; }

}  // namespace

const std::vector<Table>& table_schemas() {
  static const std::vector<Table> tables = {
      schema("fits", {{"model", S}, {"layer", I}, {"corpus", S}, {"lambda", F}, {"tokens", I}, {"r2", F},
                      {"rel_mse", F}, {"cond", F}}),
      schema("all_linear", {{"model", S}, {"layer", I}, {"corpus", S}, {"ppl_base", F}, {"ppl_linear", F},
                            {"delta_pct", F}, {"ci_low", F}, {"ci_high", F}, {"tokens", I}}),
      schema("gates", {{"model", S}, {"layer", I}, {"corpus", S}, {"gate", S}, {"params", I}, {"auc", F},
                       {"pct_linear", F}, {"ppl", F}, {"delta_pct", F}, {"ci_low", F}, {"ci_high", F},
                       added("selected", I), added("select_auc", F), added("eval_auc", F), added("threshold", F),
                       added("ppl_base", F)}),
      schema("token_context", {{"model", S}, {"layer", I}, {"variant", S}, {"auc", F}, added("corpus", S), added("e_norm", F),
                               added("c_norm", F), added("cosine", F), added("samples", I)}),
      schema("nofly", {{"model", S}, {"layer", I}, {"source", S}, {"target", S}, {"listed", I}, {"found", I},
                       {"still_listed", I}, {"flipped", I}, {"pearson_r", F}}),
      schema("clusters", {{"model", S}, {"layer", I}, {"pca_var", F}, {"cluster_auc", F}, {"clean_clusters", I},
                          added("corpus", S), added("k", I), added("inertia", F), added("samples", I)}),
      schema("compound", {{"model", S}, {"corpus", S}, {"pct_linear", F}, {"ppl", F}, {"delta_pct", F},
                          {"mlp_flops_saved_pct", F}, {"total_flops_saved_pct", F},
                          added("ci_low", F), added("ci_high", F), added("ppl_base", F), added("layers", I)}),
      schema("progressive", {{"model", S}, {"variant", S}, {"step", I}, {"layers", S}, {"corpus", S}, {"ppl", F},
                             {"delta_pct", F}, added("ppl_base", F), added("n_linear", I), added("phase", S),
                             added("train_loss", F)}),
      schema("finetune", {{"model", S}, {"variant", S}, {"step", I}, {"layers", S}, {"corpus", S}, {"ppl", F},
                          {"delta_pct", F}, added("ppl_base", F), added("n_linear", I), added("phase", S),
                          added("train_loss", F)}),
      // One row per optimizer step of a training unit (progressive, finetune).
      schema("training_loss", {{"model", S}, {"experiment", S}, {"variant", S}, {"step", I}, {"loss", F}, {"extra", F},
                               {"grad_norm", F}, {"lr", F}, {"phase", S}}),
      // Two-phase gating: mean soft gate per layer on an eval corpus; effective linearization = 1 − mean g.
      schema("soft_gates", {{"model", S}, {"variant", S}, {"step", I}, {"layer", I}, {"corpus", S}, {"mean_gate", F},
                            {"effective_linear", F}}),
  };
  return tables;
}

Value missing_value(ColumnType type) {
  switch (type) {
    case ColumnType::kInt: return std::int64_t{-1};
    case ColumnType::kFloat: return std::nan("");
    case ColumnType::kString: return std::string();
  }
  return std::string();
}

Table empty_table(const std::string& name) {
  std::string known;
  for (const auto& t : table_schemas()) {
    if (t.name == name) return t;
    known += (known.empty() ? "" : ", ") + t.name;
  }
  throw StorageError("unknown table '" + name + "' (known: " + known + ")", ExitCode::kBadInput);
}

int Table::column_index(const std::string& column) const {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i].name == column) return static_cast<int>(i);
  return -1;
}

void Table::validate() const {
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].size() != columns.size())
      throw StorageError("table '" + name + "' row " + std::to_string(r) + " has " + std::to_string(rows[r].size()) +
                         " values for " + std::to_string(columns.size()) + " columns");
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const auto want = static_cast<std::size_t>(columns[c].type);
      if (rows[r][c].index() != want)
        throw StorageError("table '" + name + "' row " + std::to_string(r) + " column '" + columns[c].name +
                           "' has the wrong type");
    }
  }
}

std::string value_to_string(const Value& v, bool exact) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) return exact ? fmt::format("{}", *d) : fmt::format("{:.6g}", *d);
  return std::get<std::string>(v);
}

}  // namespace linsweep
