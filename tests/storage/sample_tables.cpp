// The tables the storage tests write. The storage library knows no table of its own: each
// experiment registers its schemas, and these stand in for them in the storage test binary.
#include "storage/table.hpp"

namespace linsweep {
namespace {

constexpr ColumnType S = ColumnType::kString, I = ColumnType::kInt, F = ColumnType::kFloat;
Column added(const char* name, ColumnType type) { return Column{.name = name, .type = type, .required = false}; }

const TableRegistrar kFits{Table{
    "fits",
    {{"model", S}, {"layer", I}, {"corpus", S}, {"lambda", F}, {"tokens", I}, {"r2", F}, {"rel_mse", F}, {"cond", F}},
    {}}};
const TableRegistrar kAllLinear{Table{"all_linear",
                                      {{"model", S},
                                       {"layer", I},
                                       {"corpus", S},
                                       {"ppl_base", F},
                                       {"ppl_linear", F},
                                       {"delta_pct", F},
                                       {"ci_low", F},
                                       {"ci_high", F},
                                       {"tokens", I}},
                                      {}}};
const TableRegistrar kGates{Table{"gates",
                                  {{"model", S},
                                   {"layer", I},
                                   {"corpus", S},
                                   {"gate", S},
                                   {"params", I},
                                   {"auc", F},
                                   {"pct_linear", F},
                                   {"ppl", F},
                                   {"delta_pct", F},
                                   {"ci_low", F},
                                   {"ci_high", F},
                                   added("selected", I),
                                   added("select_auc", F),
                                   added("eval_auc", F),
                                   added("threshold", F),
                                   added("ppl_base", F)},
                                  {}}};

}  // namespace
}  // namespace linsweep
