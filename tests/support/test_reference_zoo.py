#!/usr/bin/python3
"""Checks of reference_zoo.py, the float64 reference of the hf_zoo families (no pytest, no
transformers): it runs on every fixture with finite, far-from-uniform logits (the perplexity of
each over a fixed window is printed); the forms make_zoo_fixtures.py writes read back the same
(the source dtype and the 5.x dialect bit for bit); and the architecture's features behave as
their definitions say, against a second implementation where there is one (Phi-3 unfused and
Mixtral with one expert through reference_forward.Decoder as Llama / Mistral; each MoE block
against a token-by-token loop).

Usage: test_reference_zoo.py [HF_ZOO_DIR]   (default /work/shared/fixtures/hf_zoo)
"""
import math
import os
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_zoo_fixtures  # noqa: E402
from reference_forward import Decoder, ReferenceModel, nll_sum  # noqa: E402
from reference_zoo import ZooDecoder, load, run, visible  # noqa: E402

ZOO_DIR = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/fixtures/hf_zoo"
IDS = torch.tensor([(i * 37 + 11) % 512 for i in range(40)])
FIXTURES = ("qwen3-f32", "gemma2-bf16", "gemma3-text-f32", "olmo2-f32", "phi3-f32", "mixtral-bf16",
            "qwen2-moe-f32", "olmoe-f32")


def fixture(name):
    return load(os.path.join(ZOO_DIR, name))


def variant(decoder, config=None, weights=None):
    """A ZooDecoder of decoder's checkpoint with config keys and weights replaced."""
    w = dict(decoder.w)
    w.update(weights or {})
    return ZooDecoder({**decoder.c, **(config or {})}, w, decoder.embed_scale_dtype)


def logits(decoder, ids=IDS):
    return run(decoder, ids)[0]


def rel(a, b):
    return float((a - b).abs().max() / b.abs().max())


def ppl(lg, ids=IDS):
    return math.exp(nll_sum(lg[None], ids[None]) / (len(ids) - 1))


# ---- every fixture ----------------------------------------------------------------------------
def test_fixtures():
    for name in FIXTURES:
        d = fixture(name)
        lg, routing = run(d, IDS)
        assert lg.shape == (len(IDS), 512) and lg.dtype == torch.float64, name
        assert bool(torch.isfinite(lg).all()), name
        p = ppl(lg)
        assert 1 < p < 1e6 and float(lg.std(-1).mean()) > 0.5, (name, p)  # finite, far from uniform
        sparse = [l for l in range(d.c["num_hidden_layers"]) if d.is_sparse(l)]
        assert sorted(routing) == sparse, (name, sorted(routing))
        margin = min((float(r["margin"].min()) for r in routing.values()), default=math.inf)
        print(f"  {name:16s} ppl {p:10.3f}  sparse layers {sparse}  smallest top-k margin {margin:.2e}")
        # Through ReferenceModel (the parity test's entry point), batched windows: the same logits.
        two = torch.stack([IDS[:20], IDS[20:]])
        batched = ReferenceModel(os.path.join(ZOO_DIR, name)).forward(two)[1]
        assert rel(batched[1], logits(d, IDS[20:])) < 1e-14, name


def test_forms():
    """make_zoo_fixtures.py's forms: the source's dtype and its 5.x config give the source's
    logits exactly; the other dtypes' rounding moves them a little."""
    with tempfile.TemporaryDirectory() as out:
        make_zoo_fixtures.main(ZOO_DIR, out)
        for name in FIXTURES:
            base = fixture(name)
            want = logits(base)
            fam, short = make_zoo_fixtures.family(name), name.rpartition("-")[2]
            for form in ("f32", "bf16", "f16", "v5"):
                got = logits(load(os.path.join(out, f"zoo-{fam}-{form}")))
                if form in (short, "v5") or (form == "f32" and short == "bf16"):
                    assert torch.equal(got, want), (name, form, rel(got, want))
                else:
                    assert rel(got, want) < 0.05, (name, form, rel(got, want))


