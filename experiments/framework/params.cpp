// Parameter ranges: checks and descriptions.
#include "experiments/framework/params.hpp"

#include <fmt/format.h>

#include <cmath>

#include "common/enum_names.hpp"

namespace linsweep {
namespace {

std::string number(double v) { return fmt::format("{}", v); }

}  // namespace

std::string ParamRange::describe() const {
  if (!choices.empty()) {
    std::string out = "one of ";
    for (std::size_t i = 0; i < choices.size(); ++i) out += (i ? ", " : "") + choices[i];
    return out;
  }
  if (min && max)
    return "in " + std::string(min->open ? "(" : "[") + number(min->value) + ", " + number(max->value) +
           (max->open ? ")" : "]");
  if (min) return (min->open ? "> " : "≥ ") + number(min->value);
  if (max) return (max->open ? "< " : "≤ ") + number(max->value);
  return "any";
}

std::string ParamRange::problem(double v) const {
  if (!std::isfinite(v)) return "expected a finite number";
  const bool low = min && (min->open ? !(v > min->value) : !(v >= min->value));
  const bool high = max && (max->open ? !(v < max->value) : !(v <= max->value));
  return low || high ? number(v) + " is out of range (expected " + describe() + ")" : "";
}

std::string ParamRange::problem(const std::string& v) const {
  if (!choices.empty()) {
    bool found = false;
    for (const auto& c : choices) found = found || c == v;
    if (!found) return "'" + v + "' is not " + describe();
  }
  return check ? check(v) : "";
}

ParamRange positive() { return {ParamRange::Bound{0, true}, std::nullopt, {}, {}}; }
ParamRange at_least(double lo) { return {ParamRange::Bound{lo, false}, std::nullopt, {}, {}}; }
ParamRange fraction() { return {ParamRange::Bound{0, true}, ParamRange::Bound{1, true}, {}, {}}; }
ParamRange unit_interval() { return {ParamRange::Bound{0, false}, ParamRange::Bound{1, false}, {}, {}}; }
ParamRange any_value() { return {}; }
ParamRange one_of(std::vector<std::string> choices) { return {std::nullopt, std::nullopt, std::move(choices), {}}; }
ParamRange in_range(double lo, double hi) {
  return {ParamRange::Bound{lo, false}, ParamRange::Bound{hi, false}, {}, {}};
}
ParamRange distinct(ParamRange r) {
  r.distinct = true;
  return r;
}
ParamRange non_empty(ParamRange r) {
  r.non_empty = true;
  return r;
}

std::string param_type_name(ParamType type) {
  static constexpr EnumName<ParamType> kNames[] = {{ParamType::kFloat, "number"},
                                                   {ParamType::kInt, "integer"},
                                                   {ParamType::kBool, "true/false"},
                                                   {ParamType::kString, "string"},
                                                   {ParamType::kFloats, "number or list of numbers"},
                                                   {ParamType::kInts, "list of integers"},
                                                   {ParamType::kStrings, "string or list of strings"},
                                                   {ParamType::kLayers, "`all` or list of layers and \"a-b\" ranges"},
                                                   {ParamType::kCorpus, "corpus name"},
                                                   {ParamType::kCorpora, "list of corpus names"}};
  return enum_name(kNames, type);
}

}  // namespace linsweep
