// Truncated BPE: GPT-2's ids kept for the first K merges, files our tokenizer loads, bad numbering refused.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>

#include "common/errors.hpp"
#include "engine/corpus/brown_genres.hpp"
#include "engine/corpus/corpus.hpp"
#include "engine/tokenizer/bpe_tokenizer.hpp"
#include "engine/tokenizer/pretokenizer.hpp"
#include "engine/tokenizer/truncate_bpe.hpp"
#include "support/catch.hpp"
#include "support/expect_error.hpp"
#include "support/test_support.hpp"

using namespace linsweep;
using linsweep::test::ScratchDir;

namespace {

// Fetched by scripts/fetch_gpt2_encoder.sh / fetch_demo_data.sh (ctest fixtures).
std::string brown_dir() { return cache_dir() + "/brown"; }

std::string fixture_text(const std::string& name) {
  return test::read_text(test::data_dir() + "/tokenizer/" + name + ".txt");
}
std::vector<TokenId> golden_ids(const std::string& file) {
  return nlohmann::json::parse(test::read_text(test::data_dir() + "/tokenizer/" + file)).get<std::vector<TokenId>>();
}

// Every pre-tokenized word whose encoding by `full` uses only ids below `limit` must be encoded
// identically by `cut` (the same merges apply in the same order); returns how many words that was,
// and counts in *others the words that needed a later merge (and so must differ).
std::size_t check_words(const Tokenizer& full, const Tokenizer& cut, TokenId limit, const std::string& text,
                        std::size_t* others) {
  std::size_t same = 0;
  *others = 0;
  for (std::string_view word : gpt2_pretokenize(text)) {
    const auto want = full.encode(word);
    const auto got = cut.encode(word);
    for (TokenId id : got) REQUIRE(id < limit);
    if (std::all_of(want.begin(), want.end(), [&](TokenId id) { return id < limit; })) {
      INFO(std::string(word));
      REQUIRE(got == want);
      ++same;
    } else {
      REQUIRE(got != want);
      ++*others;
    }
  }
  return same;
}

}  // namespace

TEST_CASE("good_: cutting the 767-merge fixture tokenizer to all its merges reproduces it") {
  ScratchDir dir;
  const auto info = truncate_bpe(test::model_dir("tiny-gpt2"), 767, dir / "k767");
  CHECK(info.merges == 767);
  CHECK(info.vocab_size == 1024);
  CHECK(info.eos_id == 1023);
  CHECK(nlohmann::json::parse(test::read_text(dir / "k767/vocab.json")) ==
        nlohmann::json::parse(test::read_text(test::model_dir("tiny-gpt2") + "/vocab.json")));
  CHECK(test::read_text(dir / "k767/merges.txt") == test::read_text(test::model_dir("tiny-gpt2") + "/merges.txt"));
  const auto tok_owner = load_tokenizer(dir / "k767");
  const Tokenizer& tok = *tok_owner;
  for (const char* name : {"edge", "brown_fiction"}) {
    INFO(name);
    CHECK(tok.encode(fixture_text(name)) == golden_ids(std::string(name) + ".k767.json"));
  }
}

