// Brown genres: file selection by genre letter, the file-level split, and the Brown directories written for the demo.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iterator>
#include <random>
#include <set>

#include "common/errors.hpp"
#include "engine/corpus/brown_genres.hpp"
#include "engine/corpus/corpus.hpp"
#include "support/catch.hpp"
#include "support/expect_error.hpp"
#include "support/test_support.hpp"

using namespace linsweep;
using linsweep::test::ScratchDir;

namespace {

// A Brown directory with `per_genre` files (c<g>01 ..) for each letter of `genres`; each file
// holds one tagged sentence naming itself, so documents can be traced back to files.
void make_brown(const std::string& dir, const std::string& genres, int per_genre) {
  std::filesystem::create_directories(dir);
  for (char g : genres)
    for (int i = 1; i <= per_genre; ++i) {
      const std::string name = std::string("c") + g + (i < 10 ? "0" : "") + std::to_string(i);
      test::write_text(dir + "/" + name, "\n\n\tFile/nn " + name + "/np ./.\n");
    }
}

std::vector<std::string> names(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) out.push_back(std::filesystem::path(p).filename().string());
  return out;
}

std::vector<std::string> brown_names_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (is_brown_name(e.path().filename().string())) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("good_: the demo corpora are news A-C, learned J, fiction K-R, with no genre shared") {
  const auto& defs = demo_brown_corpora();
  REQUIRE(defs.size() == 3);
  CHECK(defs[0].name == "news");
  CHECK(defs[0].genres == "abc");
  CHECK(defs[1].name == "learned");
  CHECK(defs[1].genres == "j");
  CHECK(defs[2].name == "fiction");
  CHECK(defs[2].genres == "klmnpr");
  std::multiset<char> letters;
  for (const auto& d : defs) letters.insert(d.genres.begin(), d.genres.end());
  CHECK(std::set<char>(letters.begin(), letters.end()).size() == letters.size());
}

TEST_CASE("good_: files of a genre set, by the letter after 'c', sorted, other names ignored") {
  ScratchDir dir;
  make_brown(dir / "brown", "bajk", 3);
  for (const char* other : {"README", "CONTENTS", "cs01", "ca1", "ca001", "xa01", ".ca01.tmp"})
    test::write_text(dir / ("brown/" + std::string(other)), "x");
  const auto news = brown_genre_files(dir / "brown", "ba");
  CHECK(names(news) == std::vector<std::string>{"ca01", "ca02", "ca03", "cb01", "cb02", "cb03"});
  CHECK(news.front() == dir / "brown/ca01");  // full paths
  CHECK(names(brown_genre_files(dir / "brown", "J")) == std::vector<std::string>{"cj01", "cj02", "cj03"});
  CHECK(names(brown_genre_files(dir / "brown", "kj")) ==
        std::vector<std::string>{"cj01", "cj02", "cj03", "ck01", "ck02", "ck03"});
}

TEST_CASE("good_: every 5th file by name goes to evaluation, whatever the input order") {
  std::vector<std::string> files;
  for (int i = 1; i <= 12; ++i) files.push_back("/b/ca" + std::string(i < 10 ? "0" : "") + std::to_string(i));
  files.push_back("/elsewhere/cb01");  // sorted by name, not by directory
  auto shuffled = files;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(7));
  const BrownSplit split = split_brown_files(shuffled);
  CHECK(names(split.eval) == std::vector<std::string>{"ca05", "ca10"});
  CHECK(names(split.train) == std::vector<std::string>{"ca01", "ca02", "ca03", "ca04", "ca06", "ca07", "ca08", "ca09",
                                                       "ca11", "ca12", "cb01"});
  CHECK(split.train.back() == "/elsewhere/cb01");
  const BrownSplit again = split_brown_files(files);
  CHECK(again.train == split.train);
  CHECK(again.eval == split.eval);
  const BrownSplit thirds = split_brown_files(files, 3);
  CHECK(names(thirds.eval) == std::vector<std::string>{"ca03", "ca06", "ca09", "ca12"});
  CHECK(thirds.train.size() == 9);
}

TEST_CASE("good_: a written part is a Brown directory of exactly its files; rewriting it drops the others") {
  ScratchDir dir;
  make_brown(dir / "brown", "a", 10);
  const BrownSplit split = split_brown_files(brown_genre_files(dir / "brown", "a"));
  write_brown_directory(split.train, dir / "part");
  CHECK(brown_names_in(dir / "part") == names(split.train));
  const auto docs = read_documents(dir / "part", CorpusFormat::kBrown);
  REQUIRE(docs.size() == 8);
  CHECK(docs.front() == "File ca01.");
  CHECK(docs.back() == "File ca09.");
  CHECK(std::find(docs.begin(), docs.end(), "File ca05.") == docs.end());

  // Unchanged files are not rewritten (idempotent, fingerprints and mtimes stay).
  const auto before = std::filesystem::last_write_time(dir / "part/ca01");
  test::write_text(dir / "part/README", "kept");
  test::write_text(dir / "part/ca02", "\tStale/nn ./.\n");  // a changed copy is replaced
  write_brown_directory(split.train, dir / "part");
  CHECK(std::filesystem::last_write_time(dir / "part/ca01") == before);
  CHECK(test::read_text(dir / "part/ca02") == test::read_text(dir / "brown/ca02"));

  // The same directory reused for the other part holds only that part, and non-Brown files stay.
  write_brown_directory(split.eval, dir / "part");
  CHECK(brown_names_in(dir / "part") == std::vector<std::string>{"ca05", "ca10"});
  CHECK(test::read_text(dir / "part/README") == "kept");
  CHECK(read_documents(dir / "part", CorpusFormat::kBrown) == std::vector<std::string>{"File ca05.", "File ca10."});
}

