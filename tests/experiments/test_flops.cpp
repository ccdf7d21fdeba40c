// FLOP counts of compound gating, by hand for a model whose d_ff is not 4·d.
#include "experiments/numerics/flops.hpp"
#include "support/catch.hpp"

using namespace linsweep;

TEST_CASE("good_: FLOPs per token follow the model's own d, d_ff, layers and vocabulary") {
  ModelConfig c;
  c.d_model = 64;
  c.d_ff = 192;  // 3·d: a 16·d² MLP would count 65,536
  c.n_layers = 2;
  c.n_heads = 4;
  c.vocab_size = 100;
  CHECK(mlp_flops(c) == 49152.0);       // 4·64·192
  CHECK(surrogate_flops(c) == 8192.0);  // 2·64²
  CHECK(model_flops(c) == 176640.0);    // 2·(8·64² + 49,152) + 2·64·100
  CHECK(gate_flops(GateVariant::parse("linear"), c) == 128.0);
  CHECK(gate_flops(GateVariant::parse("pca:8"), c) == 1040.0);   // 2·64·8 + 2·8
  CHECK(gate_flops(GateVariant::parse("mlp:16"), c) == 2080.0);  // 2·64·16 + 2·16
}

TEST_CASE("good_: a gated MLP counts its gate, grouped-query attention its smaller K and V") {
  ModelConfig c;
  c.d_model = 64;
  c.d_ff = 160;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 1;  // K and V project to 16 each
  c.gated_mlp = true;
  c.vocab_size = 100;
  CHECK(mlp_flops(c) == 61440.0);     // 6·64·160
  CHECK(model_flops(c) == 176640.0);  // 2·(2·64·(2·64 + 2·16) + 61,440) + 2·64·100
}
