// Corpus readers (text, WikiText, LAMBADA, Brown, .npy) and their token streams.
#include <filesystem>

#include "common/errors.hpp"
#include "engine/corpus/corpus.hpp"
#include "engine/corpus/npy.hpp"
#include "support/catch.hpp"
#include "support/test_support.hpp"

using namespace linsweep;
using Catch::Matchers::ContainsSubstring;
using linsweep::test::ScratchDir;

TEST_CASE("good_: WikiText articles become documents, sections stay inside them") {
  ScratchDir dir;
  test::write_text(dir / "wiki.test.raw",
                   " \n = Alpha = \n \n Alpha text .\n \n = = Section = = \n More alpha .\n = Beta = \n Beta text .\n");
  const auto docs = read_documents(dir / "wiki.test.raw", CorpusFormat::kWikitext);
  REQUIRE(docs.size() == 2);
  CHECK(docs[0] == " = Alpha = \n \n Alpha text .\n \n = = Section = = \n More alpha .\n");
  CHECK(docs[1] == " = Beta = \n Beta text .\n");
  CHECK(guess_corpus_format(dir / "wiki.test.raw") == CorpusFormat::kWikitext);
}

TEST_CASE("good_: LAMBADA lines, plain text and Brown files") {
  ScratchDir dir;
  test::write_text(dir / "lambada.jsonl", "{\"text\": \"first passage\"}\n\n{\"text\": \"second\"}\n");
  CHECK(read_documents(dir / "lambada.jsonl", CorpusFormat::kLambada) ==
        std::vector<std::string>{"first passage", "second"});
  test::write_text(dir / "plain.txt", "one document\nwith two lines\n");
  CHECK(read_documents(dir / "plain.txt", CorpusFormat::kText).size() == 1);

  const std::string tagged =
      "\n\n\tThe/at jury/nn said/vbd ``/`` no/at evidence/nn ''/'' ,/, and/cc it/pps did/dod n't/* ./.\n"
      "\tIt/pps ended/vbd (/( at/in noon/nn )/) ;/. 1/2/cd cup/nn ?/.\n\n\n\tNew/jj paragraph/nn ./.\n";
  CHECK(brown_detag(tagged) ==
        "The jury said \"no evidence\", and it didn't. It ended (at noon); 1/2 cup?\nNew paragraph.");
  std::filesystem::create_directories(dir / "brown");
  test::write_text(dir / "brown/ca02", "\tSecond/od file/nn ./.\n");
  test::write_text(dir / "brown/ca01", "\tFirst/od file/nn ./.\n");
  test::write_text(dir / "brown/README", "not a corpus file");
  CHECK(read_documents(dir / "brown", CorpusFormat::kBrown) == std::vector<std::string>{"First file.", "Second file."});
  CHECK(guess_corpus_format(dir / "brown") == CorpusFormat::kBrown);

  // The same text with every word's byte range and tag.
  const BrownText t = brown_detag_tagged(tagged);
  CHECK(t.text == brown_detag(tagged));
  REQUIRE(t.words.size() == 26);
  for (const auto& w : t.words) CHECK(w.end <= t.text.size());
  auto word = [&](std::size_t i) { return t.text.substr(t.words[i].begin, t.words[i].end - t.words[i].begin); };
  CHECK(word(1) == "jury");
  CHECK(t.words[1].tag == "nn");
  CHECK(word(3) == "\"");  // `` became a straight quote, its tag kept
  CHECK(t.words[3].tag == "``");
  CHECK(word(20) == "1/2");  // the tag is after the last '/'
  CHECK(t.words[20].tag == "cd");
  CHECK(word(25) == ".");
  const auto docs = read_brown_tagged(dir / "brown");
  REQUIRE(docs.size() == 2);
  CHECK(docs[0].text == "First file.");
  CHECK(docs[1].words.size() == 3);
  CHECK(docs[1].words[0].tag == "od");
}

TEST_CASE("good_: Brown tags coarsen to parts of speech") {
  const std::pair<const char*, const char*> cases[] = {{"nn", "noun"},        {"NNS", "noun"},
                                                       {"np$", "noun"},       {"nn-tl", "noun"},
                                                       {"vbd", "verb"},       {"bedz", "auxiliary"},
                                                       {"md", "auxiliary"},   {"dod*", "auxiliary"},
                                                       {"pps+md", "pronoun"}, {"jj", "adjective"},
                                                       {"rb", "adverb"},      {"ql", "adverb"},
                                                       {"at", "determiner"},  {"abn", "determiner"},
                                                       {"in", "preposition"}, {"cc", "conjunction"},
                                                       {"cs", "conjunction"}, {"cd", "number"},
                                                       {"od", "number"},      {".", "punctuation"},
                                                       {"``", "punctuation"}, {"--", "punctuation"},
                                                       {"fw-nn", "noun"},     {"uh", "other"},
                                                       {"to", "other"},       {"", ""}};
  for (const auto& [tag, pos] : cases) {
    INFO(tag);
    CHECK(brown_coarse_pos(tag) == pos);
  }
}

TEST_CASE("good_: token streams join documents with end-of-text") {
  ScratchDir dir;
  const auto tok_owner = load_tokenizer(test::model_dir("tiny-gpt2"));
  const Tokenizer& tok = *tok_owner;
  test::write_text(dir / "l.jsonl", "{\"text\": \"a\"}\n{\"text\": \"b\"}\n{\"text\": \"a b\"}\n");
  const auto s = read_token_stream(dir / "l.jsonl", CorpusFormat::kLambada, &tok, tok.eos_id());
  CHECK(s == std::vector<TokenId>{64, 1023, 65, 1023, 64, 275});
  const auto npy = read_token_stream(test::tokens_file("tiny-gpt2"), CorpusFormat::kNpy, nullptr, std::nullopt);
  CHECK(npy.size() == 4096);
}

