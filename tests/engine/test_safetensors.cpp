// Safetensors reader: the fixtures parse; every malformed variant is refused with the file named.
#include <cstring>

#include "common/errors.hpp"
#include "engine/safetensors.hpp"
#include "support/catch.hpp"
#include "support/test_support.hpp"

using namespace linsweep;
using linsweep::test::ScratchDir;

namespace {

// A file with the given header text and `data_bytes` zero bytes of data.
std::string make_file(const std::string& header, std::size_t data_bytes, std::uint64_t declared_len = UINT64_MAX) {
  std::uint64_t len = declared_len == UINT64_MAX ? header.size() : declared_len;
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((len >> (8 * i)) & 0xFF);
  return out + header + std::string(data_bytes, '\0');
}

}  // namespace

TEST_CASE("good_: the fixture checkpoints parse with shapes and offsets") {
  SafetensorsFile f(test::model_dir("tiny-gpt2") + "/model.safetensors");
  const TensorInfo* wte = f.find("wte.weight");
  REQUIRE(wte != nullptr);
  CHECK(wte->dtype == DType::kF32);
  CHECK(wte->shape == std::vector<std::int64_t>{1024, 64});
  CHECK(wte->data.size() == 1024u * 64u * 4u);
  CHECK(f.find("nope") == nullptr);
  CHECK(f.metadata().at("format") == "pt");
}

TEST_CASE("good_: write_safetensors round-trips F32, F16 and BF16") {
  ScratchDir dir;
  std::vector<TensorBytes> ts = {
      {"a", DType::kF32, {2, 3}, std::vector<std::uint8_t>(24, 1)},
      {"b", DType::kF16, {5}, std::vector<std::uint8_t>(10, 2)},
      {"c", DType::kBF16, {0}, {}},
  };
  write_safetensors(dir / "x.safetensors", ts, {{"format", "pt"}});
  SafetensorsFile f(dir / "x.safetensors");
  REQUIRE(f.tensors().size() == 3);
  CHECK(f.find("a")->shape == std::vector<std::int64_t>{2, 3});
  CHECK(f.find("b")->dtype == DType::kF16);
  CHECK(f.find("b")->data[0] == 2);
  CHECK(f.find("c")->numel() == 0);
}

TEST_CASE("bad_: malformed safetensors files are refused with the file and problem named") {
  struct Case {
    const char* name;
    std::string bytes;
    const char* message;
  };
  const std::string t = R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";
  const Case cases[] = {
      {"bad_empty", "", "truncated"},
      {"bad_short", std::string("\x10\x00\x00", 3), "truncated"},
      {"bad_header_past_end", make_file(t, 16, 4096), "runs past the end"},
      {"bad_header_huge", make_file(t, 16, std::uint64_t{1} << 40), "exceeds the limit"},
      {"bad_json", make_file("{not json", 0), "not valid JSON"},
      {"bad_not_object", make_file("[1,2]", 0), "not a JSON object"},
      {"bad_dtype", make_file(R"({"w":{"dtype":"F13","shape":[2],"data_offsets":[0,8]}})", 8), "unknown dtype 'F13'"},
      {"bad_offsets_outside", make_file(t, 8), "outside the data section"},
      {"bad_size_mismatch", make_file(R"({"w":{"dtype":"F32","shape":[3,2],"data_offsets":[0,16]}})", 16), "need 24"},
      {"bad_overlap",
       make_file(
           R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
           12),
       "overlap"},
      {"bad_reversed_offsets", make_file(R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", 8),
       "invalid data_offsets"},
      {"bad_negative_shape", make_file(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}})", 0),
       "invalid shape"},
      {"bad_shape_overflow",
       make_file(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,0]}})", 0),
       "overflows"},
      {"bad_no_dtype", make_file(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", 4), "no dtype"},
      {"bad_metadata", make_file(R"({"__metadata__":[1]})", 0), "__metadata__"},
  };
  ScratchDir dir;
  for (const auto& c : cases) {
    INFO(c.name);
    const std::string path = dir / (std::string(c.name) + ".safetensors");
    test::write_text(path, c.bytes);
    try {
      SafetensorsFile f(path);
      FAIL("accepted " << c.name);
    } catch (const ModelError& e) {
      const std::string msg = e.what();
      CHECK(msg.rfind(path + ": ", 0) == 0);
      CHECK(msg.find(c.message) != std::string::npos);
      CHECK(msg.find('\n') == std::string::npos);
    }
  }
  CHECK_THROWS_AS(SafetensorsFile(dir / "missing.safetensors"), ModelError);
}
