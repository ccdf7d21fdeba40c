// Checkpoints: single file, sharded index, refusal of pickle-only and unsafe shard names.
#include <filesystem>

#include "common/errors.hpp"
#include "engine/model/hf_weights.hpp"
#include "support/catch.hpp"
#include "support/test_support.hpp"

using namespace linsweep;
using linsweep::test::ScratchDir;

namespace {

// Rewrites `dir`'s model.safetensors as two shards plus an index.
void shard_checkpoint(const std::string& dir) {
  std::vector<TensorBytes> a, b;
  nlohmann::json map = nlohmann::json::object();
  {
    SafetensorsFile f(dir + "/model.safetensors");
    std::size_t i = 0;
    for (const auto& [name, info] : f.tensors()) {
      TensorBytes t{name, info.dtype, info.shape, {info.data.begin(), info.data.end()}};
      const bool first = (i++ % 2) == 0;
      (first ? a : b).push_back(std::move(t));
      map[name] = first ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
    }
  }
  write_safetensors(dir + "/model-00001-of-00002.safetensors", a);
  write_safetensors(dir + "/model-00002-of-00002.safetensors", b);
  std::filesystem::remove(dir + "/model.safetensors");
  test::write_text(dir + "/model.safetensors.index.json",
                   nlohmann::json({{"metadata", {}}, {"weight_map", map}}).dump());
}

}  // namespace

TEST_CASE("good_: single-file and sharded checkpoints expose the same tensors") {
  ScratchDir dir;
  test::copy_model("tiny-gpt2", dir / "m");
  HfWeights single(dir / "m");
  shard_checkpoint(dir / "m");
  HfWeights sharded(dir / "m");
  CHECK(sharded.files().size() == 2);
  CHECK(sharded.names() == single.names());
  CHECK(sharded.total_bytes() == single.total_bytes());
  const TensorInfo* w = sharded.find("h.2.mlp.c_fc.weight");
  REQUIRE(w != nullptr);
  CHECK(std::equal(w->data.begin(), w->data.end(), single.find("h.2.mlp.c_fc.weight")->data.begin()));
}

TEST_CASE("bad_: pickle-only, unsafe shard names, missing shards and tensors are refused") {
  ScratchDir dir;
  auto expect = [](const std::string& d, const std::string& needle) {
    try {
      HfWeights c(d);
      FAIL("accepted " << d);
    } catch (const ModelError& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(needle) != std::string::npos);
    }
  };
  std::filesystem::create_directories(dir / "pickle");
  test::write_text(dir / "pickle/pytorch_model.bin", "PK\x03\x04");
  expect(dir / "pickle", "pickle checkpoints are not read; convert");

  std::filesystem::create_directories(dir / "empty");
  expect(dir / "empty", "no model.safetensors");

  test::copy_model("tiny-gpt2", dir / "escape");
  test::write_text(dir / "escape/model.safetensors.index.json",
                   R"({"weight_map": {"wte.weight": "../x.safetensors"}})");
  std::filesystem::remove(dir / "escape/model.safetensors");
  expect(dir / "escape", "not a plain file name");

  test::copy_model("tiny-gpt2", dir / "missing_tensor");
  shard_checkpoint(dir / "missing_tensor");
  auto idx = nlohmann::json::parse(test::read_text(dir / "missing_tensor/model.safetensors.index.json"));
  idx["weight_map"]["not.there"] = "model-00001-of-00002.safetensors";
  test::write_text(dir / "missing_tensor/model.safetensors.index.json", idx.dump());
  expect(dir / "missing_tensor", "'not.there' named by the index is missing");

  test::copy_model("tiny-gpt2", dir / "no_shard");
  shard_checkpoint(dir / "no_shard");
  std::filesystem::remove(dir / "no_shard/model-00002-of-00002.safetensors");
  expect(dir / "no_shard", "model-00002-of-00002.safetensors: cannot open");

  test::copy_model("tiny-gpt2", dir / "bad_index");
  std::filesystem::remove(dir / "bad_index/model.safetensors");
  test::write_text(dir / "bad_index/model.safetensors.index.json", "{\"weight_map\": 3}");
  expect(dir / "bad_index", "no weight_map object");
}
