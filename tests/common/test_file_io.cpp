// UTF-8 validation and size-limited reads.
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "support/catch.hpp"

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

TEST_CASE("fsync_path syncs files and directories and returns errno otherwise") {
  const std::string path = "test_fsync.tmp";
  { std::ofstream(path) << "x"; }
  CHECK(fsync_path(path) == 0);
  CHECK(fsync_path(".") == 0);
  CHECK(fsync_path("does/not/exist") == ENOENT);
  std::remove(path.c_str());
}

#include "common/sha256.hpp"

TEST_CASE("sha256 matches the FIPS 180-4 test vectors") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 h;
  const std::string a(1000, 'a');
  for (int i = 0; i < 1000; ++i) h.update(a);
  CHECK(h.hex() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");  // one million 'a'
}

TEST_CASE("printable escapes what would break a one-line message") {
  CHECK(printable("gpu") == "gpu");
  CHECK(printable("gpu\n#SBATCH --uid=0") == "gpu\\n#SBATCH --uid=0");
  CHECK(printable(std::string("a\0b\tc\r", 6)) == "a\\x00b\\tc\\r");
  CHECK(printable("Δ% ≤ 1") == "Δ% ≤ 1");                            // valid UTF-8 stays
  CHECK(printable("\xff\xfe x \xc3\x28") == "\\xff\\xfe x \\xc3(");  // each invalid byte escaped
}

TEST_CASE("read_line stops at the limit instead of reading an endless line whole") {
  struct Case {
    const char* name;
    std::string text;
    std::vector<std::pair<LineStatus, std::string>> expect;
  };
  const Case cases[] = {
      {"good_lines", "a\nbb\n", {{LineStatus::kLine, "a"}, {LineStatus::kLine, "bb"}, {LineStatus::kEnd, ""}}},
      {"good_empty_line", "\nx\n", {{LineStatus::kLine, ""}, {LineStatus::kLine, "x"}, {LineStatus::kEnd, ""}}},
      {"good_at_limit", "abcd\n", {{LineStatus::kLine, "abcd"}, {LineStatus::kEnd, ""}}},
      {"bad_torn_last", "a\nbc", {{LineStatus::kLine, "a"}, {LineStatus::kUnterminated, "bc"}}},
      {"bad_too_long", "abcde\n", {{LineStatus::kTooLong, "abcd"}}},
      {"bad_too_long_torn", "abcdefgh", {{LineStatus::kTooLong, "abcd"}}},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    std::istringstream in(c.text);
    std::string line;
    for (const auto& [status, text] : c.expect) {
      CHECK(read_line(in, &line, 4) == status);
      CHECK(line == text);
    }
  }
}