TEST_CASE("good_: .npy int32, int64 and uint16 streams, little and big endian") {
  ScratchDir dir;
  write_npy_tokens(dir / "a.npy", {1, 2, 70000});
  CHECK(read_npy_tokens(dir / "a.npy") == std::vector<TokenId>{1, 2, 70000});
  auto make = [&](const std::string& descr, const std::string& shape, const std::string& data) {
    std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::string out = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header + data;
    test::write_text(dir / "t.npy", out);
    return dir / "t.npy";
  };
  CHECK(read_npy_tokens(make("<u2", "(2,)", std::string("\x05\x00\xff\xff", 4))) == std::vector<TokenId>{5, 65535});
  CHECK(read_npy_tokens(make("<i8", "(1, 1)", std::string("\x07\0\0\0\0\0\0\0", 8))) == std::vector<TokenId>{7});
  CHECK(read_npy_tokens(make(">i4", "(1,)", std::string("\0\0\x01\x00", 4))) == std::vector<TokenId>{256});

  struct Bad {
    std::string descr, shape, data, message;
  };
  const Bad bad[] = {
      {"<f4", "(1,)", std::string(4, '\0'), "not supported"},
      {"<i4", "(3,)", std::string(8, '\0'), "shape needs 12"},
      {"<i4", "()", std::string(4, '\0'), "scalar"},
      {"<i4", "(1,)", std::string("\xff\xff\xff\xff", 4), "not a valid id"},
      {"<i4", "(99999999999999999999,)", "", "shape is invalid"},
  };
  for (const auto& b : bad) {
    INFO(b.message);
    CHECK_THROWS_WITH(read_npy_tokens(make(b.descr, b.shape, b.data)),
                      ContainsSubstring(b.message) && ContainsSubstring("t.npy"));
  }
  test::write_text(dir / "magic.npy", "PK\x03\x04 not numpy");
  CHECK_THROWS_WITH(read_npy_tokens(dir / "magic.npy"), ContainsSubstring("bad magic"));
  test::write_text(dir / "hdr.npy", std::string("\x93NUMPY\x01\x00\xff\x7f", 10));
  CHECK_THROWS_WITH(read_npy_tokens(dir / "hdr.npy"), ContainsSubstring("runs past the end"));
}

TEST_CASE("good_: a .npy header near its 64 KiB limit, and keys whose first occurrence is no entry") {
  // libstdc++'s std::regex recursed per character and overflowed the stack on a 32 KB header.
  ScratchDir dir;
  auto make_v2 = [&](const std::string& header_text) {
    std::string header = header_text;
    while ((12 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    const std::uint32_t n = static_cast<std::uint32_t>(header.size());
    std::string out = std::string("\x93NUMPY\x02\x00", 8);
    for (int i = 0; i < 4; ++i) out += static_cast<char>((n >> (8 * i)) & 0xFF);
    test::write_text(dir / "v2.npy", out + header + std::string("\x2a\0\0\0\x07\0\0\0", 8));
    return dir / "v2.npy";
  };
  const std::string pad(30000, ' ');  // twice: about 60 KB of header
  CHECK(read_npy_tokens(make_v2("{'descr':" + pad + "'<i4', 'fortran_order': False, 'shape': (" + pad + "2,), }")) ==
        std::vector<TokenId>{42, 7});
  CHECK(read_npy_tokens(make_v2("{'note': \"'descr' 'shape' 'fortran_order'\", 'descr': '<i4', 'fortran_order': False, "
                                "'shape': (2,), }")) == std::vector<TokenId>{42, 7});
}

TEST_CASE("bad_: invalid UTF-8, empty corpora and malformed lines are refused with the file named") {
  ScratchDir dir;
  const auto tok_owner = load_tokenizer(test::model_dir("tiny-gpt2"));
  const Tokenizer& tok = *tok_owner;
  struct BadFile {
    const char* name;
    const char* text;
    CorpusFormat format;
    const char* message;  // what follows the file name
  };
  for (const BadFile& bad :
       {BadFile{"latin1.txt", "caf\xe9 au lait", CorpusFormat::kText, ": invalid UTF-8 at byte 3"},
        BadFile{"empty.txt", "", CorpusFormat::kText, ": corpus is empty"},
        BadFile{"bad.jsonl", "{\"text\": \"ok\"}\n{\"txt\": 1}\n", CorpusFormat::kLambada, ":2: expected"},
        BadFile{"broken.jsonl", "{\"text\": \n", CorpusFormat::kLambada, ":1: invalid JSON"}}) {
    test::write_text(dir / bad.name, bad.text);
    CHECK_THROWS_WITH(read_documents(dir / bad.name, bad.format),
                      ContainsSubstring(std::string(bad.name) + bad.message));
  }
  std::filesystem::create_directories(dir / "nobrown");
  CHECK_THROWS_WITH(read_documents(dir / "nobrown", CorpusFormat::kBrown), ContainsSubstring("no Brown files"));
  CHECK_THROWS_AS(parse_corpus_format("parquet"), InputError);
  CHECK_THROWS_AS(read_documents(dir / "missing.txt", CorpusFormat::kText), InputError);
}