TEST_CASE("good_: the three demo corpora are written as train/eval Brown directories") {
  ScratchDir dir;
  make_brown(dir / "brown", "abcdefghjklmnpr", 5);
  const auto corpora = write_demo_corpora(dir / "brown", dir / "demo");
  REQUIRE(corpora.size() == 3);
  const std::size_t files[3] = {15, 5, 30};
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& c = corpora[i];
    INFO(c.name);
    CHECK(c.name == demo_brown_corpora()[i].name);
    CHECK(c.train_dir == dir / ("demo/" + c.name + "/train"));
    CHECK(c.eval_dir == dir / ("demo/" + c.name + "/eval"));
    CHECK(c.eval_files == files[i] / 5);
    CHECK(c.train_files + c.eval_files == files[i]);
    const auto train = brown_names_in(c.train_dir), eval = brown_names_in(c.eval_dir);
    CHECK(train.size() == c.train_files);
    CHECK(eval.size() == c.eval_files);
    std::vector<std::string> both;
    std::set_intersection(train.begin(), train.end(), eval.begin(), eval.end(), std::back_inserter(both));
    CHECK(both.empty());
    for (const auto& n : train) CHECK(demo_brown_corpora()[i].genres.find(n[1]) != std::string::npos);
  }
  CHECK(brown_names_in(corpora[1].eval_dir) == std::vector<std::string>{"cj05"});
  // Genres D-H belong to no demo corpus.
  for (const auto& c : corpora)
    for (const auto& n : brown_names_in(c.train_dir)) CHECK(std::string("defgh").find(n[1]) == std::string::npos);
}

TEST_CASE("bad_: missing directory, absent genre, non-genre letter, too few files, bad names") {
  ScratchDir dir;
  make_brown(dir / "brown", "ak", 3);
  test::expect_error([&] { brown_genre_files(dir / "nowhere", "a"); }, "nowhere: no such directory");
  test::expect_error([&] { brown_genre_files(dir / "brown", "kl"); }, dir / "brown" + ": no Brown files of genre L");
  test::expect_error([&] { brown_genre_files(dir / "brown", "z"); }, "'z' is not a Brown genre letter");
  test::expect_error([&] { brown_genre_files(dir / "brown", ""); }, "no Brown genre requested");
  test::expect_error([&] { write_demo_corpora(dir / "brown", dir / "demo"); }, "no Brown files of genre B");

  const auto three = brown_genre_files(dir / "brown", "a");
  test::expect_error([&] { split_brown_files(three); }, "3 files leave no evaluation file");
  test::expect_error([&] { split_brown_files(three, 1); }, "eval_every must be at least 2");
  auto twice = three;
  twice.push_back("/other/ca02");
  test::expect_error([&] { split_brown_files(twice, 2); }, "is listed twice");

  test::write_text(dir / "notes.txt", "x");
  test::expect_error([&] { write_brown_directory({dir / "notes.txt"}, dir / "out"); },
                     "notes.txt: not a Brown file name");
  test::expect_error([&] { write_brown_directory({dir / "gone/ca01"}, dir / "out"); }, "gone/ca01: no such file");
  std::filesystem::create_directories(dir / "copy");
  std::filesystem::copy_file(dir / "brown/ca01", dir / "copy/ca01");
  test::expect_error(
      [&] {
        write_brown_directory({dir / "brown/ca01", dir / "copy/ca01"}, dir / "out");
      },
      "a second Brown file named ca01");
  CHECK_FALSE(std::filesystem::exists(dir / "out"));  // refused before anything was written
}

TEST_CASE("[brown] the real Brown corpus: 500 files, demo corpora of 88, 80 and 126 files", "[brown]") {
  const std::string brown = cache_dir() + "/brown";  // scripts/fetch_demo_data.sh
  REQUIRE(std::filesystem::exists(brown + "/ca01"));
  CHECK(brown_genre_files(brown, "abcdefghjklmnpr").size() == 500);
  ScratchDir dir;
  const auto corpora = write_demo_corpora(brown, dir / "demo");
  REQUIRE(corpora.size() == 3);
  CHECK(corpora[0].train_files == 71);
  CHECK(corpora[0].eval_files == 17);
  CHECK(corpora[1].train_files == 64);
  CHECK(corpora[1].eval_files == 16);
  CHECK(corpora[2].train_files == 101);
  CHECK(corpora[2].eval_files == 25);
  CHECK(read_documents(corpora[1].eval_dir, CorpusFormat::kBrown).size() == 16);
}
