// Models named by hub id in a spec: resolved from a fake hub cache (HF_HUB_CACHE) to the snapshot,
// whose contents, never its path or the name, make the units' ids.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "orchestrator/plan/plan.hpp"
#include "orchestrator/spec/spec.hpp"
#include "support/catch.hpp"
#include "support/test_support.hpp"

using namespace linsweep;
using linsweep::test::ScratchDir;

namespace {

// HF_HUB_CACHE set to a directory for a scope, restored after.
class HubCacheEnv {
 public:
  explicit HubCacheEnv(const std::string& dir) {
    if (const char* old = std::getenv("HF_HUB_CACHE")) old_ = old;
    ::setenv("HF_HUB_CACHE", dir.c_str(), 1);
  }
  ~HubCacheEnv() {
    if (old_)
      ::setenv("HF_HUB_CACHE", old_->c_str(), 1);
    else
      ::unsetenv("HF_HUB_CACHE");
  }

 private:
  std::optional<std::string> old_;
};

// CACHE/models--org--tiny/snapshots/<commit>/ holding tiny-gpt2's files, refs/<ref> naming it.
std::string add_snapshot(const std::string& cache, const std::string& commit, const std::string& ref) {
  const std::string folder = cache + "/models--org--tiny";
  const std::string snapshot = folder + "/snapshots/" + commit;
  test::copy_model("tiny-gpt2", snapshot);
  std::filesystem::create_directories(folder + "/refs");
  test::write_text(folder + "/refs/" + ref, commit);
  return snapshot;
}

std::map<std::string, std::string> unit_ids(const Plan& p) {
  std::map<std::string, std::string> m;
  for (const auto& u : p.units) m[u.slot] = u.id;
  return m;
}

SweepSpec spec_naming(const ScratchDir& dir, const std::string& model_entry) {
  test::write_text(dir / "spec.yaml", "store: " + (dir / "store") + "\ncontext: 32\nmodels:\n  - {name: m, " +
                                          model_entry +
                                          "}\ncorpora:\n  - {name: a, path: " + test::tokens_file("tiny-gpt2") +
                                          "}\nsplits:\n  fit: {start: 0, tokens: 64}\n  eval: {start: 64, tokens: "
                                          "64}\nexperiments:\n  fit: {}\n  all_linear: {}\n");
  return load_spec(dir / "spec.yaml");
}

}  // namespace

TEST_CASE("good_: a hub id plans from its snapshot, with the unit ids of the same files anywhere else") {
  ScratchDir dir;
  HubCacheEnv env(dir / "hub");
  const std::string main_snapshot = add_snapshot(dir / "hub", "1111111111111111111111111111111111111111", "main");
  const std::string other = add_snapshot(dir / "hub", "2222222222222222222222222222222222222222", "v2");
  test::copy_model("tiny-gpt2", dir / "plain");

  const SweepSpec by_id = spec_naming(dir, "path: org/tiny");
  CHECK(by_id.models.at(0).path == main_snapshot);
  const SweepSpec by_revision = spec_naming(dir, "path: org/tiny, revision: v2");
  CHECK(by_revision.models.at(0).path == other);
  const SweepSpec by_folder = spec_naming(dir, "path: hub/models--org--tiny");
  CHECK(by_folder.models.at(0).path == main_snapshot);
  const SweepSpec by_dir = spec_naming(dir, "path: plain");

  const auto ids = unit_ids(make_plan(by_id));
  CHECK(unit_ids(make_plan(by_revision)) == ids);  // the same bytes under another commit
  CHECK(unit_ids(make_plan(by_folder)) == ids);
  CHECK(unit_ids(make_plan(by_dir)) == ids);  // and in a plain directory

  // Another revision whose files differ (here one byte of config.json) is another model: new units.
  test::write_text(other + "/config.json", test::read_text(other + "/config.json") + "\n");
  CHECK(unit_ids(make_plan(spec_naming(dir, "path: org/tiny, revision: v2"))) != ids);
}
