// Names that become file names, and directories whose entries must not be symbolic links.
#include <filesystem>

#include "common/errors.hpp"
#include "common/path_confinement.hpp"
#include "support/catch.hpp"
#include "support/test_support.hpp"

using namespace linsweep;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;
using linsweep::test::ScratchDir;

TEST_CASE("good_ and bad_ names: only what stays one plain file name component") {
  for (const char* good : {"gpt2-medium", "pythia-410m", "wikitext103", "a", "m1.v2", "neox_s", "0"}) {
    INFO(good);
    CHECK(is_safe_name(good));
  }
  CHECK(is_safe_name(std::string(kMaxSafeNameBytes, 'a')));
  struct Case {
    std::string name;
    const char* reason;
  };
  const Case bad[] = {
      {"", "is empty"},
      {"..", "must start with a letter or a digit"},
      {".", "must start with a letter or a digit"},
      {"../../etc", "must start with a letter or a digit"},
      {".hidden", "must start with a letter or a digit"},
      {"-rf", "must start with a letter or a digit"},
      {"a/b", "contains '/'"},
      {"a/../../x", "contains '/'"},
      {"a..b", "contains '..'"},
      {"gpt 2", "contains ' '"},
      {"a\\b", "contains '\\'"},
      {"line\nbreak", "contains '\\n'"},
      {std::string("nul\0x", 5), "contains '\\x00'"},
      {"caf\xc3\xa9", "contains '\\xc3'"},
      {std::string(kMaxSafeNameBytes + 1, 'a'), "is longer than 128 bytes"},
  };
  for (const auto& c : bad) {
    INFO(c.name);
    CHECK(!is_safe_name(c.name));
    CHECK_THAT(unsafe_name_reason(c.name), StartsWith(c.reason));
  }
}

TEST_CASE("require_real_entries: links anywhere below the directory are refused, the directory itself may be one") {
  ScratchDir dir;
  const std::string root = dir / "store";
  std::filesystem::create_directories(root + "/units");
  std::filesystem::create_directories(root + "/activations/cap");
  std::filesystem::create_directories(dir / "elsewhere");
  CHECK_NOTHROW(require_real_entries(root, {"units", "activations/cap/fit", "missing/deeper", "lock"}));
  std::filesystem::create_directory_symlink(dir / "elsewhere", root + "/activations/cap/fit");
  std::filesystem::create_symlink(dir / "elsewhere/x", root + "/lock");  // dangling: still a link
  std::filesystem::create_directory_symlink(root, dir / "store-link");
  CHECK_NOTHROW(require_real_entries(dir / "store-link", {"units"}));
  struct Case {
    std::string entry;
    const char* message;
  };
  const Case bad[] = {
      {"activations/cap/fit", "activations/cap/fit: is a symbolic link (to "},
      {"activations/cap/fit/layer0.h5", "activations/cap/fit: is a symbolic link"},
      {"lock", "/lock: is a symbolic link (to "},
      {"../outside", "'../outside' leaves the directory"},
      {"units/../../x", "leaves the directory"},
      {"/etc/passwd", "is not a path inside it"},
  };
  for (const auto& c : bad) {
    INFO(c.entry);
    try {
      require_real_entries(root, {"units", c.entry});
      FAIL("accepted " << c.entry);
    } catch (const StorageError& e) {
      CHECK(e.exit_code() == ExitCode::kBadInput);
      CHECK_THAT(e.what(), ContainsSubstring(c.message));
    }
  }
}
