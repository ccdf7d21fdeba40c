// "Did you mean": edit distances with adjacent swaps, and the closest known name.
#include "common/suggest.hpp"
#include "support/catch.hpp"

using namespace linsweep;

TEST_CASE("edit distance counts insertions, deletions, substitutions and adjacent swaps as one") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("abc", "") == 3);
  CHECK(edit_distance("", "ab") == 2);
  CHECK(edit_distance("model", "model") == 0);
  CHECK(edit_distance("modle", "model") == 1);  // a swap
  CHECK(edit_distance("gatse", "gates") == 1);
  CHECK(edit_distance("contxt", "context") == 1);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("ca", "abc") == 3);  // optimal string alignment: a swapped pair is not edited again
}

TEST_CASE("closest_name suggests within a third of the name's length") {
  const std::vector<std::string> known = {"model", "corpus", "layer", "delta_pct"};
  CHECK(closest_name("modle", known) == "model");
  CHECK(closest_name("corpsu", known) == "corpus");
  CHECK(closest_name("xyz", known).empty());
  CHECK(did_you_mean("layr", known) == " (did you mean 'layer'?)");
  CHECK(did_you_mean("zzzzzz", known).empty());
}

TEST_CASE("closest_name completes an abbreviation to the shortest name it begins") {
  const std::vector<std::string> known = {"delta_pct_lo", "delta_pct", "layer"};
  CHECK(closest_name("delta", known) == "delta_pct");
  CHECK(closest_name("lay", known) == "layer");  // one edit beyond its limit of 1, but a prefix
  CHECK(closest_name("de", known).empty());      // too short to stand for anything
  CHECK(closest_name("deltas", known).empty());  // a prefix of none
}
