// BPE tokenizer: exactly GPT-2's ids on the fixture texts, for full and truncated merge lists,
// from vocab.json + merges.txt and from tokenizer.json (both merge spellings).
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/errors.hpp"
#include "engine/tokenizer/bpe_tokenizer.hpp"
#include "engine/tokenizer/pretokenizer.hpp"
#include "support/catch.hpp"
#include "support/expect_error.hpp"
#include "support/test_support.hpp"

using namespace linsweep;
using linsweep::test::ScratchDir;

namespace {

std::vector<TokenId> expected_ids(const std::string& file) {
  return nlohmann::json::parse(test::read_text(test::data_dir() + "/tokenizer/" + file)).get<std::vector<TokenId>>();
}

std::string text(const std::string& name) { return test::read_text(test::data_dir() + "/tokenizer/" + name + ".txt"); }

// GPT-2's tokenizer cut to its first k merges: ids < 256 + k, plus <|endoftext|> as 256 + k.
void write_truncated(const std::string& dir, std::size_t k) {
  std::filesystem::create_directories(dir);
  auto vocab = nlohmann::json::parse(test::read_text(test::gpt2_tokenizer_dir() + "/vocab.json"));
  nlohmann::json cut = nlohmann::json::object();
  for (auto it = vocab.begin(); it != vocab.end(); ++it)
    if (it.value().get<std::size_t>() < 256 + k) cut[it.key()] = it.value();
  cut["<|endoftext|>"] = 256 + k;
  test::write_text(dir + "/vocab.json", cut.dump());
  std::ifstream in(test::gpt2_tokenizer_dir() + "/merges.txt");
  std::ofstream out(dir + "/merges.txt");
  std::string line;
  std::getline(in, line);  // #version
  out << line << '\n';
  for (std::size_t i = 0; i < k && std::getline(in, line); ++i) out << line << '\n';
}

}  // namespace

TEST_CASE("pretokenizer splits like GPT-2's regex") {
  struct Case {
    std::string in;
    std::vector<std::string> out;
  };
  const Case cases[] = {
      {"Hello world", {"Hello", " world"}},
      {"it's they're we'll I'd", {"it", "'s", " they", "'re", " we", "'ll", " I", "'d"}},
      {"a  b", {"a", " ", " b"}},
      {"a\n\nb", {"a", "\n", "\n", "b"}},  // a single '\n' before 'b' is its own \s+ match
      {"x   ", {"x", "   "}},
      {"12,345.6", {"12", ",", "345", ".", "6"}},
      {" ?!x", {" ?!", "x"}},
      {"caf\xc3\xa9 na\xc3\xafve", {"caf\xc3\xa9", " na\xc3\xafve"}},
      {"'S 'x", {"'", "S", " '", "x"}},
  };
  for (const auto& c : cases) {
    INFO(c.in);
    auto got = gpt2_pretokenize(c.in);
    CHECK(std::vector<std::string>(got.begin(), got.end()) == c.out);
  }
  CHECK(byte_to_unicode()[' '] == "\xc4\xa0");  // Ġ
  CHECK(byte_to_unicode()['A'] == "A");
}

TEST_CASE("truncated tokenizer (767 merges) in all three file forms gives the reference ids") {
  const auto vm_owner = load_tokenizer(test::model_dir("tiny-gpt2"));  // vocab + merges
  const Tokenizer& vm = *vm_owner;
  const auto strings_owner = load_tokenizer(test::model_dir("tiny-neox"));  // "a b"
  const Tokenizer& strings = *strings_owner;
  const auto pairs_owner = load_tokenizer(test::model_dir("tiny-neox-seq"));  // ["a", "b"]
  const Tokenizer& pairs = *pairs_owner;
  CHECK(dynamic_cast<const BpeTokenizer&>(vm).merge_count() == 767);
  CHECK(dynamic_cast<const BpeTokenizer&>(strings).merge_count() == 767);
  CHECK(dynamic_cast<const BpeTokenizer&>(pairs).merge_count() == 767);
  CHECK(vm.eos_id() == 1023);
  for (const char* name : {"edge", "brown_fiction"}) {
    INFO(name);
    const auto want = expected_ids(std::string(name) + ".k767.json");
    CHECK(vm.encode(text(name)) == want);
    CHECK(strings.encode(text(name)) == want);
    CHECK(pairs.encode(text(name)) == want);
    CHECK(vm.decode(want) == text(name));
  }
}

