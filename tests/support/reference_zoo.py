"""An independent float64 forward pass of eight further decoder families: the dense Qwen3, Gemma 2,
Gemma 3 (text), OLMo 2 and Phi-3, and the mixture-of-experts Mixtral, Qwen2-MoE and OLMoE, written
from each family's published definition (HF transformers' models/<family>/modeling_*.py and
configuration_*.py, read, not copied) and reading the checkpoints' safetensors directly (no project
code, no transformers). reference_forward.ReferenceModel uses it for these model_types, so its
hooks (affine, capture) and its mlp_stream / mlp_input work for them too.

    logits = reference_logits("…/hf_zoo/qwen3-f32", ids)          # ids [T] -> [T, vocab] float64
    logits, routing = reference_forward_zoo("…/mixtral-bf16", ids)
    routing[layer]["experts"]                                      # [T, k], best first

What "the MLP" is, for the hooks: the block between the norm before it and the residual add (or
the norm after it): the dense gated MLP, or the whole sparse MoE block (router, experts and, for
Qwen2-MoE, the gated shared expert). Gemma's post_feedforward_layernorm and OLMo 2's
post_feedforward_layernorm are applied to its output, outside it.
"""
import json
import math
import os

import torch

from reference_forward import _inverse_frequencies, read_safetensors

ZOO = ("qwen3", "gemma2", "gemma3_text", "olmo2", "phi3", "mixtral", "qwen2_moe", "olmoe")
MOE = ("mixtral", "qwen2_moe", "olmoe")
GEMMA = ("gemma2", "gemma3_text")

# The configuration classes' defaults (transformers' configuration_<family>.py) of the keys read
# here; a key present in config.json, null included, wins.
DEFAULTS = {
    "qwen3": {"rms_norm_eps": 1e-6, "rope_theta": 10000.0, "head_dim": 128, "tie_word_embeddings": False,
              "use_sliding_window": False, "sliding_window": 4096, "max_window_layers": 28},
    "gemma2": {"rms_norm_eps": 1e-6, "rope_theta": 10000.0, "head_dim": 256, "query_pre_attn_scalar": 256,
               "sliding_window": 4096, "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0,
               "hidden_activation": "gelu_pytorch_tanh", "tie_word_embeddings": True},
    "gemma3_text": {"rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
                    "head_dim": 256, "query_pre_attn_scalar": 256, "sliding_window": 4096,
                    "sliding_window_pattern": 6, "attn_logit_softcapping": None, "final_logit_softcapping": None,
                    "hidden_activation": "gelu_pytorch_tanh", "tie_word_embeddings": True},
    "olmo2": {"rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": False},
    "phi3": {"rms_norm_eps": 1e-5, "rope_theta": 10000.0, "partial_rotary_factor": 1.0, "sliding_window": None,
             "tie_word_embeddings": False},
    "mixtral": {"rms_norm_eps": 1e-5, "rope_theta": 1000000.0, "sliding_window": None, "num_local_experts": 8,
                "num_experts_per_tok": 2, "tie_word_embeddings": False},
    "qwen2_moe": {"rms_norm_eps": 1e-6, "rope_theta": 10000.0, "use_sliding_window": False, "decoder_sparse_step": 1,
                  "mlp_only_layers": [], "num_experts": 60, "num_experts_per_tok": 4, "norm_topk_prob": False,
                  "tie_word_embeddings": False},
    "olmoe": {"rms_norm_eps": 1e-5, "rope_theta": 10000.0, "num_experts": 64, "num_experts_per_tok": 8,
              "norm_topk_prob": False, "clip_qkv": None, "tie_word_embeddings": False},
}


def with_defaults(config):
    """config with its family's defaults filled in where a key is absent."""
    return {**DEFAULTS[config["model_type"]], **config}


