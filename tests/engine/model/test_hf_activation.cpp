// HF activation names: every alias read, one name written back, and other names refused with
// the config field named.
#include "common/errors.hpp"
#include "engine/model/hf_activation.hpp"
#include "support/catch.hpp"

using namespace linsweep;
using Catch::Matchers::ContainsSubstring;

TEST_CASE("HF activation names map to the two GELUs and back") {
  CHECK(parse_hf_activation("gelu", "c.json", "hidden_act") == Activation::kGeluExact);
  for (const char* tanh : {"gelu_new", "gelu_fast", "gelu_pytorch_tanh"}) {
    INFO(tanh);
    CHECK(parse_hf_activation(tanh, "c.json", "activation_function") == Activation::kGeluTanh);
  }
  for (Activation a : {Activation::kGeluExact, Activation::kGeluTanh})
    CHECK(parse_hf_activation(hf_activation_name(a), "c.json", "hidden_act") == a);
  CHECK(std::string(hf_activation_name(Activation::kGeluTanh)) == "gelu_new");
  CHECK_THROWS_AS(parse_hf_activation("relu", "m/config.json", "hidden_act"), ModelError);
  CHECK_THROWS_WITH(parse_hf_activation("relu", "m/config.json", "hidden_act"),
                    ContainsSubstring("m/config.json: hidden_act 'relu' is not supported (gelu, gelu_new, gelu_fast"));
}
