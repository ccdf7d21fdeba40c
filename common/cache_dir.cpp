// The per-machine cache directory from the environment.
#include "common/cache_dir.hpp"

#include <cstdlib>

namespace linsweep {
namespace {

const char* nonempty_env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

}  // namespace

std::string cache_dir() {
  if (const char* c = nonempty_env("LINSWEEP_CACHE")) return c;
  if (const char* x = nonempty_env("XDG_CACHE_HOME")) return std::string(x) + "/linsweep";
  if (const char* home = nonempty_env("HOME")) return std::string(home) + "/.cache/linsweep";
  return {};
}

}  // namespace linsweep
