// The all-linear experiment's table: the rows its units write and its report section reads.
#pragma once

#include <cstdint>
#include <string>

#include "storage/table_def.hpp"

namespace linsweep {

struct AllLinearRow {
  std::string model;
  std::int64_t layer = 0;
  std::string corpus;
  double ppl_base = 0, ppl_linear = 0, delta_pct = 0, ci_low = 0, ci_high = 0;
  std::int64_t tokens = 0;
  std::string family;       // HF model_type
  std::int64_t params = 0;  // the model's parameter count
  double select_delta_pct = 0;
};

// One row per model, corpus and layer.
const TableDef<AllLinearRow>& all_linear_table();

}  // namespace linsweep