TEST_CASE("good_: a shorter cut keeps the ids, round-trips and encodes like the longer one where it can") {
  ScratchDir dir;
  const auto info = truncate_bpe(test::model_dir("tiny-gpt2"), 511, dir / "k511");
  CHECK(info.vocab_size == 768);
  CHECK(info.eos_id == 767);
  const auto cut_owner = load_tokenizer(dir / "k511");
  const Tokenizer& cut = *cut_owner;
  const auto full_owner = load_tokenizer(test::model_dir("tiny-gpt2"));
  const Tokenizer& full = *full_owner;
  CHECK(cut.vocab_size() == 768);
  CHECK(dynamic_cast<const BpeTokenizer&>(cut).merge_count() == 511);
  CHECK(cut.eos_id() == 767);
  // The written vocab is GPT-2's numbering restricted to ids < 767, in id order.
  const auto vocab = nlohmann::ordered_json::parse(test::read_text(dir / "k511/vocab.json"));
  const auto original = nlohmann::json::parse(test::read_text(test::model_dir("tiny-gpt2") + "/vocab.json"));
  int expect = 0;
  for (auto it = vocab.begin(); it != vocab.end(); ++it, ++expect) {
    CHECK(it.value() == expect);
    if (it.key() != "<|endoftext|>") CHECK(original.at(it.key()) == expect);
  }
  CHECK(expect == 768);
  CHECK(test::read_text(dir / "k511/merges.txt").starts_with("#version: 0.2\n\xc4\xa0 t\n"));

  for (const char* name : {"edge", "brown_fiction"}) {
    INFO(name);
    const std::string text = fixture_text(name);
    const auto ids = cut.encode(text);
    CHECK(std::all_of(ids.begin(), ids.end(), [](TokenId id) { return id >= 0 && id < 767; }));
    CHECK(cut.decode(ids) == text);
    CHECK(ids.size() > full.encode(text).size());  // fewer merges, more tokens
  }
  std::size_t others = 0;
  const std::size_t same = check_words(full, cut, 767, fixture_text("brown_fiction"), &others);
  CHECK(same > 1000);  // neither class may be empty, or the check proves nothing
  CHECK(others > 50);

  // K = 0 leaves the bytes and the end-of-text token.
  const auto bytes_only = truncate_bpe(test::model_dir("tiny-gpt2"), 0, dir / "k0");
  CHECK(bytes_only.vocab_size == 257);
  const auto b_owner = load_tokenizer(dir / "k0");
  const Tokenizer& b = *b_owner;
  CHECK(b.encode("hi").size() == 2);
  // Writing again over an existing cut replaces it.
  truncate_bpe(test::model_dir("tiny-gpt2"), 300, dir / "k511");
  CHECK(load_tokenizer(dir / "k511")->vocab_size() == 557);
}

TEST_CASE("bad_: a source whose numbering is not GPT-2's merge order is refused, naming the file") {
  ScratchDir dir;
  const std::string src = dir / "src";
  test::copy_model("tiny-gpt2", src);
  const auto vocab = nlohmann::ordered_json::parse(test::read_text(src + "/vocab.json"));
  const std::string merges = test::read_text(src + "/merges.txt");
  auto with_vocab = [&](const std::function<void(nlohmann::ordered_json&)>& edit) {
    auto v = vocab;
    edit(v);
    test::write_text(src + "/vocab.json", v.dump());
    test::write_text(src + "/merges.txt", merges);
  };
  auto cut = [&](std::size_t k) { return [&, k] { truncate_bpe(src, k, dir / "out"); }; };

  test::expect_error(cut(768), "merges.txt: has 767 merges, fewer than the 768 asked for");
  // A byte token moved past 255 (swapped with the first merge's result, "Ġt" = 256).
  with_vocab([](nlohmann::ordered_json& v) { v["!"] = 256, v["\xc4\xa0t"] = 0; });
  test::expect_error(cut(10), "vocab.json: byte token '!' has id 256");
  // Two merge results swapped: merge 5 ("o n" -> "on") no longer yields id 261.
  with_vocab([](nlohmann::ordered_json& v) {
    const auto a = v["on"].get<int>(), b = v["re"].get<int>();
    v["on"] = b, v["re"] = a;
  });
  CHECK_NOTHROW(truncate_bpe(src, 4, dir / "out"));  // the first four merges are intact
  test::expect_error(cut(10), "merges.txt:6: merge 4 'r e': result 're' has id 261");
  test::expect_error(cut(10), "not 260 (ids would not stay GPT-2's)");
  with_vocab([](nlohmann::ordered_json& v) { v["on"] = 5; });
  test::expect_error(cut(10), "share id 5");
  with_vocab([](nlohmann::ordered_json& v) { v.erase("\xc4\xa0"); });
  test::expect_error(cut(1), "no token for byte 32");
  with_vocab([](nlohmann::ordered_json& v) { v["x"] = "seven"; });
  test::expect_error(cut(1), "id of 'x' is not an integer");
  // Merges: a malformed line, and a merge whose part only a later merge makes.
  with_vocab([](nlohmann::ordered_json&) {});
  test::write_text(src + "/merges.txt", "#version: 0.2\n\xc4\xa0 t\nbroken\n");
  test::expect_error(cut(2), "merges.txt:3: a merge must be two symbols");
  CHECK_NOTHROW(truncate_bpe(src, 1, dir / "out"));  // lines past K are not read
  test::write_text(src + "/merges.txt", "#version: 0.2\n\xc4\xa0t he\n");
  test::expect_error(cut(1), "part '\xc4\xa0t' is not a byte or an earlier merge's result");
  test::write_text(src + "/vocab.json", "{\"a\": ");
  test::expect_error(cut(1), "vocab.json: invalid JSON");
  std::filesystem::remove(src + "/merges.txt");
  test::expect_error(cut(1), "merges.txt: no such file");
  test::expect_error([&] { truncate_bpe(dir / "none", 1, dir / "out"); }, "none/vocab.json: no such file");
}

