// cache_dir: LINSWEEP_CACHE, then XDG_CACHE_HOME, then HOME; empty values count as unset.
#include <cstdlib>
#include <optional>
#include <string>

#include "common/cache_dir.hpp"
#include "support/catch.hpp"

using namespace linsweep;

namespace {

// Sets (or, with nullopt, unsets) an environment variable for a scope, restoring it after.
class EnvVar {
 public:
  EnvVar(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~EnvVar() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("cache_dir follows LINSWEEP_CACHE, XDG_CACHE_HOME, HOME in that order") {
  EnvVar l("LINSWEEP_CACHE", "/c/linsweep"), x("XDG_CACHE_HOME", "/x"), h("HOME", "/h");
  CHECK(cache_dir() == "/c/linsweep");
  {
    EnvVar empty("LINSWEEP_CACHE", "");
    CHECK(cache_dir() == "/x/linsweep");
    EnvVar no_xdg("XDG_CACHE_HOME", std::nullopt);
    CHECK(cache_dir() == "/h/.cache/linsweep");
    EnvVar no_home("HOME", "");
    CHECK(cache_dir().empty());
  }
  CHECK(cache_dir() == "/c/linsweep");
}
