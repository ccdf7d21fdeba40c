// Typed experiment parameters: each field of a parameter struct declared once with its spec
// key, type, default, valid range and a line of documentation. The spec reader validates YAML
// against these declarations; experiments read their struct, never raw JSON keys.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace linsweep {

// What a parameter holds. kCorpus/kCorpora are names of the spec's corpora; kLayers is `all`
// or a list of layers and "a-b" ranges.
enum class ParamType { kFloat, kInt, kBool, kString, kFloats, kInts, kStrings, kLayers, kCorpus, kCorpora };

// A parameter's valid values. Numbers (and each element of a number list) must lie inside the
// bounds; strings (and each element of a string list) must be one of `choices` when given,
// and pass `check` (which returns the problem, or "" when the value is fine).
struct ParamRange {
  struct Bound {
    double value;
    bool open;  // true: the bound itself is excluded
  };
  std::optional<Bound> min, max;
  std::vector<std::string> choices;
  std::function<std::string(const std::string&)> check;
  bool non_empty = false;  // lists: at least one element
  bool distinct = false;   // lists: no element twice

  // "> 0", "in (0, 1)", "≥ 1", "one of a, b", "any" — for messages and docs.
  std::string describe() const;
  // The problem with `v`, or "".
  std::string problem(double v) const;
  std::string problem(const std::string& v) const;
};

// Common ranges.
ParamRange positive();           // > 0 (rates, λ)
ParamRange at_least(double lo);  // ≥ lo (counts: at_least(1); steps: at_least(0))
ParamRange fraction();           // in (0, 1): shares held out
ParamRange unit_interval();      // in [0, 1]
ParamRange any_value();          // no constraint (signed values such as a bias, seeds)
ParamRange one_of(std::vector<std::string> choices);
ParamRange in_range(double lo, double hi);  // [lo, hi]
// `r` for a list that must not name a value twice, and one that must not be empty.
ParamRange distinct(ParamRange r);
ParamRange non_empty(ParamRange r);

// One declared parameter, type-erased.
struct ParamField {
  std::string key;
  ParamType type;
  ParamRange range;
  std::string doc;
  nlohmann::json fallback;  // the default, as it appears in canonical JSON
};

// A problem found by an experiment's own cross-field checks, attributed to a key so that the
// spec reader can name the line.
struct ParamProblem {
  std::string key;
  std::string message;
};

// The declarations of a parameter struct T (default-constructible; its member initializers
// are the defaults). Usage:
//   ParamSchema<GateParams> s;
//   s.add("seed", &GateParams::seed, any_value(), "seed of the hold-out and of gate training");
template <typename T>
class ParamSchema {
 public:
  template <typename M>
  ParamSchema& add(const char* key, M T::*member, ParamRange range, const char* doc) {
    return add_typed(key, member, infer<M>(), std::move(range), doc);
  }
  // A string that names a corpus of the spec (empty allowed: the experiment picks a default).
  ParamSchema& corpus(const char* key, std::string T::*member, const char* doc) {
    return add_typed(key, member, ParamType::kCorpus, any_value(), doc);
  }
  ParamSchema& corpora(const char* key, std::vector<std::string> T::*member, const char* doc) {
    return add_typed(key, member, ParamType::kCorpora, any_value(), doc);
  }
  // A list of strings that may be left unset (its default, null): the owner then picks one,
  // which may depend on other fields.
  ParamSchema& optional_strings(const char* key, std::optional<std::vector<std::string>> T::*member, ParamRange range,
                                const char* doc) {
    fields_.push_back({key, ParamType::kStrings, std::move(range), doc, nullptr});
    bindings_.push_back(
        {key,
         [member](const nlohmann::json& v, T* t) {
           t->*member = v.is_null() ? std::nullopt : std::optional(v.get<std::vector<std::string>>());
         },
         [member](const T& t) { return t.*member ? nlohmann::json(*(t.*member)) : nlohmann::json(nullptr); }});
    return *this;
  }
  // `all` or a list of layers and "a-b" ranges, kept as its canonical JSON.
  ParamSchema& layers(const char* key, nlohmann::json T::*member, const char* doc) {
    return add_typed(key, member, ParamType::kLayers, any_value(), doc);
  }

  const std::vector<ParamField>& fields() const noexcept { return fields_; }

  // The struct from canonical JSON (every declared key present: the spec reader filled the
  // defaults). Throws nlohmann::json::exception on a missing or mistyped key (a bug, not
  // bad input: the spec was validated first).
  T from_json(const nlohmann::json& j) const {
    T t;
    for (const auto& b : bindings_) b.read(j.at(b.key), &t);
    return t;
  }
  nlohmann::json to_json(const T& t) const {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& b : bindings_) j[b.key] = b.write(t);
    return j;
  }

 private:
  struct Binding {
    std::string key;
    std::function<void(const nlohmann::json&, T*)> read;
    std::function<nlohmann::json(const T&)> write;
  };

  template <typename M>
  static constexpr ParamType infer() {
    if constexpr (std::is_same_v<M, double>)
      return ParamType::kFloat;
    else if constexpr (std::is_same_v<M, std::int64_t>)
      return ParamType::kInt;
    else if constexpr (std::is_same_v<M, bool>)
      return ParamType::kBool;
    else if constexpr (std::is_same_v<M, std::string>)
      return ParamType::kString;
    else if constexpr (std::is_same_v<M, std::vector<double>>)
      return ParamType::kFloats;
    else if constexpr (std::is_same_v<M, std::vector<std::int64_t>>)
      return ParamType::kInts;
    else if constexpr (std::is_same_v<M, std::vector<std::string>>)
      return ParamType::kStrings;
    else
      static_assert(sizeof(M) == 0, "unsupported parameter type");
  }

  template <typename M>
  ParamSchema& add_typed(const char* key, M T::*member, ParamType type, ParamRange range, const char* doc) {
    const T defaults{};
    fields_.push_back({key, type, std::move(range), doc, nlohmann::json(defaults.*member)});
    bindings_.push_back({key, [member](const nlohmann::json& v, T* t) { t->*member = v.get<M>(); },
                         [member](const T& t) { return nlohmann::json(t.*member); }});
    return *this;
  }

  std::vector<ParamField> fields_;
  std::vector<Binding> bindings_;
};

// "float", "int ≥ 1", "list of float > 0", ... for docs and messages.
std::string param_type_name(ParamType type);

}  // namespace linsweep
