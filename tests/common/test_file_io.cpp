// UTF-8 validation and size-limited reads.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include "common/errors.hpp"
#include "common/file_io.hpp"

#include <nlohmann/json.hpp>

using namespace linsweep;

TEST_CASE("find_invalid_utf8 accepts valid text and locates the first bad byte") {
  struct Case {
    std::string text;
    std::size_t bad;
  };
  const auto ok = std::string_view::npos;
  const Case cases[] = {
      {"plain ascii", ok},
      {"caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80", ok},
      {"bad \xff here", 4},
      {"truncated \xe6\x97", 10},
      {"overlong \xc0\xaf", 9},
      {"overlong3 \xe0\x80\xaf", 10},
      {"surrogate \xed\xa0\x80", 10},
      {"too big \xf4\x90\x80\x80", 8},
      {"lone continuation \x80", 18},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    CHECK(find_invalid_utf8(c.text) == c.bad);
  }
}

TEST_CASE("read_file refuses files over the limit before reading") {
  const std::string path = "test_file_io.tmp";
  { std::ofstream(path) << "0123456789"; }
  CHECK(read_file(path, 10) == "0123456789");
  CHECK_THROWS_AS(read_file(path, 9), InputError);
  CHECK_THROWS_AS(read_file("does/not/exist", 9), InputError);
  std::remove(path.c_str());
}

TEST_CASE("read_json_file names the file and the byte of a parse error") {
  const std::string path = "test_json.tmp";
  { std::ofstream(path) << "{\"a\": [1, 2,}"; }
  try {
    read_json_file(path, 1000);
    FAIL("no throw");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("test_json.tmp: invalid JSON at byte") == 0);
  }
  std::remove(path.c_str());
}
