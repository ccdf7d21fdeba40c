// FileHashCache: a digest is reused only while size, mtime and inode are unchanged.
#include <chrono>
#include <filesystem>
#include <iterator>

#include "common/errors.hpp"
#include "common/file_hash_cache.hpp"
#include "common/sha256.hpp"
#include "support/catch.hpp"
#include "support/test_support.hpp"

using namespace linsweep;
using linsweep::test::ScratchDir;
namespace fs = std::filesystem;

namespace {

void bump_mtime(const std::string& path) {  // as an edit a second later would
  fs::last_write_time(path, fs::last_write_time(path) + std::chrono::seconds(1));
}

}  // namespace

TEST_CASE("a cached digest is reused until the file's size, mtime or inode changes") {
  ScratchDir dir;
  const std::string file = dir / "weights.bin", cache = dir / "cache.json";
  test::write_text(file, "abc");
  {
    FileHashCache c(cache);
    CHECK(c.sha256(file) == sha256_hex("abc"));
    CHECK(c.bytes_hashed() == 3);
    CHECK(c.sha256(file) == sha256_hex("abc"));
    CHECK(c.bytes_hashed() == 3);  // the second ask reads nothing
    c.save();
  }
  {
    FileHashCache c(cache);  // another process: the saved entry
    CHECK(c.sha256(file) == sha256_hex("abc"));
    CHECK(c.bytes_hashed() == 0);
  }
  SECTION("same size, new content, later mtime") {
    test::write_text(file, "abd");
    bump_mtime(file);
    FileHashCache c(cache);
    CHECK(c.sha256(file) == sha256_hex("abd"));
    CHECK(c.bytes_hashed() == 3);
  }
  SECTION("another size, mtime put back") {
    const auto mtime = fs::last_write_time(file);
    test::write_text(file, "abcd");
    fs::last_write_time(file, mtime);
    FileHashCache c(cache);
    CHECK(c.sha256(file) == sha256_hex("abcd"));
  }
  SECTION("another inode (a file renamed over it), size and mtime kept") {
    const auto mtime = fs::last_write_time(file);
    test::write_text(dir / "new.bin", "xyz");
    fs::last_write_time(dir / "new.bin", mtime);
    fs::rename(dir / "new.bin", file);
    FileHashCache c(cache);
    CHECK(c.sha256(file) == sha256_hex("xyz"));
  }
  SECTION("a damaged cache file is ignored and rewritten") {
    test::write_text(cache, "{\"format\": 1, \"files\": {\"" + file + "\": {\"size\": \"3\"}}");
    FileHashCache c(cache);
    CHECK(c.sha256(file) == sha256_hex("abc"));
    CHECK(c.bytes_hashed() == 3);
    c.save();
    CHECK(FileHashCache(cache).sha256(file) == sha256_hex("abc"));
  }
}

TEST_CASE("a memory-only cache saves nothing; a missing file is an InputError naming it") {
  ScratchDir dir;
  FileHashCache c;
  test::write_text(dir / "a", "abc");
  CHECK(c.sha256(dir / "a") == sha256_hex("abc"));
  c.save();
  CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 1);  // only `a`
  CHECK_THROWS_AS(c.sha256(dir / "missing"), InputError);
}
