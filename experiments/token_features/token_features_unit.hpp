// The token-features experiment's tables and categories: what its units write and its report
// section reads (docs/methods.md, "Token features").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/table_def.hpp"

namespace linsweep {

inline constexpr const char* kKeyDoc =
    "the token described: predicted (at t + 1, the one δ scores) or input (at t; also where empty: files "
    "written before the column, which keyed by the input token)";

// The described token of a row's `key`: rows read from files written before the column have
// none, and those keyed by the input token.
inline const char* described_token(const std::string& key) { return key == "predicted" ? "predicted" : "input"; }

struct TokenClassRow {
  std::string model, corpus;
  std::int64_t layer = 0;
  std::string scheme, category;
  std::int64_t count = 0;
  double mean_delta = 0, sd_delta = 0;
  std::string key;
};

struct TokenRegressionRow {
  std::string model, corpus;
  std::int64_t layer = 0;
  std::string feature;
  double r2 = 0, r2_holdout = 0, pearson_r = 0;
  std::int64_t predictors = 0, samples = 0;
  std::string key;
  double pearson_ci_low = 0, pearson_ci_high = 0;
  std::string flag;
};

// δ by token class (and part of speech): one row per model, corpus, layer, scheme and category.
const TableDef<TokenClassRow>& token_classes_table();
// δ regressed on per-token features: one row per model, corpus, layer and feature.
const TableDef<TokenRegressionRow>& token_regression_table();

// The categories, in the order of the stored index arrays.
inline const std::vector<std::string> kClasses = {"word", "whitespace-prefixed word", "number", "punctuation", "other"};
inline const std::vector<std::string> kPos = {"noun",        "verb",    "auxiliary",   "adjective",
                                              "adverb",      "pronoun", "determiner",  "preposition",
                                              "conjunction", "number",  "punctuation", "other"};

}  // namespace linsweep
