// `toy`: an experiment that only tests register (linked into test binaries, never into
// `linsweep`). It is the whole of what adding an experiment takes, in one file: parameters with
// ranges, unit expansion with a dependency on the fit provider, two unit kinds, a result table
// and a summary section. Its `fail`, `fail_input` and `sleep` parameters let tests make units
// fail (or fail on bad input) or take time, so that production code needs no test hooks.
#include <chrono>
#include <stdexcept>
#include <thread>

#include "common/errors.hpp"
#include "experiments/framework/experiment.hpp"
#include "presentation/cells.hpp"
#include "presentation/section.hpp"
#include "storage/table_def.hpp"

namespace linsweep {
namespace {

struct ToyParams {
  std::int64_t units = 1;   // toy units per model and corpus
  double sleep = 0;         // seconds each toy unit sleeps before it computes
  bool fail = false;        // every toy unit throws (a failure a retry might cure)
  bool fail_input = false;  // every toy unit throws InputError (bad input: never retried)
  bool after_fit = false;   // toy units depend on the model's fit of the corpus
  std::int64_t scale = 2;   // the row's value is index · scale
};

const ParamSchema<ToyParams>& toy_schema() {
  static const ParamSchema<ToyParams> s =
      ParamSchema<ToyParams>()
          .add("units", &ToyParams::units, at_least(1), "toy units per model and corpus")
          .add("sleep", &ToyParams::sleep, at_least(0), "seconds each toy unit sleeps")
          .add("fail", &ToyParams::fail, any_value(), "every toy unit throws")
          .add("fail_input", &ToyParams::fail_input, any_value(), "every toy unit throws InputError")
          .add("after_fit", &ToyParams::after_fit, any_value(), "toy units depend on the fit")
          .add("scale", &ToyParams::scale, in_range(1, 1000), "the value of row i is i · scale");
  return s;
}

struct ToyRow {
  std::string model, corpus;
  std::int64_t index = 0, value = 0;
  std::string kind;
};

const TableDef<ToyRow>& toy_table() {
  static const TableDef<ToyRow> t = TableDef<ToyRow>("toy", "one row per toy unit")
                                        .key("model", &ToyRow::model)
                                        .key("corpus", &ToyRow::corpus)
                                        .key("index", &ToyRow::index)
                                        .column("value", &ToyRow::value, "index · scale")
                                        .column("kind", &ToyRow::kind, "toy or toy_after");
  return t;
}
const TableRegistrar kToyTable{toy_table().schema()};

// Per model and corpus: `units` toy units, and a toy_after unit that depends on all of them.
void expand_toy(const ToyParams& p, PlanBuilder& b) {
  for (const auto& m : b.sweep().models)
    for (const auto& c : b.sweep().corpora) {
      std::vector<std::string> ids;
      for (std::int64_t i = 0; i < p.units; ++i) {
        std::vector<std::string> deps;
        if (p.after_fit) deps.push_back(b.provide("fit", m, c.name));
        const nlohmann::json params = {
            {"index", i}, {"sleep", p.sleep}, {"fail", p.fail}, {"fail_input", p.fail_input}, {"scale", p.scale}};
        ids.push_back(b.add(Unit{.kind = "toy", .model = m.name, .corpus = c.name, .params = params, .deps = deps},
                            "/" + std::to_string(i)));
      }
      b.add(Unit{.kind = "toy_after", .model = m.name, .corpus = c.name, .params = {{"units", p.units}}, .deps = ids});
    }
}

const ExperimentRegistrar kToy{make_experiment<ToyParams>("toy", "a test experiment", 1000, toy_schema(), expand_toy)};

UnitResult run_toy(const ExperimentInput& in) {
  const double sleep = in.params.at("sleep").get<double>();
  if (sleep > 0) std::this_thread::sleep_for(std::chrono::duration<double>(sleep));
  if (in.params.at("fail").get<bool>()) throw std::runtime_error("toy unit " + in.unit_id + " fails on purpose");
  if (in.params.at("fail_input").get<bool>()) throw InputError("toy unit " + in.unit_id + " has bad input on purpose");
  UnitResult out;
  out.unit_id = in.unit_id;
  out.kind = in.kind;
  out.params = in.provenance;
  const auto index = in.params.at("index").get<std::int64_t>();
  out.tables.push_back(toy_table().table({{.model = in.model_name,
                                           .corpus = in.corpus_name,
                                           .index = index,
                                           .value = index * in.params.at("scale").get<std::int64_t>(),
                                           .kind = "toy"}}));
  return out;
}
const UnitKindRegistrar kToyKind{"toy", run_toy, /*needs_model=*/false};

UnitResult run_toy_after(const ExperimentInput& in) {
  UnitResult out;
  out.unit_id = in.unit_id;
  out.kind = in.kind;
  out.params = in.provenance;
  out.tables.push_back(toy_table().table({{.model = in.model_name,
                                           .corpus = in.corpus_name,
                                           .index = -1,
                                           .value = static_cast<std::int64_t>(in.deps.size()),
                                           .kind = "toy_after"}}));
  return out;
}
const UnitKindRegistrar kToyAfterKind{"toy_after", run_toy_after, /*needs_model=*/false};

void toy_tables(const TableSet& tables, std::vector<ReportTable>* out) {
  const auto rows = toy_table().rows(tables.at("toy"));
  if (rows.empty()) return;
  ReportTable t{"toy", "Toy units", {"model", "corpus", "index", "value"}, {}, ""};
  for (const auto& r : rows) t.rows.push_back({r.model, r.corpus, std::to_string(r.index), std::to_string(r.value)});
  out->push_back(std::move(t));
}
const SectionRegistrar kToySection{{"toy", 1000, toy_tables, {}}};

}  // namespace
}  // namespace linsweep
