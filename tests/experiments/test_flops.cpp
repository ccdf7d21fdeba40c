// FLOP counts of compound gating, by hand: a model whose d_ff is not 4·d, grouped-query attention,
// and mixtures of experts (router, top-k experts, shared expert, dense layers).
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
  CHECK(mlp_flops(c, 0) == 49152.0);    // 4·64·192
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
  CHECK(mlp_flops(c, 1) == 61440.0);  // 6·64·160
  CHECK(model_flops(c) == 176640.0);  // 2·(2·64·(2·64 + 2·16) + 61,440) + 2·64·100
}

TEST_CASE("good_: a sparse layer costs its router, its k chosen experts and its shared expert") {
  ModelConfig c;
  c.d_model = 64;
  c.d_ff = 160;  // the dense layers' gated MLP
  c.n_layers = 3;
  c.n_heads = 4;
  c.gated_mlp = true;
  c.vocab_size = 100;
  c.moe = {.experts = 4, .top_k = 2, .expert_d_ff = 32, .shared_d_ff = 48, .dense_layers = {0}};
  CHECK(mlp_flops(c, 0) == 61440.0);  // dense (mlp_only_layers): 6·64·160
  CHECK(mlp_flops(c, 1) ==
        43648.0);  // router 2·64·4 = 512, 2 experts 2·6·64·32 = 24,576, shared 6·64·48 + 2·64 = 18,560
  CHECK(all_mlp_flops(c) == 148736.0);  // 61,440 + 2·43,648
  CHECK(model_flops(c) == 259840.0);    // 3·8·64² + 148,736 + 2·64·100
  c.moe.shared_d_ff = 0;                // Mixtral's and OLMoE's blocks: no shared expert
  c.moe.dense_layers.clear();
  c.moe.sparse_step = 2;  // Qwen2-MoE's decoder_sparse_step: layer 1 alone is sparse
  CHECK(mlp_flops(c, 0) == 61440.0);
  CHECK(mlp_flops(c, 1) == 25088.0);  // 512 + 24,576
  CHECK(mlp_flops(c, 2) == 61440.0);
  CHECK(all_mlp_flops(c) == 147968.0);  // 2·61,440 + 25,088
  // Routing a position of layer 1 past its block saves the block minus the surrogate's 2·d².
  CHECK(mlp_flops(c, 1) - surrogate_flops(c) == 16896.0);
}
