"""An independent forward pass of the test fixtures' architectures (GPT-2; GPT-NeoX with parallel
or sequential residual and partial rotary embeddings; the pre-norm decoders Llama, Mistral,
Qwen2 and Gemma) in float64 torch, written from the architectures' definitions (the GPT-2,
Pythia, Llama 1-3, Mistral, Qwen2 and Gemma papers and model cards) and reading the
checkpoints' safetensors directly (no project code, no transformers). Its own check: the eval
NLL of tests/data/golden.json. Qwen3, Gemma 2, Gemma 3, OLMo 2, Phi-3, Mixtral, Qwen2-MoE and
OLMoE come from reference_zoo.py (ZooDecoder), behind the same interface.

    ref = ReferenceModel("tests/data/models/tiny-gpt2")
    streams, logits = ref.forward(ids)   # ids [B, T] int64; streams[l]: the residual entering block l
    ref.affine = {1: (W, b)}             # layer 1's MLP replaced by x·W + b
    ref.capture = {0: []}                # appends (X, Y) of layer 0's MLP at each forward
"""
import json
import math
import os
import struct

import numpy as np
import torch

_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64, "BF16": np.uint16}
DECODERS = ("llama", "mistral", "qwen2", "gemma", "stablelm")


def read_safetensors(path):
    """{name: float64 tensor} of a safetensors file (header length, JSON header, raw bytes)."""
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        begin, end = t["data_offsets"]
        a = np.frombuffer(raw[8 + n + begin:8 + n + end], dtype=_DTYPES[t["dtype"]]).reshape(t["shape"])
        if t["dtype"] == "BF16":  # the high half of a float32
            a = (a.astype(np.uint32) << 16).view(np.float32)
        out[name] = torch.from_numpy(a.astype(np.float64))
    return out


def _layer_norm(x, w, b, eps):
    return torch.nn.functional.layer_norm(x, x.shape[-1:], w, b, eps)


def _causal_attention(q, k, v):
    """q, k, v [B, H, T, hd] -> [B, T, H·hd]."""
    t = q.shape[2]
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(torch.triu(torch.ones(t, t, dtype=torch.bool), 1), float("-inf"))
    out = torch.softmax(scores, -1) @ v
    return out.transpose(1, 2).reshape(q.shape[0], t, -1)


