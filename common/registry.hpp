// Registries filled by static registrars: one entry per name, kept in a fixed order.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace linsweep {

// The process-wide entries of type T, one list per type (static registrars fill it before main).
template <class T>
std::vector<T>& registered() {
  static std::vector<T> entries;
  return entries;
}

// Inserts `entry` into `entries`, which stay ordered by `before`. Throws std::logic_error
// "<what> '<name>' registered twice" when an entry of the same name (`name_of`) is there
// already: two files register one name, a programming error that static initialization
// reports before main. Not thread safe: registries are filled during static initialization
// and only read afterwards.
template <class T, class NameOf, class Before>
void register_once(std::vector<T>& entries, T entry, const char* what, NameOf name_of, Before before) {
  for (const auto& e : entries)
    if (name_of(e) == name_of(entry))
      throw std::logic_error(std::string(what) + " '" + name_of(entry) + "' registered twice");
  const auto at = std::upper_bound(entries.begin(), entries.end(), entry, before);
  entries.insert(at, std::move(entry));
}

}  // namespace linsweep