TEST_CASE("[gpt2] GPT-2's own files keep the merge-order numbering; the cuts give the reference ids", "[gpt2]") {
  REQUIRE(std::filesystem::exists(test::gpt2_tokenizer_dir() + "/vocab.json"));  // scripts/fetch_gpt2_encoder.sh
  ScratchDir dir;
  // All 50,000 merges: the property holds over the whole file, and the cut is GPT-2 itself.
  const auto all = truncate_bpe(test::gpt2_tokenizer_dir(), 50000, dir / "all");
  CHECK(all.vocab_size == 50257);
  CHECK(all.eos_id == 50256);
  CHECK(nlohmann::json::parse(test::read_text(dir / "all/vocab.json")) ==
        nlohmann::json::parse(test::read_text(test::gpt2_tokenizer_dir() + "/vocab.json")));
  test::expect_error([&] { truncate_bpe(test::gpt2_tokenizer_dir(), 50001, dir / "x"); }, "has 50000 merges");
  for (std::size_t k : {767u, 1023u}) {
    const std::string out = dir / ("k" + std::to_string(k));
    truncate_bpe(test::gpt2_tokenizer_dir(), k, out);
    const auto tok_owner = load_tokenizer(out);
    const Tokenizer& tok = *tok_owner;
    for (const char* name : {"edge", "brown_fiction"}) {
      INFO(name << " k=" << k);
      CHECK(tok.encode(fixture_text(name)) == golden_ids(std::string(name) + ".k" + std::to_string(k) + ".json"));
    }
  }
}

TEST_CASE("[brown] the demo tokenizer (K = 1791) on real Brown text", "[gpt2][brown]") {
  REQUIRE(std::filesystem::exists(test::gpt2_tokenizer_dir() + "/vocab.json"));  // scripts/fetch_demo_data.sh
  REQUIRE(std::filesystem::exists(brown_dir() + "/ca01"));
  ScratchDir dir;
  const auto info = truncate_bpe(test::gpt2_tokenizer_dir(), 1791, dir / "k1791");
  CHECK(info.vocab_size == 2048);
  CHECK(info.eos_id == 2047);
  const auto cut_owner = load_tokenizer(dir / "k1791");
  const Tokenizer& cut = *cut_owner;
  const auto full_owner = load_tokenizer(test::gpt2_tokenizer_dir());
  const Tokenizer& full = *full_owner;
  CHECK(cut.vocab_size() == 2048);
  CHECK(cut.id_limit() == 2048);
  // One file of each demo corpus, through the Brown reader as the demo reads them.
  for (const char* f : {"ca01", "cj01", "ck01", "cr09"}) {
    INFO(f);
    const auto docs = read_documents(brown_dir() + "/" + f, CorpusFormat::kBrown);
    REQUIRE(docs.size() == 1);
    const auto ids = cut.encode(docs[0]);
    CHECK(std::all_of(ids.begin(), ids.end(), [](TokenId id) { return id >= 0 && id < 2047; }));
    CHECK(cut.decode(ids) == docs[0]);
    std::size_t others = 0;
    CHECK(check_words(full, cut, 2047, docs[0], &others) > 1000);
    CHECK(others > 0);
  }
}