class ReferenceModel:
    def __init__(self, model_dir):
        with open(os.path.join(model_dir, "config.json")) as f:
            self.config = json.load(f)
        w = read_safetensors(os.path.join(model_dir, "model.safetensors"))
        self.w = {k.removeprefix("transformer."): v for k, v in w.items()}
        self.gpt2 = self.config["model_type"] == "gpt2"
        self.decoder = Decoder(self.config, self.w) if self.config["model_type"] in DECODERS else None
        if self.config["model_type"] not in DECODERS + ("gpt2", "gpt_neox"):
            from reference_zoo import ZooDecoder  # it imports this module: loaded on demand
            self.decoder = ZooDecoder(self.config, self.w)
        self.affine, self.capture = {}, {}

    def _mlp_at(self, layer, x, mlp):
        """The MLP of `layer` at its input x, or its affine replacement; records (x, mlp(x))."""
        if layer in self.capture:
            self.capture[layer].append((x, mlp(x)))
        if layer in self.affine:
            w, b = self.affine[layer]
            return x @ w + b
        return mlp(x)

    @property
    def num_layers(self):
        return self.config["n_layer" if self.gpt2 else "num_hidden_layers"]

    def embed(self, ids):
        """The token embedding (+ the position embedding for GPT-2): the stream entering block 0."""
        if self.decoder:
            return self.decoder.embed(ids)
        if self.gpt2:
            return self.w["wte.weight"][ids] + self.w["wpe.weight"][torch.arange(ids.shape[1])][None]
        return self.w["gpt_neox.embed_in.weight"][ids]

    def forward(self, ids):
        h = self.embed(ids)
        streams = []
        for layer in range(self.num_layers):
            streams.append(h)
            if self.decoder:
                h = self.decoder.block(layer, h, lambda x, mlp, layer=layer: self._mlp_at(layer, x, mlp))
            else:
                h = self._gpt2_block(layer, h) if self.gpt2 else self._neox_block(layer, h)
        if self.decoder:
            return streams, self.decoder.logits(h)
        if self.gpt2:
            h = _layer_norm(h, self.w["ln_f.weight"], self.w["ln_f.bias"], self.config["layer_norm_epsilon"])
            return streams, h @ self.w["wte.weight"].T
        h = _layer_norm(h, self.w["gpt_neox.final_layer_norm.weight"], self.w["gpt_neox.final_layer_norm.bias"],
                        self.config["layer_norm_eps"])
        return streams, h @ self.w["embed_out.weight"].T

    def _gpt2_block(self, layer, x):
        c, p = self.config, f"h.{layer}."
        w, eps, heads = self.w, c["layer_norm_epsilon"], c["n_head"]
        a = _layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps)
        qkv = a @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]  # Conv1D: [d, 3d]
        q, k, v = (t.reshape(*t.shape[:2], heads, -1).transpose(1, 2) for t in qkv.split(x.shape[-1], -1))
        x = x + _causal_attention(q, k, v) @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        m = _layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)

        def mlp(m):
            act = m @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"]
            act = 0.5 * act * (1 + torch.tanh(math.sqrt(2 / math.pi) * (act + 0.044715 * act ** 3)))  # gelu_new
            return act @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]

        return x + self._mlp_at(layer, m, mlp)

    def _neox_attention(self, p, a):
        c, w = self.config, self.w
        heads = c["num_attention_heads"]
        b, t, d = a.shape
        hd = d // heads
        qkv = (a @ w[p + "attention.query_key_value.weight"].T + w[p + "attention.query_key_value.bias"])
        q, k, v = qkv.reshape(b, t, heads, 3 * hd).permute(0, 2, 1, 3).split(hd, -1)  # per head: q | k | v
        rot = int(hd * c["rotary_pct"])
        inv_freq = 1.0 / c.get("rotary_emb_base", 10000) ** (torch.arange(0, rot, 2, dtype=torch.float64) / rot)
        angles = torch.outer(torch.arange(t, dtype=torch.float64), inv_freq)
        cos, sin = torch.cat([angles, angles], -1).cos(), torch.cat([angles, angles], -1).sin()

        def rotate(x):
            r, rest = x[..., :rot], x[..., rot:]
            half = torch.cat([-r[..., rot // 2:], r[..., :rot // 2]], -1)
            return torch.cat([r * cos + half * sin, rest], -1)

        out = _causal_attention(rotate(q), rotate(k), v)
        return out @ w[p + "attention.dense.weight"].T + w[p + "attention.dense.bias"]

    def _neox_mlp(self, p, m):
        w = self.w
        act = torch.nn.functional.gelu(m @ w[p + "mlp.dense_h_to_4h.weight"].T + w[p + "mlp.dense_h_to_4h.bias"])
        return act @ w[p + "mlp.dense_4h_to_h.weight"].T + w[p + "mlp.dense_4h_to_h.bias"]

    def _neox_block(self, layer, x):
        c, p, w = self.config, f"gpt_neox.layers.{layer}.", self.w
        eps = c["layer_norm_eps"]

        def ln(name, h):
            return _layer_norm(h, w[p + name + ".weight"], w[p + name + ".bias"], eps)

        attn = self._neox_attention(p, ln("input_layernorm", x))
        mlp = lambda m: self._neox_mlp(p, m)  # noqa: E731
        if c.get("use_parallel_residual", True):
            return x + attn + self._mlp_at(layer, ln("post_attention_layernorm", x), mlp)
        x = x + attn
        return x + self._mlp_at(layer, ln("post_attention_layernorm", x), mlp)

    def mlp_stream(self, layer, stream):
        """The residual stream whose norm is the MLP's input at `layer`, given the stream entering
        its block (GPT-2, sequential NeoX and the decoders: plus the block's attention; parallel
        NeoX: the block's input, which attention and MLP both read)."""
        c, w = self.config, self.w
        if self.decoder:
            return self.decoder.mlp_stream(layer, stream)
        if self.gpt2:
            p = f"h.{layer}."
            a = _layer_norm(stream, w[p + "ln_1.weight"], w[p + "ln_1.bias"], c["layer_norm_epsilon"])
            qkv = a @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
            q, k, v = (t.reshape(*t.shape[:2], c["n_head"], -1).transpose(1, 2) for t in qkv.split(a.shape[-1], -1))
            return stream + _causal_attention(q, k, v) @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        if c.get("use_parallel_residual", True):
            return stream
        p = f"gpt_neox.layers.{layer}."
        a = _layer_norm(stream, w[p + "input_layernorm.weight"], w[p + "input_layernorm.bias"], c["layer_norm_eps"])
        return stream + self._neox_attention(p, a)

    def mlp_input(self, layer, stream):
        """The MLP's input at `layer` given the stream entering its block: the norm of mlp_stream."""
        c, w = self.config, self.w
        if self.decoder:
            return self.decoder.mlp_input(layer, stream)
        s = self.mlp_stream(layer, stream)
        if self.gpt2:
            p = f"h.{layer}."
            return _layer_norm(s, w[p + "ln_2.weight"], w[p + "ln_2.bias"], c["layer_norm_epsilon"])
        p = f"gpt_neox.layers.{layer}."
        return _layer_norm(s, w[p + "post_attention_layernorm.weight"], w[p + "post_attention_layernorm.bias"],
                           c["layer_norm_eps"])


def _rope_config(c):
    """(theta, scaling dict) from either config dialect: 5.x rope_parameters or 4.x rope_theta/rope_scaling."""
    if c.get("rope_parameters"):
        p = c["rope_parameters"]
        return p.get("rope_theta", 10000.0), p
    return c.get("rope_theta", 10000.0), c.get("rope_scaling") or {}


def _inverse_frequencies(c, dim, positions):
    """RoPE's θ_i = base^(−2i/dim), with the scalings of the Llama 2 (linear, dynamic NTK) and
    Llama 3.1 (llama3) releases."""
    base, s = _rope_config(c)
    kind = s.get("rope_type", s.get("type", "default"))
    original = s.get("original_max_position_embeddings") or c.get("max_position_embeddings", 2048)
    if kind == "dynamic" and positions > original:
        f = s["factor"]
        base = base * ((f * positions / original) - (f - 1)) ** (dim / (dim - 2))
    inv = 1.0 / base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    if kind == "linear":
        return inv / s["factor"]
    if kind == "llama3":
        f, lo, hi = s["factor"], s["low_freq_factor"], s["high_freq_factor"]
        out = []
        for freq in inv.tolist():
            wavelen = 2 * math.pi / freq
            if wavelen < original / hi:
                out.append(freq)
            elif wavelen > original / lo:
                out.append(freq / f)
            else:
                smooth = (original / wavelen - lo) / (hi - lo)
                out.append((1 - smooth) * freq / f + smooth * freq)
        return torch.tensor(out, dtype=torch.float64)
    assert kind in ("default", "dynamic"), kind
    return inv


class Decoder:
    """The pre-norm decoder of Llama (RMSNorm, SwiGLU, RoPE, grouped-query attention), with
    Mistral (no biases), Qwen2 (q/k/v biases), Gemma (RMSNorm times 1 + w, GeGLU with tanh
    GELU, embedding times sqrt(d), tied head) and StableLM 2 (LayerNorm with bias, RoPE on the
    first partial_rotary_factor of each head) as its variants."""

    def __init__(self, config, w):
        self.c, self.w = config, w
        self.gemma = config["model_type"] == "gemma"
        self.heads = config["num_attention_heads"]
        self.kv_heads = config.get("num_key_value_heads") or self.heads
        self.hd = config.get("head_dim") or config["hidden_size"] // self.heads
        self.stablelm = config["model_type"] == "stablelm"
        self.eps = config.get("layer_norm_eps", 1e-5) if self.stablelm else config.get("rms_norm_eps", 1e-6)
        self.rot = int(self.hd * config.get("partial_rotary_factor", 0.25 if self.stablelm else 1.0))

    def _norm(self, name, x):
        w = self.w[name]
        if self.stablelm:
            return _layer_norm(x, w, self.w[name.removesuffix("weight") + "bias"], self.eps)
        x = x / torch.sqrt((x * x).mean(-1, keepdim=True) + self.eps)
        return x * (1 + w) if self.gemma else x * w

    def _linear(self, name, x):
        y = x @ self.w[name + ".weight"].T
        return y + self.w[name + ".bias"] if name + ".bias" in self.w else y

    def _act(self, x):
        act = self.c.get("hidden_activation") or self.c.get("hidden_act", "silu")
        if act == "silu":
            return x * torch.sigmoid(x)
        assert act in ("gelu_pytorch_tanh", "gelu_new"), act
        return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))

    def embed(self, ids):
        e = self.w["model.embed_tokens.weight"][ids]
        return e * math.sqrt(self.c["hidden_size"]) if self.gemma else e

    def _attention(self, p, x):
        b, t, _ = x.shape
        q = self._linear(p + "self_attn.q_proj", x).reshape(b, t, self.heads, self.hd).transpose(1, 2)
        k = self._linear(p + "self_attn.k_proj", x).reshape(b, t, self.kv_heads, self.hd).transpose(1, 2)
        v = self._linear(p + "self_attn.v_proj", x).reshape(b, t, self.kv_heads, self.hd).transpose(1, 2)
        r = self.rot
        angles = torch.outer(torch.arange(t, dtype=torch.float64), _inverse_frequencies(self.c, r, t))
        cos, sin = angles.cos(), angles.sin()  # [T, r/2]: pair i is (x_i, x_{i + r/2}) of the first r

        def rope(x):
            x1, x2, rest = x[..., :r // 2], x[..., r // 2:r], x[..., r:]
            return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin, rest], -1)

        group = self.heads // self.kv_heads  # query head h reads key/value head h // group
        k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
        return self._linear(p + "self_attn.o_proj", _causal_attention(rope(q), rope(k), v))

    def mlp(self, p, x):
        gate = self._act(self._linear(p + "mlp.gate_proj", x))
        return self._linear(p + "mlp.down_proj", gate * self._linear(p + "mlp.up_proj", x))

    def mlp_stream(self, layer, h):
        p = f"model.layers.{layer}."
        return h + self._attention(p, self._norm(p + "input_layernorm.weight", h))

    def mlp_input(self, layer, h):
        return self._norm(f"model.layers.{layer}.post_attention_layernorm.weight", self.mlp_stream(layer, h))

    def block(self, layer, h, mlp_at):
        p = f"model.layers.{layer}."
        h = h + self._attention(p, self._norm(p + "input_layernorm.weight", h))
        return h + mlp_at(self._norm(p + "post_attention_layernorm.weight", h), lambda x: self.mlp(p, x))

    def logits(self, h):
        h = self._norm("model.norm.weight", h)
        head = self.w.get("lm_head.weight")
        if head is None or self.c.get("tie_word_embeddings", self.gemma):
            head = self.w["model.embed_tokens.weight"]
        return h @ head.T


def nll_sum(logits, ids):
    """Σ −log p(token t+1) over positions 0..T−2 of every window."""
    logp = torch.log_softmax(logits[:, :-1], -1)
    return -logp.gather(-1, ids[:, 1:, None]).sum().item()


def ridge(x, y, lam):
    """W, b of y ≈ x·W + b on centred data: W = (XcᵀXc + λI)⁻¹ XcᵀYc, b = ȳ − x̄·W (float64)."""
    x, y = x.reshape(-1, x.shape[-1]), y.reshape(-1, y.shape[-1])
    mx, my = x.mean(0), y.mean(0)
    xc, yc = x - mx, y - my
    w = torch.linalg.solve(xc.T @ xc + lam * torch.eye(x.shape[1], dtype=x.dtype), xc.T @ yc)
    return w, my - mx @ w