TEST_CASE("[gpt2] GPT-2's full tokenizer and its 1023-merge prefix give GPT-2's ids", "[gpt2]") {
  REQUIRE(std::filesystem::exists(test::gpt2_tokenizer_dir() + "/vocab.json"));  // run scripts/fetch_gpt2_encoder.sh
  const auto full_owner = load_tokenizer(test::gpt2_tokenizer_dir());
  const Tokenizer& full = *full_owner;
  CHECK(full.vocab_size() == 50257);
  CHECK(dynamic_cast<const BpeTokenizer&>(full).merge_count() == 50000);
  CHECK(full.eos_id() == 50256);
  ScratchDir dir;
  write_truncated(dir / "k1023", 1023);
  const auto k1023_owner = load_tokenizer(dir / "k1023");
  const Tokenizer& k1023 = *k1023_owner;
  write_truncated(dir / "k767", 767);
  const auto k767_owner = load_tokenizer(dir / "k767");
  const Tokenizer& k767 = *k767_owner;
  for (const char* name : {"edge", "brown_fiction"}) {
    INFO(name);
    CHECK(full.encode(text(name)) == expected_ids(std::string(name) + ".gpt2.json"));
    CHECK(k1023.encode(text(name)) == expected_ids(std::string(name) + ".k1023.json"));
    CHECK(k767.encode(text(name)) == expected_ids(std::string(name) + ".k767.json"));
    CHECK(full.decode(full.encode(text(name))) == text(name));
  }
  // Special tokens are text unless asked for, as in GPT-2's encoder.
  CHECK(full.encode("a<|endoftext|>b", true) == std::vector<TokenId>{64, 50256, 65});
  CHECK(full.encode("a<|endoftext|>b").size() > 3);
}

TEST_CASE("bad_: malformed tokenizer files and invalid UTF-8 are refused with the file named") {
  ScratchDir dir;
  const std::string vocab = test::model_dir("tiny-gpt2") + "/vocab.json";
  test::write_text(dir / "bad_line.txt", "#version: 0.2\n\xc4\xa0 t\nbroken\n");
  test::expect_error([&] { return BpeTokenizer::from_vocab_merges(vocab, dir / "bad_line.txt"); },
                     "bad_line.txt:3: a merge must be");
  test::write_text(dir / "bad_merge.txt", "#version: 0.2\nq z\n");
  test::expect_error([&] { return BpeTokenizer::from_vocab_merges(vocab, dir / "bad_merge.txt"); },
                     "missing from the vocab");
  test::write_text(dir / "bad_vocab.json", "{\"a\": 0}");
  test::write_text(dir / "empty_merges.txt", "");
  test::expect_error([&] { return BpeTokenizer::from_vocab_merges(dir / "bad_vocab.json", dir / "empty_merges.txt"); },
                     "no token for byte");
  test::write_text(dir / "bad_json.json", "{\"model\": ");
  test::expect_error([&] { return BpeTokenizer::from_tokenizer_json(dir / "bad_json.json"); },
                     "bad_json.json: invalid JSON");
  test::write_text(dir / "bad_type.json", R"({"model": {"type": "WordPiece", "vocab": {}}})");
  test::expect_error([&] { return BpeTokenizer::from_tokenizer_json(dir / "bad_type.json"); },
                     "is not supported (BPE)");
  auto tj = nlohmann::json::parse(test::read_text(test::model_dir("tiny-neox") + "/tokenizer.json"));
  tj["model"]["merges"][3] = 17;
  test::write_text(dir / "bad_merge_entry.json", tj.dump());
  test::expect_error([&] { return BpeTokenizer::from_tokenizer_json(dir / "bad_merge_entry.json"); },
                     "merge 3 is neither");
  std::filesystem::create_directories(dir / "none");
  test::expect_error([&] { return load_tokenizer(dir / "none"); }, "no tokenizer (tokenizer.json");

  const auto tok_owner = load_tokenizer(test::model_dir("tiny-gpt2"));
  const Tokenizer& tok = *tok_owner;
  test::expect_error([&] { tok.encode("ok \xff bad", false, "input.txt"); }, "input.txt: invalid UTF-8 at byte 3");
}
