// The names of a closed enum, one table per enum: printing, parsing and the "(known: …)" text of
// an error read the same list, so a value added to the enum is named in all three at once.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace linsweep {

template <typename E>
struct EnumName {
  E value;
  const char* name;
};

// The name of `value`, or "?" for a value the table lacks. Never throws.
template <typename E, std::size_t N>
constexpr const char* enum_name(const EnumName<E> (&names)[N], E value) noexcept {
  for (const auto& n : names)
    if (n.value == value) return n.name;
  return "?";
}

// The value named `name` (exact, case-sensitive), or nullopt.
template <typename E, std::size_t N>
std::optional<E> parse_enum(const EnumName<E> (&names)[N], std::string_view name) {
  for (const auto& n : names)
    if (name == n.name) return n.value;
  return std::nullopt;
}

// "a, b, c": the table's names in order, for error messages.
template <typename E, std::size_t N>
std::string enum_names_list(const EnumName<E> (&names)[N]) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + std::string(n.name);
  return out;
}

}  // namespace linsweep
