// Gate variant names: the one parser.
#include "experiments/numerics/gate_variant.hpp"

#include "common/errors.hpp"

namespace linsweep {
namespace {

// K or H: decimal digits, no sign or leading zero, at most kMaxSize.
std::optional<std::int64_t> size_of(const std::string& digits) {
  if (digits.empty() || digits.size() > 7 || digits[0] == '0') return std::nullopt;
  if (digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const std::int64_t v = std::stoll(digits);
  if (v > GateVariant::kMaxSize) return std::nullopt;
  return v;
}

std::string expected() { return "linear, pca:K or mlp:H, 1 ≤ K, H ≤ " + std::to_string(GateVariant::kMaxSize); }

}  // namespace

std::optional<GateVariant> GateVariant::try_parse(const std::string& text) {
  if (text == "linear") return GateVariant{};
  const auto colon = text.find(':');
  if (colon == std::string::npos) return std::nullopt;
  const std::string kind = text.substr(0, colon);
  if (kind != "pca" && kind != "mlp") return std::nullopt;
  const std::optional<std::int64_t> size = size_of(text.substr(colon + 1));
  if (!size) return std::nullopt;
  return GateVariant{kind == "pca" ? Kind::kPca : Kind::kMlp, *size};
}

GateVariant GateVariant::parse(const std::string& text) {
  if (std::optional<GateVariant> v = try_parse(text)) return *v;
  throw InputError("gate variant '" + text + "': expected " + expected());
}

std::string GateVariant::name() const {
  switch (kind) {
    case Kind::kLinear:
      return "linear";
    case Kind::kPca:
      return "pca:" + std::to_string(size);
    case Kind::kMlp:
      return "mlp:" + std::to_string(size);
  }
  return "?";
}

std::string variant_problem(const std::string& text) {
  return GateVariant::try_parse(text) ? "" : "'" + text + "' is not a gate variant (" + expected() + ")";
}

}  // namespace linsweep
