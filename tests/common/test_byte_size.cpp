// Byte sizes as a spec writes them (common/byte_size.hpp).
#include "common/byte_size.hpp"
#include "support/catch.hpp"

using linsweep::byte_size_text;
using linsweep::parse_byte_size;

TEST_CASE("good_: byte sizes with and without units") {
  CHECK(parse_byte_size("123456789") == 123456789.0);
  CHECK(parse_byte_size("512MiB") == 512.0 * 1024 * 1024);
  CHECK(parse_byte_size("80GB") == 80e9);
  CHECK(parse_byte_size("1.5 GiB") == 1.5 * 1024 * 1024 * 1024);
  CHECK(parse_byte_size("0") == 0.0);
  CHECK(byte_size_text(512.0 * 1024 * 1024) == "512 MiB");
  CHECK(byte_size_text(800) == "800 B");
}

TEST_CASE("bad_: byte sizes that are none") {
  for (const char* bad : {"", "-1", "1e9", "12 gb", "GB", "nan", "inf", "0x10", "5  MiB", "1.5Gi", "+4"}) {
    INFO(bad);
    CHECK_FALSE(parse_byte_size(bad).has_value());
  }
}