# ---- cross-checks against a second implementation ---------------------------------------------
def test_phi3_is_llama_unfused():
    """Phi-3 = Llama with qkv_proj split [q | k | v] and gate_up_proj split [gate | up], and
    partial rotary: reference_forward.Decoder on the split weights agrees."""
    d = fixture("phi3-f32")
    c, w = d.c, dict(d.w)
    nq, nkv = d.heads * d.hd, d.kv_heads * d.hd
    for layer in range(c["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        q, k, v = w.pop(p + "self_attn.qkv_proj.weight").split([nq, nkv, nkv])
        gate, up = w.pop(p + "mlp.gate_up_proj.weight").chunk(2)
        w.update({p + "self_attn.q_proj.weight": q, p + "self_attn.k_proj.weight": k,
                  p + "self_attn.v_proj.weight": v, p + "mlp.gate_proj.weight": gate, p + "mlp.up_proj.weight": up})
    llama = Decoder({**c, "model_type": "llama"}, w)
    h = llama.embed(IDS[None])
    for layer in range(c["num_hidden_layers"]):
        h = llama.block(layer, h, lambda x, mlp: mlp(x))
    assert rel(llama.logits(h)[0], logits(d)) < 1e-12


def test_mixtral_one_expert_is_mistral():
    """Mixtral with one expert and top-1: the expert's weight is 1 and the block is Mistral's
    SwiGLU MLP w2(silu(w1 x) · w3 x)."""
    d = fixture("mixtral-bf16")
    c, w = d.c, dict(d.w)
    for layer in range(c["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        e = p + "block_sparse_moe.experts.0."
        w.update({p + "mlp.gate_proj.weight": w[e + "w1.weight"], p + "mlp.up_proj.weight": w[e + "w3.weight"],
                  p + "mlp.down_proj.weight": w[e + "w2.weight"]})
    gates = [f"model.layers.{l}.block_sparse_moe.gate.weight" for l in range(c["num_hidden_layers"])]
    one = variant(d, {"num_local_experts": 1, "num_experts_per_tok": 1}, {g: d.w[g][:1] for g in gates})
    mistral = Decoder({**c, "model_type": "mistral"}, w)
    h = mistral.embed(IDS[None])
    for layer in range(c["num_hidden_layers"]):
        h = mistral.block(layer, h, lambda x, mlp: mlp(x))
    assert rel(mistral.logits(h)[0], logits(one)) < 1e-12


def loop_moe(d, layer, x):
    """The sparse block token by token, written from the definitions: probabilities softmax(W_g x)
    over all experts; the k largest, renormalised (Mixtral; the others if norm_topk_prob); plus
    Qwen2-MoE's sigmoid-gated shared expert."""
    mixtral = d.mt == "mixtral"
    p = f"model.layers.{layer}." + ("block_sparse_moe." if mixtral else "mlp.")
    names = ("w1", "w3", "w2") if mixtral else ("gate_proj", "up_proj", "down_proj")
    silu = lambda z: z / (1 + torch.exp(-z))  # noqa: E731

    def expert(prefix, t):
        g, u, dn = (d.w[prefix + n + ".weight"] for n in names)
        return dn @ (silu(g @ t) * (u @ t))

    rows = []
    for t in x.reshape(-1, x.shape[-1]):
        z = d.w[p + "gate.weight"] @ t
        prob = torch.exp(z - z.max()) / torch.exp(z - z.max()).sum()
        order = sorted(range(len(prob)), key=lambda e: -float(prob[e]))[:d.c["num_experts_per_tok"]]
        share = [float(prob[e]) for e in order]
        if mixtral or d.c["norm_topk_prob"]:
            share = [s / sum(share) for s in share]
        y = sum(s * expert(f"{p}experts.{e}.", t) for s, e in zip(share, order))
        if p + "shared_expert_gate.weight" in d.w:
            y = y + torch.sigmoid(d.w[p + "shared_expert_gate.weight"] @ t) * expert(p + "shared_expert.", t)
        rows.append(y)
    return torch.stack(rows).reshape(x.shape)


def test_moe_against_loop():
    for name in ("mixtral-bf16", "qwen2-moe-f32", "olmoe-f32"):
        for norm in (False, True):
            d = variant(fixture(name), {"norm_topk_prob": norm})
            x = d.mlp_input(1, d.embed(IDS[None]))  # a realistic MLP input
            for layer in [l for l in range(d.c["num_hidden_layers"]) if d.is_sparse(l)]:
                assert rel(d.mlp(layer, x), loop_moe(d, layer, x)) < 1e-12, (name, norm, layer)
                r = d.routing[layer]
                total = r["weights"].sum(-1)
                if d.mt == "mixtral" or norm:
                    assert float((total - 1).abs().max()) < 1e-14, name
                else:
                    assert float(total.max()) < 1, name  # the k probabilities, unnormalised
                assert bool((r["weights"][..., :-1] >= r["weights"][..., 1:]).all()), name  # best first


def test_mixtral_all_experts():
    """top_k == num_experts: every expert, weighted by the full softmax."""
    d = variant(fixture("mixtral-bf16"), {"num_experts_per_tok": 4})
    x = d.mlp_input(0, d.embed(IDS[None]))
    p = "model.layers.0.block_sparse_moe."
    prob = torch.softmax(x @ d.w[p + "gate.weight"].T, -1)
    want = sum(prob[..., e:e + 1] * d._gated(f"{p}experts.{e}.", x, ("w1", "w3", "w2")) for e in range(4))
    assert rel(d.mlp(0, x), want) < 1e-14
    assert math.isinf(float(d.routing[0]["margin"].min()))


def test_qwen2_moe_layers():
    """Layer 0 is in mlp_only_layers: a dense MLP of intermediate_size; the others sparse, with
    experts of moe_intermediate_size and a shared expert of shared_expert_intermediate_size."""
    d = fixture("qwen2-moe-f32")
    c = d.c
    assert [d.is_sparse(l) for l in range(3)] == [False, True, True]
    assert d.w["model.layers.0.mlp.gate_proj.weight"].shape[0] == c["intermediate_size"]
    assert d.w["model.layers.1.mlp.experts.0.gate_proj.weight"].shape[0] == c["moe_intermediate_size"]
    assert d.w["model.layers.1.mlp.shared_expert.gate_proj.weight"].shape[0] == c["shared_expert_intermediate_size"]
    step = variant(d, {"mlp_only_layers": [], "decoder_sparse_step": 2})  # (i + 1) % 2 == 0: layer 1 only
    assert [step.is_sparse(l) for l in range(3)] == [False, True, False]


# ---- features ---------------------------------------------------------------------------------
def test_window_mask():
    """HF's sliding window: query i sees keys i - window < j <= i (window keys, itself included)."""
    want = torch.tensor([[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [0, 1, 1, 1, 0], [0, 0, 1, 1, 1]],
                        dtype=torch.bool)
    assert torch.equal(visible(5, 3), want)
    assert torch.equal(visible(5, None), torch.tril(torch.ones(5, 5, dtype=torch.bool)))


def test_gemma2_layers_and_capping():
    d = fixture("gemma2-bf16")
    assert [d.window(l) for l in range(3)] == [8, None, 8]  # sliding when layer_idx % 2 == 0
    base = logits(d)
    explicit = variant(d, {"layer_types": ["sliding_attention", "full_attention", "sliding_attention"]})
    assert torch.equal(logits(explicit), base)
    assert rel(logits(variant(d, {"sliding_window": 4096})), base) > 1e-3  # window 8 < 40 tokens matters
    short = IDS[:8]  # 8 tokens: the window of 8 hides nothing
    assert rel(logits(variant(d, {"sliding_window": 4096}), short), logits(d, short)) < 1e-15
    huge = variant(d, {"attn_logit_softcapping": 1e12, "final_logit_softcapping": 1e12})
    none = variant(d, {"attn_logit_softcapping": None, "final_logit_softcapping": None})
    assert rel(logits(huge), logits(none)) < 1e-9
    assert rel(logits(none), base) > 1e-3  # caps of 3 and 6 are active on this fixture
    assert float(base.abs().max()) < d.c["final_logit_softcapping"]
    # The embedding's sqrt(96) is rounded to the stream's dtype: float32 by default.
    e = d.w["model.embed_tokens.weight"][IDS]
    f32 = float(torch.tensor(math.sqrt(96), dtype=torch.float32))
    assert f32 != math.sqrt(96) and torch.equal(d.embed(IDS), e * f32)
    assert torch.equal(ZooDecoder(d.c, d.w, torch.bfloat16).embed(IDS), e * 9.8125)


def test_gemma3_layers_and_rope():
    d = fixture("gemma3-text-f32")
    assert [d.window(l) for l in range(3)] == [12, 12, None]  # global when (i + 1) % 3 == 0
    base = logits(d)
    explicit = variant(d, {"layer_types": ["sliding_attention", "sliding_attention", "full_attention"],
                           "sliding_window_pattern": 99})
    assert torch.equal(logits(explicit), base)
    # Local layers use rope_local_base_freq unscaled; the global one rope_theta with linear scaling.
    x = torch.randn(1, 1, 6, d.hd, dtype=torch.float64)
    local = variant(d, {"rope_scaling": None, "rope_theta": 5.0})
    assert torch.equal(local.rope(0, x), d.rope(0, x)) and not torch.equal(local.rope(2, x), d.rope(2, x))
    glob = variant(d, {"rope_theta": d.c["rope_local_base_freq"], "rope_scaling": None})
    assert torch.equal(glob.rope(2, x), d.rope(0, x))
    # Linear scaling: position p at factor 8 is position p/8 unscaled.
    pos8 = torch.zeros(1, 1, 9, d.hd, dtype=torch.float64)
    pos8[..., :, :] = x[..., :1, :]
    unscaled = variant(d, {"rope_scaling": None})
    assert rel(d.rope(2, pos8)[..., 8, :], unscaled.rope(2, pos8)[..., 1, :]) < 1e-12
    assert rel(logits(variant(d, {"rope_local_base_freq": 5.0})), base) > 1e-6


def test_qk_norms():
    """Qwen3 / Gemma 3 norm q and k per head (over head_dim): scaling one head's projection
    changes nothing. OLMo 2 / OLMoE norm the whole projection: scaling all of it changes
    nothing, scaling one head does."""
    for name, per_head in (("qwen3-f32", True), ("gemma3-text-f32", True), ("olmo2-f32", False),
                           ("olmoe-f32", False)):
        d = fixture(name)
        base = logits(d)
        for which in ("q_proj", "k_proj"):
            key = f"model.layers.0.self_attn.{which}.weight"
            head0 = d.w[key].clone()
            head0[:d.hd] *= 7
            moved = rel(logits(variant(d, weights={key: head0})), base)
            whole = rel(logits(variant(d, weights={key: d.w[key] * 7})), base)
            assert whole < 1e-5, (name, which, whole)  # eps only
            assert (moved < 1e-5) == per_head and (moved > 1e-3 or per_head), (name, which, moved)
    # The norm itself: unit weights (1 + 0 for Gemma) leave unit-RMS rows alone, eps aside.
    for name, unit in (("qwen3-f32", 1.0), ("gemma3-text-f32", 0.0)):
        d = variant(fixture(name), {"rms_norm_eps": 0.0})
        x = torch.randn(3, 5, d.hd, dtype=torch.float64)
        x = x / x.pow(2).mean(-1, keepdim=True).sqrt()
        one = variant(d, weights={"model.layers.0.self_attn.q_norm.weight": torch.full((d.hd,), unit,
                                                                                        dtype=torch.float64)})
        assert rel(one._norm("model.layers.0.self_attn.q_norm.weight", x), x) < 1e-15


def test_phi3_partial_rotary():
    d = fixture("phi3-f32")
    r = d.rotary_dims()
    assert (d.hd, r) == (24, 18)
    x = torch.randn(1, 2, 7, d.hd, dtype=torch.float64)
    y = d.rope(0, x)
    assert torch.equal(y[..., r:], x[..., r:])  # the last hd - r dims pass
    pairs = lambda z: z[..., :r // 2] ** 2 + z[..., r // 2:r] ** 2  # noqa: E731
    assert rel(pairs(y), pairs(x)) < 1e-13  # (i, i + r/2) rotate together
    assert rel(logits(variant(d, {"partial_rotary_factor": 1.0})), logits(d)) > 1e-6
    assert d.window(0) == 2047


def test_olmo2_norm_order():
    """OLMo 2 norms each sublayer's output before the residual add (no input norm): o_proj's and
    down_proj's scale drop out, the embedding's does not."""
    d = variant(fixture("olmo2-f32"), {"rms_norm_eps": 0.0})  # eps aside (attention outputs are small)
    base = logits(d)
    w = {f"model.layers.{l}.{n}.weight": d.w[f"model.layers.{l}.{n}.weight"] * 5
         for l in range(3) for n in ("self_attn.o_proj", "mlp.down_proj")}
    assert rel(logits(variant(d, weights=w)), base) < 1e-13
    emb = {"model.embed_tokens.weight": d.w["model.embed_tokens.weight"] * 5}
    assert rel(logits(variant(d, weights=emb)), base) > 1e-3  # no input norm: the stream's scale matters


def test_hooks():
    """ReferenceModel's capture sees mlp_input(layer, stream), and an affine replacement that is
    the MLP's own value gives the same logits (the hooks wrap the MLP proper, inside any post-norm)."""
    for name in FIXTURES:
        ref = ReferenceModel(os.path.join(ZOO_DIR, name))
        ref.capture = {1: []}
        streams, want = ref.forward(IDS[None])
        x, y = ref.capture[1][0]
        assert rel(x, ref.mlp_input(1, streams[1])) < 1e-14, name
        ref.capture = {}
        mlp = lambda z, layer=1: ref.decoder.mlp(layer, z)  # noqa: E731
        assert rel(mlp(x), y) < 1e-14, name


def main():
    torch.manual_seed(0)
    tests = [(n, f) for n, f in globals().items() if n.startswith("test_") and callable(f)]
    for n, f in tests:
        print(n)
        f()
    print(f"reference_zoo: {len(tests)} checks passed")


if __name__ == "__main__":
    main()
