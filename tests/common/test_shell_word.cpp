// Shell words: what a POSIX shell reads back from each is the string itself.
#include <cstdio>
#include <string>
#include <vector>

#include "common/shell_word.hpp"
#include "support/catch.hpp"

using namespace linsweep;

namespace {

// The words `sh -c 'printf "%s\n" WORDS'` prints, one per line.
std::vector<std::string> shell_reads(const std::string& words) {
  const std::string command = "sh -c " + shell_quote("printf '%s\\n' " + words);
  FILE* p = ::popen(command.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  REQUIRE(::pclose(p) == 0);
  std::vector<std::string> lines;
  for (std::size_t at = 0, nl; (nl = out.find('\n', at)) != std::string::npos; at = nl + 1)
    lines.push_back(out.substr(at, nl - at));
  return lines;
}

}  // namespace

TEST_CASE("shell_word leaves plain words bare and quotes the rest so that sh reads them back") {
  CHECK(shell_quote("a'b") == "'a'\\''b'");
  CHECK(shell_word("experiments.gate.bootstrap=200") == "experiments.gate.bootstrap=200");
  CHECK(shell_word("+experiments.speed={repeats: 2}") == "'+experiments.speed={repeats: 2}'");
  CHECK(shell_word("") == "''");
  const std::vector<std::string> words = {"context=32", "a b", "it's", "$HOME", "x;rm -rf ~", "", "~layers", "*"};
  std::string line;
  for (const auto& w : words) line += shell_word(w) + " ";
  CHECK(shell_reads(line) == words);
}
