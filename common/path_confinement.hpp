// Keeping what linsweep writes inside a store or an output directory: safe names, no symlinks.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace linsweep {

inline constexpr std::size_t kMaxSafeNameBytes = 128;

// Why `name` cannot become part of a file name (a model or corpus name from a spec: STORE/models/
// <model>.<variant>/, HDF5 group paths), or "" when it can. A safe name is 1..128 bytes of
// ASCII letters, digits, '.', '-' and '_' that starts with a letter or a digit: no '/', no
// "..", no leading '.' or '-', no spaces or control characters.
std::string unsafe_name_reason(std::string_view name);
inline bool is_safe_name(std::string_view name) { return unsafe_name_reason(name).empty(); }

// Throws StorageError(kBadInput) when an existing path `dir/<entry>`, or any directory on the
// way to it below `dir`, is a symbolic link (lstat; `dir` itself may be one), or when an entry is
// absolute or has a ".." component: a write through such a path would land outside `dir`.
// Missing paths are fine (they will be created as real directories and files).
void require_real_entries(const std::string& dir, const std::vector<std::string>& entries);

}  // namespace linsweep
