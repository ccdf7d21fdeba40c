// Packing a compound unit's surrogates and chosen gates into safetensors and a JSON index.
#include "experiments/compound/routed_export.hpp"

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "engine/safetensors.hpp"
#include "experiments/numerics/gate_model.hpp"
#include "presentation/table_view.hpp"
#include "storage/store.hpp"
#include "storage/surrogate_store.hpp"

namespace linsweep {
namespace {

TensorBytes f64_tensor(const std::string& name, const ArrayData& a) {
  TensorBytes t{name, DType::kF64, a.shape, std::vector<std::uint8_t>(a.values.size() * sizeof(double))};
  std::memcpy(t.bytes.data(), a.values.data(), t.bytes.size());
  return t;
}

// Float64 values rounded to float32 (to nearest, as the routed forward's .to(kFloat) rounds).
TensorBytes f32_tensor(const std::string& name, std::vector<std::int64_t> shape, const std::vector<double>& v) {
  std::vector<float> f(v.begin(), v.end());
  TensorBytes t{name, DType::kF32, std::move(shape), std::vector<std::uint8_t>(f.size() * sizeof(float))};
  std::memcpy(t.bytes.data(), f.data(), t.bytes.size());
  return t;
}

// The stored arrays of a gate (Gate::save's layout) that it computes with, by their exported names.
std::vector<std::pair<std::string, std::string>> gate_array_names(const GateVariant& v) {
  std::vector<std::pair<std::string, std::string>> names = {{"scaler.mean", "scaler/mean"},
                                                            {"scaler.scale", "scaler/scale"}};
  if (v.kind == GateVariant::Kind::kMlp) {
    names.insert(names.end(), {{"mlp.P", "mlp/P"}, {"mlp.v", "mlp/v"}, {"mlp.c", "mlp/c"}});
    return names;
  }
  names.insert(names.end(), {{"logistic.weight", "logistic/weight"}, {"logistic.bias", "logistic/bias"}});
  if (v.kind == GateVariant::Kind::kPca)
    names.insert(names.end(), {{"pca.mean", "pca/mean"}, {"pca.components", "pca/components"}});
  return names;
}

// The compound unit's own row, by column name.
nlohmann::json compound_row(const UnitResult& u) {
  nlohmann::json row = nlohmann::json::object();
  for (const Table& t : u.tables) {
    if (t.name != "compound" || t.rows.empty()) continue;
    const TableView v(t);
    for (const char* c : {"ppl_base", "ppl", "delta_pct", "ci_low", "ci_high", "pct_linear", "mlp_flops_saved_pct",
                          "total_flops_saved_pct"})
      if (v.has(c)) row[c] = v.number(0, c);
  }
  return row;
}

UnitResult read_committed(const Store& store, const std::string& id, const std::string& what) {
  if (!store.is_committed(id))
    throw InputError(store.dir() + ": " + what + " " + id + " is not committed (removed by `linsweep gc`?)");
  return store.read_unit(id);
}

}  // namespace

CompoundUnits read_compound_units(const Store& store, const std::string& model, const std::string& corpus,
                                  const std::string& unit_id) {
  std::string id = unit_id;
  if (id.empty()) {
    const Table table = store.read_table("compound");
    const TableView t(table);
    const bool settings = table.column_index("setting") >= 0;
    std::string have, listed;  // every model/corpus; the units of this one (a sweep's settings)
    std::size_t found = 0;
    for (std::size_t i = 0; i < t.size(); ++i) {
      have += (have.empty() ? "" : ", ") + t.text(i, "model") + "/" + t.text(i, "corpus");
      if (t.text(i, "model") != model || t.text(i, "corpus") != corpus) continue;
      if (found++ == 0) id = t.text(i, "unit");
      listed += (listed.empty() ? "" : ", ") + t.text(i, "unit") + (settings ? " (" + t.text(i, "setting") + ")" : "");
    }
    if (found == 0)
      throw InputError(store.dir() + ": no current compound result for model '" + model + "' and corpus '" + corpus +
                       "' (" + (have.empty() ? "none in the store" : "have: " + have) + ")");
    if (found > 1)
      throw InputError(store.dir() + ": " + std::to_string(found) + " settings of a sweep hold a current compound " +
                       "result for model '" + model + "' and corpus '" + corpus + "'; name one with --unit: " + listed);
  }
  CompoundUnits out;
  out.compound = read_committed(store, id, "unit");
  const nlohmann::json provenance = nlohmann::json::parse(out.compound.params, nullptr, false);
  const std::string slot = "compound/" + model + "/" + corpus;  // of any setting ("…@compound.seed=1")
  const std::string found = provenance.is_object() ? provenance.value("slot", "") : "";
  if (out.compound.kind != "compound" || found.substr(0, found.find('@')) != slot)
    throw InputError(store.dir() + ": unit " + id + " is not a compound unit of model '" + model + "' and corpus '" +
                     corpus + "'");
  const auto deps = provenance.value("deps", std::vector<std::string>{});
  if (deps.empty()) throw InputError(store.dir() + ": unit " + id + " names no fit unit");
  out.fit = read_committed(store, deps[0], "its fit unit");
  for (std::size_t k = 1; k < deps.size(); ++k) out.gates.push_back(read_committed(store, deps[k], "its gate unit"));
  return out;
}

void export_routed(const CompoundUnits& units, const std::string& model, const std::string& corpus,
                   const std::string& out_dir) {
  const nlohmann::json provenance = nlohmann::json::parse(units.compound.params, nullptr, false);
  if (units.compound.kind != "compound" || !provenance.is_object() || !provenance.contains("params"))
    throw InputError("unit " + units.compound.unit_id + ": not a compound unit with readable parameters");
  const nlohmann::json& params = provenance["params"];
  const auto layers = params.at("layers").get<std::vector<std::int64_t>>();
  const double lambda = params.at("lambda").get<double>();
  if (layers.size() != units.gates.size())
    throw InputError("unit " + units.compound.unit_id + ": " + std::to_string(layers.size()) + " layers but " +
                     std::to_string(units.gates.size()) + " gate units");
  std::vector<TensorBytes> tensors;
  nlohmann::json routed = nlohmann::json::array();
  std::int64_t d = 0;
  for (std::size_t k = 0; k < layers.size(); ++k) {
    const std::int64_t l = layers[k];
    const std::string prefix = "layers." + std::to_string(l) + ".";
    const StoredSurrogate s = get_surrogate(units.fit, surrogate_key(model, corpus, l));
    const SurrogateFit* fit = nullptr;
    for (const auto& f : s.fits)
      if (f.lambda == lambda) fit = &f;
    if (fit == nullptr)
      throw InputError("unit " + units.fit.unit_id + ": no surrogate with lambda " + std::to_string(lambda) +
                       " for layer " + std::to_string(l));
    d = s.stats.d;
    tensors.push_back(f32_tensor(prefix + "surrogate.weight", {d, d}, fit->weight));
    tensors.push_back(f32_tensor(prefix + "surrogate.bias", {d}, fit->bias));
    const std::string key = gate_key(model, corpus, l) + "/chosen";
    const Gate gate = Gate::load(units.gates[k], key);  // validates the stored arrays
    for (const auto& [name, stored] : gate_array_names(gate.variant()))
      tensors.push_back(f64_tensor(prefix + "gate." + name, units.gates[k].arrays.at(key + "/" + stored)));
    routed.push_back({{"layer", l}, {"gate", gate.variant().name()}, {"prefix", prefix}});
  }
  const nlohmann::json index = {
      {"format", "linsweep-routed-mlp"},
      {"version", 1},
      {"model", model},
      {"corpus", corpus},
      {"model_fingerprint", provenance.value("inputs", nlohmann::json::object()).value("model", "")},
      {"compound_unit", units.compound.unit_id},
      {"lambda", lambda},
      {"d_model", d},
      {"tensors", "routed.safetensors"},
      {"rule",
       "at each routed layer, x is the MLP's input (after its LayerNorm); the surrogate y = x·W + b replaces the "
       "MLP where the gate's logit(x) > 0 (docs/methods.md, \"Exported routed model\")"},
      {"routed_layers", routed},
      {"compound", compound_row(units.compound)}};
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw InputError("--out " + out_dir + ": cannot create the directory (" + ec.message() + ")");
  write_safetensors(out_dir + "/routed.safetensors", tensors, {{"format", "pt"}, {"linsweep", "routed-mlp"}});
  atomic_write_text(out_dir + "/routed.json", index.dump(2) + "\n");
}

}  // namespace linsweep
