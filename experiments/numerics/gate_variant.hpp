// A gate's form, named as a spec writes it: `linear`, `pca:K` or `mlp:H` (docs/methods.md,
// "Gates"). The one parser of that name: the spec reader checks a name with variant_problem and
// the gate experiment parses it with parse, so both accept exactly the same strings. Torch-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace linsweep {

struct GateVariant {
  enum class Kind { kLinear, kPca, kMlp };
  static constexpr std::int64_t kMaxSize = std::int64_t{1} << 20;

  Kind kind = Kind::kLinear;
  std::int64_t size = 0;  // K for pca, H for mlp

  // "linear", or "pca:K" / "mlp:H" with K, H written as plain decimal digits without a leading
  // zero, 1 ≤ K, H ≤ kMaxSize; nullopt for anything else.
  static std::optional<GateVariant> try_parse(const std::string& text);
  // The same; throws InputError naming the text and what is expected.
  static GateVariant parse(const std::string& text);
  // The name parse reads back as this variant.
  std::string name() const;
};

// "" when `text` is a gate variant, else the problem in words (for the spec reader).
std::string variant_problem(const std::string& text);

}  // namespace linsweep
