// resolve_model_dir: hub ids and models--org--name folders in a fake hub cache, with refs,
// snapshots named by commit, the misses' messages, and plain directories untouched.
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "common/hf_cache.hpp"
#include "support/catch.hpp"
#include "support/test_support.hpp"

using namespace linsweep;
using linsweep::test::ScratchDir;
using linsweep::test::write_text;

namespace {

constexpr const char* kCommit = "0123456789abcdef0123456789abcdef01234567";

// CACHE/models--org--tiny with refs/main -> kCommit and snapshots/<kCommit>/config.json, plus a
// second snapshot "feedface" that no ref names; returns the folder.
std::string make_hub_folder(const std::string& cache) {
  const std::string folder = cache + "/models--org--tiny";
  std::filesystem::create_directories(folder + "/refs");
  std::filesystem::create_directories(folder + "/snapshots/" + kCommit);
  std::filesystem::create_directories(folder + "/snapshots/feedface");
  write_text(folder + "/refs/main", std::string(kCommit) + "\n");
  write_text(folder + "/snapshots/" + kCommit + "/config.json", "{}");
  return folder;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Sets (or unsets) an environment variable for a scope.
class HubEnvVar {
 public:
  HubEnvVar(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~HubEnvVar() {
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

TEST_CASE("good_: a hub id resolves to its snapshot, by ref or by commit, in the first cache that has it") {
  ScratchDir tmp;
  const std::string folder = make_hub_folder(tmp / "second");
  std::filesystem::create_directories(tmp / "first");
  const std::vector<HubCache> caches{{tmp / "first", "HF_HUB_CACHE"}, {tmp / "second", "HF_HOME/hub"}};
  const std::string snapshot = folder + "/snapshots/" + kCommit;
  CHECK(resolve_model_dir("org/tiny", tmp.path(), "", caches) == snapshot);
  CHECK(resolve_model_dir("org/tiny", tmp.path(), "main", caches) == snapshot);
  CHECK(resolve_model_dir("org/tiny", tmp.path(), "feedface", caches) == folder + "/snapshots/feedface");
  // The folder itself, named as a path, works the same.
  CHECK(resolve_model_dir(folder, "", "", caches) == snapshot);
  CHECK(resolve_model_dir("second/models--org--tiny", tmp.path(), "", caches) == snapshot);
  // A directory of that name beside the spec wins over the cache: paths come first.
  std::filesystem::create_directories(tmp / "org/tiny");
  CHECK(resolve_model_dir("org/tiny", tmp.path(), "", caches) == tmp / "org/tiny");
}

TEST_CASE("good_: plain directories and other paths pass through unchanged") {
  ScratchDir tmp;
  std::filesystem::create_directories(tmp / "models/gpt2-s");
  CHECK(resolve_model_dir("models/gpt2-s", tmp.path(), "", {}) == tmp / "models/gpt2-s");
  CHECK(resolve_model_dir("./models/../models/gpt2-s", tmp.path(), "", {}) == tmp / "models/gpt2-s");
  CHECK(resolve_model_dir("nowhere", tmp.path(), "", {}) == tmp / "nowhere");  // not a hub id: the reader says
  CHECK(resolve_model_dir(tmp / "absent", "/elsewhere", "", {}) == tmp / "absent");
}

TEST_CASE("bad_: a miss names every cache searched and the download command") {
  ScratchDir tmp;
  const std::vector<HubCache> caches{{tmp / "a", "HF_HUB_CACHE"}, {tmp / "b", "~/.cache/huggingface/hub"}};
  const std::string m = message_of([&] { resolve_model_dir("Qwen/Qwen2.5-7B", tmp.path(), "", caches); });
  CHECK_THAT(m, Catch::Matchers::ContainsSubstring("'Qwen/Qwen2.5-7B' is not a directory"));
  CHECK_THAT(m, Catch::Matchers::ContainsSubstring("models--Qwen--Qwen2.5-7B"));
  CHECK_THAT(m, Catch::Matchers::ContainsSubstring(tmp / "a" + " (HF_HUB_CACHE)"));
  CHECK_THAT(m, Catch::Matchers::ContainsSubstring(tmp / "b" + " (~/.cache/huggingface/hub)"));
  CHECK_THAT(m, Catch::Matchers::ContainsSubstring("`huggingface-cli download Qwen/Qwen2.5-7B`"));
  const std::string r = message_of([&] { resolve_model_dir("Qwen/Qwen2.5-7B", tmp.path(), "v2", caches); });
  CHECK_THAT(r, Catch::Matchers::ContainsSubstring("`huggingface-cli download Qwen/Qwen2.5-7B --revision v2`"));
}

TEST_CASE("bad_: cache folders without snapshots, unknown revisions, broken refs, revisions of directories") {
  ScratchDir tmp;
  const std::string folder = make_hub_folder(tmp.path());
  const std::vector<HubCache> caches{{tmp.path(), "HF_HUB_CACHE"}};
  std::string m = message_of([&] { resolve_model_dir("org/tiny", "", "v9", caches); });
  CHECK_THAT(m, Catch::Matchers::ContainsSubstring("no revision 'v9' (neither refs/v9 nor snapshots/v9"));
  CHECK_THAT(m, Catch::Matchers::ContainsSubstring(kCommit));  // what the folder does hold
  m = message_of([&] { resolve_model_dir("org/tiny", "", "../../etc", caches); });
  CHECK_THAT(m, Catch::Matchers::ContainsSubstring("is not a ref or commit name"));
  write_text(folder + "/refs/stale", "ffffffffffffffffffffffffffffffffffffffff");
  m = message_of([&] { resolve_model_dir("org/tiny", "", "stale", caches); });
  CHECK_THAT(m, Catch::Matchers::ContainsSubstring("refs/stale: names commit ffff"));
  write_text(folder + "/refs/odd", "../snapshots");
  m = message_of([&] { resolve_model_dir("org/tiny", "", "odd", caches); });
  CHECK_THAT(m, Catch::Matchers::ContainsSubstring("is not a commit"));
  const std::string empty = tmp / "models--org--empty";
  std::filesystem::create_directories(empty + "/blobs");
  m = message_of([&] { resolve_model_dir(empty, "", "", caches); });
  CHECK_THAT(m,
             Catch::Matchers::ContainsSubstring("models--org--empty: a Hugging Face cache folder without snapshots/"));
  CHECK_THAT(m, Catch::Matchers::ContainsSubstring("`huggingface-cli download org/empty`"));
  m = message_of([&] { resolve_model_dir(folder + "/snapshots/" + kCommit, "", "main", caches); });
  CHECK_THAT(m, Catch::Matchers::ContainsSubstring("a model directory, so revision 'main' cannot apply"));
}

TEST_CASE("good_: hub ids are org/name, and the caches come from the environment in huggingface_hub's order") {
  CHECK(is_hub_id("Qwen/Qwen2.5-7B"));
  CHECK(is_hub_id("meta-llama/Llama-3.2-1B"));
  CHECK_FALSE(is_hub_id("gpt2"));
  CHECK_FALSE(is_hub_id("a/b/c"));
  CHECK_FALSE(is_hub_id("../models"));
  CHECK_FALSE(is_hub_id("/abs/path"));
  CHECK_FALSE(is_hub_id("org/na--me"));
  CHECK_FALSE(is_hub_id("org/.hidden"));
  HubEnvVar a("HF_HUB_CACHE", "/hub"), b("HF_HOME", "/hf"), c("XDG_CACHE_HOME", ""), d("HOME", "/home/u");
  const std::vector<HubCache> caches = hub_caches_from_env();
  REQUIRE(caches.size() == 3);
  CHECK(caches[0].dir == "/hub");
  CHECK(caches[1].dir == "/hf/hub");
  CHECK(caches[2].dir == "/home/u/.cache/huggingface/hub");
  HubEnvVar e("HF_HUB_CACHE", "/hf/hub");  // the same directory twice is searched once
  CHECK(hub_caches_from_env().size() == 2);
}