def _gelu_tanh(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def visible(t, window):
    """[T, T] bool: query i sees key j when j <= i and, with a window, i - j < window (HF's
    sliding_window_overlay: kv_idx > q_idx - sliding_window)."""
    i, j = torch.arange(t)[:, None], torch.arange(t)[None, :]
    ok = j <= i
    return ok & (i - j < window) if window is not None else ok


class ZooDecoder:
    """One of the eight families; the interface of reference_forward.Decoder (embed, block,
    mlp_stream, mlp_input, logits). `routing` holds, per MoE layer, the last forward's router."""

    def __init__(self, config, w, embed_scale_dtype=torch.float32):
        c = self.c = with_defaults(config)
        self.w, self.mt = w, c["model_type"]
        assert self.mt in ZOO, self.mt
        self.heads = c["num_attention_heads"]
        self.kv_heads = c.get("num_key_value_heads") or self.heads
        # OLMoE's attention takes hidden/heads whatever head_dim says (modeling_olmoe.py).
        self.hd = c["hidden_size"] // self.heads if self.mt == "olmoe" else (
            c.get("head_dim") or c["hidden_size"] // self.heads)
        self.gemma = self.mt in GEMMA
        self.qk_norm = {"qwen3": "head", "gemma3_text": "head", "olmo2": "full", "olmoe": "full"}.get(self.mt)
        self.embed_scale_dtype = embed_scale_dtype
        self.routing = {}

    # ---- pieces -------------------------------------------------------------------------------
    def _norm(self, name, x):
        """RMSNorm over the last dimension: x / sqrt(mean(x²) + eps) · w, or · (1 + w) for Gemma."""
        w = self.w[name]
        x = x / torch.sqrt((x * x).mean(-1, keepdim=True) + self.c["rms_norm_eps"])
        return x * (1 + w) if self.gemma else x * w

    def _linear(self, name, x):
        y = x @ self.w[name + ".weight"].T
        return y + self.w[name + ".bias"] if name + ".bias" in self.w else y

    def _act(self, x):
        act = self.c["hidden_activation"] if self.gemma else self.c.get("hidden_act", "silu")
        if act == "silu":
            return x * torch.sigmoid(x)
        assert act in ("gelu_pytorch_tanh", "gelu_new"), act
        return _gelu_tanh(x)

    def _gated(self, prefix, x, names=("gate_proj", "up_proj", "down_proj")):
        """down(act(gate x) · up x); Phi-3's fused gate_up_proj holds gate then up."""
        g, u, d = names
        if prefix + "gate_up_proj.weight" in self.w:
            gate, up = self._linear(prefix + "gate_up_proj", x).chunk(2, -1)
        else:
            gate, up = self._linear(prefix + g, x), self._linear(prefix + u, x)
        return self._linear(prefix + d, self._act(gate) * up)

    # ---- attention ----------------------------------------------------------------------------
    def is_sliding(self, layer):
        c, mt = self.c, self.mt
        if mt in ("qwen3", "qwen2_moe") and not c.get("use_sliding_window"):
            return False
        if c.get("layer_types"):
            return c["layer_types"][layer] == "sliding_attention"
        if mt == "gemma2":
            return layer % 2 == 0  # Gemma2Attention: sliding when not layer_idx % 2
        if mt == "gemma3_text":
            return (layer + 1) % c["sliding_window_pattern"] != 0
        if mt == "qwen3":
            return layer >= c["max_window_layers"]
        if mt == "qwen2_moe":
            raise NotImplementedError("qwen2_moe with use_sliding_window and no layer_types")
        return mt in ("phi3", "mixtral")  # every layer, when sliding_window is set

    def window(self, layer):
        return self.c.get("sliding_window") if self.is_sliding(layer) else None

    def _rope_config(self, layer):
        """The config whose rope settings this layer's RoPE uses. Gemma 3: local layers take
        rope_local_base_freq with no scaling, global ones rope_theta with rope_scaling (4.x), or
        rope_parameters[layer type] (5.x)."""
        c = self.c
        if self.mt != "gemma3_text":
            return c
        kind = "sliding_attention" if self.is_sliding(layer) else "full_attention"
        if c.get("rope_parameters"):
            params = c["rope_parameters"][kind]
        elif kind == "sliding_attention":
            params = {"rope_type": "default", "rope_theta": c["rope_local_base_freq"]}
        else:
            params = {**(c.get("rope_scaling") or {}), "rope_theta": c["rope_theta"]}
        return {"rope_parameters": params, "max_position_embeddings": c.get("max_position_embeddings")}

    def rotary_dims(self):
        if self.mt != "phi3":
            return self.hd
        factor = (self.c.get("rope_parameters") or {}).get("partial_rotary_factor",
                                                             self.c["partial_rotary_factor"])
        return int(self.hd * factor)

    def rope(self, layer, x):
        """x [B, H, T, hd]: pair i is (x_i, x_{i + r/2}) of the first r = rotary_dims dims."""
        r, t = self.rotary_dims(), x.shape[2]
        angles = torch.outer(torch.arange(t, dtype=torch.float64), _inverse_frequencies(self._rope_config(layer), r, t))
        cos, sin = angles.cos(), angles.sin()
        x1, x2, rest = x[..., :r // 2], x[..., r // 2:r], x[..., r:]
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin, rest], -1)

    def _qkv(self, p, x):
        """q, k, v [B, T, n·hd]; Phi-3's fused qkv_proj is [q | k | v] by head counts."""
        if p + "qkv_proj.weight" in self.w:
            nq, nkv = self.heads * self.hd, self.kv_heads * self.hd
            return self._linear(p + "qkv_proj", x).split([nq, nkv, nkv], -1)
        return tuple(self._linear(p + n, x) for n in ("q_proj", "k_proj", "v_proj"))

    def _qk_norms(self, p, q, k, v):
        """OLMo 2 / OLMoE: RMSNorm over the whole q and k projections (before the heads split),
        then OLMoE's clip_qkv. Qwen 3 / Gemma 3 norm per head, later."""
        if self.qk_norm == "full":
            q, k = self._norm(p + "q_norm.weight", q), self._norm(p + "k_norm.weight", k)
        clip = self.c.get("clip_qkv") if self.mt == "olmoe" else None
        if clip is not None:
            q, k, v = (z.clamp(-clip, clip) for z in (q, k, v))
        return q, k, v

    def scale(self):
        return self.c["query_pre_attn_scalar"] ** -0.5 if self.gemma else self.hd ** -0.5

    def attention(self, layer, x):
        p = f"model.layers.{layer}.self_attn."
        b, t, _ = x.shape
        q, k, v = self._qk_norms(p, *self._qkv(p, x))
        q, k, v = (z.reshape(b, t, -1, self.hd).transpose(1, 2) for z in (q, k, v))
        if self.qk_norm == "head":
            q, k = self._norm(p + "q_norm.weight", q), self._norm(p + "k_norm.weight", k)
        q, k = self.rope(layer, q), self.rope(layer, k)
        group = self.heads // self.kv_heads  # query head h reads key/value head h // group
        k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
        scores = q @ k.transpose(-1, -2) * self.scale()
        cap = self.c.get("attn_logit_softcapping") if self.gemma else None
        if cap is not None:
            scores = torch.tanh(scores / cap) * cap  # before the mask
        scores = scores.masked_fill(~visible(t, self.window(layer)), float("-inf"))
        out = (torch.softmax(scores, -1) @ v).transpose(1, 2).reshape(b, t, -1)
        return self._linear(p + "o_proj", out)

    # ---- MLP / MoE ----------------------------------------------------------------------------
    def is_sparse(self, layer):
        c = self.c
        if self.mt == "qwen2_moe":
            return (layer not in c["mlp_only_layers"] and c["num_experts"] > 0
                    and (layer + 1) % c["decoder_sparse_step"] == 0)
        return self.mt in MOE

    def mlp(self, layer, x):
        if self.is_sparse(layer):
            return self.moe(layer, x)
        return self._gated(f"model.layers.{layer}.mlp.", x)

    def route(self, p, x):
        """Router: softmax over all experts' logits, the top k of those probabilities (best
        first), renormalised over the k for Mixtral always and for the others with norm_topk_prob."""
        c = self.c
        logits = x @ self.w[p + "gate.weight"].T
        probs = torch.softmax(logits, -1)
        k = c["num_experts_per_tok"]
        weights, experts = probs.topk(k, -1)
        if self.mt == "mixtral" or c["norm_topk_prob"]:
            weights = weights / weights.sum(-1, keepdim=True)
        ranked = torch.cat([probs.sort(-1, descending=True).values, torch.full_like(probs[..., :1], -math.inf)], -1)
        margin = ranked[..., k - 1] - ranked[..., k]  # inf when every expert is chosen
        return {"router_logits": logits, "experts": experts, "weights": weights, "margin": margin}

    def moe(self, layer, x):
        mixtral = self.mt == "mixtral"
        p = f"model.layers.{layer}." + ("block_sparse_moe." if mixtral else "mlp.")
        r = self.routing[layer] = self.route(p, x)
        names = ("w1", "w3", "w2") if mixtral else ("gate_proj", "up_proj", "down_proj")
        out = torch.zeros_like(x)
        for e in range(r["router_logits"].shape[-1]):
            share = (r["weights"] * (r["experts"] == e)).sum(-1, keepdim=True)  # 0 where e is not chosen
            if bool((share != 0).any()):
                out = out + share * self._gated(f"{p}experts.{e}.", x, names)
        if p + "shared_expert_gate.weight" in self.w:
            out = out + torch.sigmoid(self._linear(p + "shared_expert_gate", x)) * self._gated(p + "shared_expert.", x)
        return out

    # ---- the decoder --------------------------------------------------------------------------
    def embed(self, ids):
        e = self.w["model.embed_tokens.weight"][ids]
        if not self.gemma:
            return e
        # HF multiplies by sqrt(hidden) held as a tensor of the stream's dtype (Gemma2Model.forward's
        # normalizer; Gemma3TextScaledWordEmbedding's embed_scale.to(weight dtype)).
        return e * torch.tensor(math.sqrt(self.c["hidden_size"]), dtype=self.embed_scale_dtype).item()

    def mlp_stream(self, layer, h):
        """The residual stream after the block's attention (its add included)."""
        p = f"model.layers.{layer}."
        if self.mt == "olmo2":  # no input norm; the attention's output is normed before the add
            return h + self._norm(p + "post_attention_layernorm.weight", self.attention(layer, h))
        a = self.attention(layer, self._norm(p + "input_layernorm.weight", h))
        return h + (self._norm(p + "post_attention_layernorm.weight", a) if self.gemma else a)

    def mlp_input(self, layer, h):
        return self._mlp_in(layer, self.mlp_stream(layer, h))

    def _mlp_in(self, layer, s):
        p = f"model.layers.{layer}."
        if self.mt == "olmo2":
            return s
        name = "pre_feedforward_layernorm" if self.gemma else "post_attention_layernorm"
        return self._norm(p + name + ".weight", s)

    def block(self, layer, h, mlp_at):
        p = f"model.layers.{layer}."
        s = self.mlp_stream(layer, h)
        y = mlp_at(self._mlp_in(layer, s), lambda x: self.mlp(layer, x))
        if self.gemma or self.mt == "olmo2":
            y = self._norm(p + "post_feedforward_layernorm.weight", y)
        return s + y

    def logits(self, h):
        h = self._norm("model.norm.weight", h)
        head = self.w.get("lm_head.weight")
        if head is None or self.c["tie_word_embeddings"]:
            head = self.w["model.embed_tokens.weight"]
        out = h @ head.T
        cap = self.c.get("final_logit_softcapping") if self.gemma else None
        return torch.tanh(out / cap) * cap if cap is not None else out


