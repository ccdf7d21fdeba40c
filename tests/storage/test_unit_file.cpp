// Unit files and tables: round trips for every table, arrays, and refusal of bad files.
#include <cmath>
#include <filesystem>
#include <functional>
#include <vector>

#include "common/errors.hpp"
#include "storage/hdf5.hpp"
#include "storage/unit_file.hpp"
#include "storage/unit_seal.hpp"
#include "support/catch.hpp"
#include "support/test_support.hpp"

using namespace linsweep;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;
using linsweep::test::ScratchDir;

namespace {

// Two rows of plausible values for any table schema.
Table sample_rows(const std::string& name, int seed) {
  Table t = empty_table(name);
  for (int r = 0; r < 2; ++r) {
    Row row;
    for (const auto& c : t.columns) {
      switch (c.type) {
        case ColumnType::kInt:
          row.emplace_back(std::int64_t{seed * 100 + r});
          break;
        case ColumnType::kFloat:
          row.emplace_back(seed + r * 0.25 + 1e-9);
          break;
        case ColumnType::kString:
          row.emplace_back(c.name + "-" + std::to_string(seed) + (r ? "-longer-value" : ""));
          break;
      }
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace

UnitResult sample_unit(const std::string& id, int seed) {
  UnitResult u;
  u.unit_id = id;
  u.kind = "fit";
  u.params = R"({"layer": 1, "lambda": [0.01]})";
  for (const auto& schema : table_schemas()) u.tables.push_back(sample_rows(schema.name, seed));
  u.arrays["surrogate/W"] = {{2, 3}, {1, 2, 3, 4, 5, 6.5}};
  u.arrays["surrogate/stats/n"] = {{}, {512}};
  return u;
}

TEST_CASE("good_: every table, its arrays and provenance round-trip through a unit file") {
  ScratchDir dir;
  const UnitResult u = sample_unit("unit-a", 3);
  write_unit_file(dir / "u.h5", u);
  const UnitResult back = read_unit_file(dir / "u.h5");
  CHECK(back.unit_id == "unit-a");
  CHECK(back.kind == "fit");
  CHECK(back.params == u.params);
  REQUIRE(back.tables.size() == table_schemas().size());
  for (std::size_t i = 0; i < u.tables.size(); ++i) {
    INFO(u.tables[i].name);
    CHECK(back.tables[i].name == u.tables[i].name);
    CHECK(back.tables[i].rows == u.tables[i].rows);
  }
  CHECK(back.arrays.at("surrogate/W").shape == std::vector<std::int64_t>{2, 3});
  CHECK(back.arrays.at("surrogate/W").values == u.arrays.at("surrogate/W").values);
  CHECK(back.arrays.at("surrogate/stats/n").values == std::vector<double>{512});
}

TEST_CASE("bad_: truncated, corrupted, foreign and newer-schema unit files are refused") {
  ScratchDir dir;
  write_unit_file(dir / "good.h5", sample_unit("g", 1));
  const std::string bytes = test::read_text(dir / "good.h5");
  test::write_text(dir / "truncated.h5", bytes.substr(0, bytes.size() / 2));
  std::string corrupt = bytes;
  for (std::size_t i = 600; i < corrupt.size(); i += 97) corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5A);
  test::write_text(dir / "corrupt.h5", corrupt);
  test::write_text(dir / "text.h5", "just some text");
  {
    UnitResult newer = sample_unit("n", 2);
    write_unit_file(dir / "newer.h5", newer);
    H5Id f = H5_FILE(H5Fopen((dir / "newer.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    write_int_attribute(f, "schema_version", kStoreSchemaVersion + 1);
    f.close("H5Fclose");
    write_unit_seal(dir / "newer.h5");  // as a newer build would have sealed it
  }
  for (const char* name : {"truncated.h5", "corrupt.h5", "text.h5", "newer.h5"}) {
    INFO(name);
    try {
      read_unit_file(dir / name);
      FAIL("accepted " << name);
    } catch (const StorageError& e) {
      CHECK(e.exit_code() == ExitCode::kBadInput);
      CHECK(std::string(e.what()).rfind(dir / name, 0) == 0);
      CHECK(std::string(e.what()).find('\n') == std::string::npos);
    }
  }
  CHECK_THROWS_WITH(read_unit_file(dir / "newer.h5"), ContainsSubstring("newer than this build"));
  CHECK_THROWS_WITH(read_unit_file(dir / "truncated.h5"), ContainsSubstring("truncated"));
  CHECK_THROWS_WITH(read_unit_file(dir / "corrupt.h5"), ContainsSubstring("checksum mismatch"));
  CHECK_THROWS_WITH(read_unit_file(dir / "text.h5"), ContainsSubstring("not a linsweep unit file"));
}

TEST_CASE("bad_: any changed byte after the seal is refused before libhdf5 reads the file") {
  ScratchDir dir;
  write_unit_file(dir / "good.h5", sample_unit("g", 1));
  const std::string bytes = test::read_text(dir / "good.h5");
  REQUIRE(bytes.size() > kUnitSealBytes);
  CHECK(bytes.compare(0, 16, "LINSWEEP UNIT v1") == 0);
  CHECK(bytes.compare(kUnitSealBytes, 8, "\x89HDF\r\n\x1a\n") == 0);  // the superblock follows the user block
  verify_unit_seal(dir / "good.h5");
  // One flipped bit anywhere (table rows, arrays, attributes, HDF5 metadata) or one byte more.
  for (std::size_t at : {kUnitSealBytes, kUnitSealBytes + 1, bytes.size() / 2, bytes.size() - 1}) {
    INFO(at);
    std::string flipped = bytes;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x01);
    test::write_text(dir / "flipped.h5", flipped);
    CHECK_THROWS_WITH(read_unit_header(dir / "flipped.h5"), ContainsSubstring("checksum mismatch"));
  }
  test::write_text(dir / "longer.h5", bytes + "x");
  CHECK_THROWS_WITH(read_unit_file(dir / "longer.h5"), ContainsSubstring("sealed at " + std::to_string(bytes.size())));
  std::string unsealed = bytes;
  unsealed.replace(0, 16, std::string(16, '\0'));  // an HDF5 file with a user block but no seal
  test::write_text(dir / "unsealed.h5", unsealed);
  CHECK_THROWS_WITH(read_unit_file(dir / "unsealed.h5"), ContainsSubstring("no seal"));
}

TEST_CASE("bad_: extents and attributes that claim more than the file holds are refused before reading") {
  ScratchDir dir;
  struct Case {
    const char* name;
    std::function<void(hid_t file)> mutate;
    const char* message;
    bool in_arrays_file = false;  // the mutation is in the unit's arrays file
  };
  const Case cases[] = {
      // H5Aread writes every element: 64 values into a one-value buffer before the check existed.
      {"bad_attr_array",
       [](hid_t f) {
         H5_CHECK(H5Adelete(f, "unit_id"));
         H5Id type = H5_TYPE(H5Tcopy(H5T_C_S1));
         H5_CHECK(H5Tset_size(type, 8));
         const hsize_t n = 64;
         H5Id space = H5_SPACE(H5Screate_simple(1, &n, nullptr));
         H5Id attr = H5_ATTR(H5Acreate2(f, "unit_id", type, space, H5P_DEFAULT, H5P_DEFAULT));
         const std::string values(8 * n, 'x');
         H5_CHECK(H5Awrite(attr, type, values.data()));
       },
       "attribute 'unit_id' does not hold exactly one value"},
      {"bad_int_attr_array",
       [](hid_t f) {
         H5_CHECK(H5Adelete(f, "schema_version"));
         const hsize_t n = 16;
         H5Id space = H5_SPACE(H5Screate_simple(1, &n, nullptr));
         H5Id attr = H5_ATTR(H5Acreate2(f, "schema_version", H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT));
         const std::vector<long long> v(n, 1);
         H5_CHECK(H5Awrite(attr, H5T_NATIVE_LLONG, v.data()));
       },
       "attribute 'schema_version' does not hold exactly one value"},
      // Chunked and never written: a few hundred bytes that claim 2^25 rows (gigabytes to read).
      {"bad_table_rows",
       [](hid_t f) {
         H5Id tables = H5_GROUP(H5Gopen2(f, "tables", H5P_DEFAULT));
         H5Id old = H5_DATASET(H5Dopen2(tables, "all_linear", H5P_DEFAULT));
         H5Id type = H5_TYPE(H5Dget_type(old));
         old.reset();
         H5_CHECK(H5Ldelete(tables, "all_linear", H5P_DEFAULT));
         const hsize_t n = hsize_t{1} << 25, chunk = 1024;
         H5Id space = H5_SPACE(H5Screate_simple(1, &n, nullptr));
         H5Id dcpl = H5_PLIST(H5Pcreate(H5P_DATASET_CREATE));
         H5_CHECK(H5Pset_chunk(dcpl, 1, &chunk));
         H5_DATASET(H5Dcreate2(tables, "all_linear", type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
       },
       "table 'all_linear' declares 33554432 elements"},
      {"bad_array_extent",
       [](hid_t f) {
         H5Id arrays = H5_GROUP(H5Gopen2(f, "arrays", H5P_DEFAULT));
         const hsize_t dims[2] = {hsize_t{1} << 15, hsize_t{1} << 15}, chunk[2] = {256, 256};
         H5Id space = H5_SPACE(H5Screate_simple(2, dims, nullptr));
         H5Id dcpl = H5_PLIST(H5Pcreate(H5P_DATASET_CREATE));
         H5_CHECK(H5Pset_chunk(dcpl, 2, chunk));
         H5_DATASET(H5Dcreate2(arrays, "huge", H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
       },
       "array 'huge' declares 1073741824 elements", true},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const std::string path = dir / (std::string(c.name) + ".h5");
    write_unit_file(path, sample_unit("u", 1));
    const std::string mutated = c.in_arrays_file ? unit_arrays_path(path) : path;
    {
      H5Id f = H5_FILE(H5Fopen(mutated.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
      c.mutate(f);
    }
    write_unit_seal(mutated);  // what a writer with this bug would have sealed: the checks after the seal
    try {
      read_unit_file(path);
      FAIL("accepted " << c.name);
    } catch (const StorageError& e) {
      CHECK(e.exit_code() == ExitCode::kBadInput);
      CHECK_THAT(e.what(), StartsWith(mutated) && ContainsSubstring(c.message));
    }
    if (c.in_arrays_file) CHECK_NOTHROW(read_unit_tables(path));  // the tables never touch the arrays
  }
}

TEST_CASE("good_: a unit's tables are read without its arrays file; its arrays need it") {
  ScratchDir dir;
  UnitResult u = sample_unit("unit-b", 2);
  u.provenance = {.version = "9.9.9", .host = "n2", .rank = 3, .group_ranks = 2, .started = 10.5, .finished = 12.25};
  write_unit_file(dir / "u.h5", u);
  REQUIRE(std::filesystem::exists(dir / "u.arrays.h5"));
  const UnitHeader h = read_unit_header(dir / "u.h5");
  CHECK(h.arrays == 2);
  CHECK(h.provenance.version == "9.9.9");
  CHECK(h.provenance.host == "n2");
  CHECK(h.provenance.rank == 3);
  CHECK(h.provenance.group_ranks == 2);
  CHECK(h.provenance.finished == 12.25);
  std::filesystem::remove(dir / "u.arrays.h5");
  const UnitResult tables = read_unit_tables(dir / "u.h5");
  CHECK(tables.tables.size() == u.tables.size());
  CHECK(tables.arrays.empty());
  CHECK(tables.provenance.started == 10.5);
  CHECK_THROWS_WITH(read_unit_file(dir / "u.h5"), StartsWith(dir / "u.arrays.h5"));
  UnitResult plain = sample_unit("unit-c", 3);
  plain.arrays.clear();
  write_unit_file(dir / "c.h5", plain);
  CHECK_FALSE(std::filesystem::exists(dir / "c.arrays.h5"));
  CHECK(read_unit_file(dir / "c.h5").arrays.empty());
}

TEST_CASE("bad_: rows that do not match their schema are refused before writing") {
  ScratchDir dir;
  UnitResult u = sample_unit("x", 1);
  u.tables[0].rows[0][1] = std::string("not an int");
  CHECK_THROWS_WITH(write_unit_file(dir / "x.h5", u), ContainsSubstring("column 'layer' has the wrong type"));
  CHECK_THROWS_WITH(empty_table("nope"), ContainsSubstring("known: all_linear, fits, gates"));
}

#include "storage/surrogate_store.hpp"

TEST_CASE("good_: surrogates keep W, b per lambda and the float64 statistics") {
  ScratchDir dir;
  StoredSurrogate s;
  s.stats.d = 2;
  s.stats.n = 512;
  s.stats.mean_x = {0.5, -1.25};
  s.stats.mean_y = {1, 2};
  s.stats.xcxc = {4, 1, 1, 3};
  s.stats.xcyc = {1e-300, 2, 3, 1e300};
  s.fits = {{0.1, {1, 2, 3, 4}, {5, 6}}, {0.01, {7, 8, 9, 10}, {11, 12}}};
  UnitResult u;
  u.unit_id = "fit-1";
  u.kind = "fit";
  u.params = "{}";
  put_surrogate(u, surrogate_key("gpt2-medium", "wikitext103", 12), s);
  write_unit_file(dir / "u.h5", u);
  const StoredSurrogate back =
      get_surrogate(read_unit_file(dir / "u.h5"), surrogate_key("gpt2-medium", "wikitext103", 12));
  CHECK(back.stats.n == 512);
  CHECK(back.stats.xcyc == s.stats.xcyc);
  CHECK(back.stats.mean_x == s.stats.mean_x);
  REQUIRE(back.fits.size() == 2);
  CHECK(back.fits[0].lambda == 0.01);  // ascending
  CHECK(back.fits[0].weight == s.fits[1].weight);
  CHECK(back.fits[1].bias == s.fits[0].bias);
  CHECK_THROWS_WITH(get_surrogate(u, surrogate_key("gpt2-medium", "lambada", 12)), ContainsSubstring("is missing"));
}

TEST_CASE(
    "good_: a table written before its optional columns existed reads with their defaults; bad_: a key column "
    "missing") {
  ScratchDir dir;
  Table old = empty_table("gates");
  std::vector<Column> kept;
  for (const auto& c : old.columns)
    if (c.required) kept.push_back(c);
  REQUIRE(kept.size() < old.columns.size());
  old.columns = kept;
  old.rows.push_back({std::string("m"), std::int64_t{1}, std::string("c"), std::string("linear"), std::int64_t{65}, 0.6,
                      40.0, 12.0, 1.5, 0.5, 2.5});
  UnitResult u;
  u.unit_id = "old-gate";
  u.kind = "gate";
  u.params = "{}";
  u.tables.push_back(old);
  write_unit_file(dir / "old.h5", u);
  const UnitResult back = read_unit_file(dir / "old.h5");
  REQUIRE(back.tables.size() == 1);
  const Table& t = back.tables[0];
  CHECK(t.columns.size() == empty_table("gates").columns.size());
  CHECK(std::get<double>(t.rows[0][static_cast<std::size_t>(t.column_index("auc"))]) == 0.6);
  CHECK(std::get<std::int64_t>(t.rows[0][static_cast<std::size_t>(t.column_index("selected"))]) == -1);
  CHECK(std::isnan(std::get<double>(t.rows[0][static_cast<std::size_t>(t.column_index("select_auc"))])));

  old.columns.erase(old.columns.begin() + 5);  // auc: a key column
  for (auto& r : old.rows) r.erase(r.begin() + 5);
  u.tables = {old};
  write_unit_file(dir / "bad.h5", u);
  CHECK_THROWS_WITH(read_unit_file(dir / "bad.h5"), ContainsSubstring("column 'auc' is missing"));
}
