// Sizes in bytes as people write them in a spec: "123456789", "512MiB", "80GB", "1.5 GiB".
// Decimal units (kB, MB, GB, TB: powers of 1000) and binary ones (KiB, MiB, GiB, TiB: powers of
// 1024), case-sensitive as written here, one optional space before the unit. Pure functions.
#pragma once

#include <optional>
#include <string>

namespace linsweep {

// The size in bytes, or nullopt for text that is none (negative, not a number, unknown unit).
std::optional<double> parse_byte_size(const std::string& text);

// "512 MiB", "11.7 GiB", "800 B": the size in the largest binary unit below it, 3 significant digits.
std::string byte_size_text(double bytes);

}  // namespace linsweep