def load(model_dir, embed_scale_dtype=torch.float32):
    """ZooDecoder of MODEL_DIR's config.json and model.safetensors."""
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    return ZooDecoder(config, read_safetensors(os.path.join(model_dir, "model.safetensors")), embed_scale_dtype)


def run(decoder, ids):
    """(logits [B, T, V], routing) of a ZooDecoder for ids [B, T] (or [T]: then [T, V])."""
    flat = ids.dim() == 1
    ids = ids[None] if flat else ids
    decoder.routing = {}
    h = decoder.embed(ids)
    for layer in range(decoder.c["num_hidden_layers"]):
        h = decoder.block(layer, h, lambda x, mlp: mlp(x))
    logits = decoder.logits(h)
    routing = {layer: {k: v[0] for k, v in r.items()} if flat else r for layer, r in decoder.routing.items()}
    return (logits[0] if flat else logits), routing


def reference_forward_zoo(model_dir, ids, embed_scale_dtype=torch.float32):
    """(logits, routing) for ids [T] int64: logits [T, V] float64; routing {layer: {"router_logits"
    [T, E], "experts" [T, k] int64 best first, "weights" [T, k] (as mixed), "margin" [T] (k-th
    minus (k+1)-th probability)}} for each sparse layer (empty for dense models)."""
    return run(load(model_dir, embed_scale_dtype), torch.as_tensor(ids, dtype=torch.int64))


def reference_logits(model_dir, ids, embed_scale_dtype=torch.float32):
    """logits [T, V] float64 of ids [T] (positions 0..T-1)."""
    return reference_forward_zoo(model_dir, ids, embed_scale_dtype)[0]


def routing_margin(routing):
    """The smallest top-k margin (k-th minus (k+1)-th expert probability) over a routing's layers
    and tokens; inf for a dense model. Below ~1e-5 a float32 forward may pick other experts."""
    return min((float(r["margin"].min()) for r in routing.values()), default=math.inf)
