#!/usr/bin/python3
"""The pre-norm decoders' checkpoints through `linsweep eval` against the independent float64
reference forward (tests/support/reference_forward.py, and reference_zoo.py for the families of
tests/data/models/hf_zoo): each must agree to 1e-5 relative perplexity.

Usage: decoder_parity_test.py LINSWEEP_BINARY SOURCE_DIR SCRATCH_DIR

Checkpoints: our generator's (tests/support/make_decoder_fixtures.py: each architecture in
float32, bfloat16 and float16, with llama3, linear and dynamic rope scaling) and the ones HF
transformers wrote itself (tests/data/models/hf_transformers5), read with their 5.x config and
with the 4.x form of the same config; and the hub-layout checkpoints of Qwen3, Gemma 2, Gemma 3,
OLMo 2, Phi-3, Mixtral, Qwen2-MoE and OLMoE (tests/data/models/hf_zoo) in the float32, bfloat16,
float16 and 5.x-config forms tests/support/make_zoo_fixtures.py writes, on its token stream (whose
router decisions are all far from a tie). Weights are read at their stored precision by both
sides, and linsweep computes in float32, so the bound is float32 rounding over two or three
layers: the measured worst case is printed, overall and per family.
"""
import json
import math
import os
import shutil
import subprocess
import sys

import numpy as np
import torch

TOKENS, CONTEXT, BOUND = 256, 32, 1e-5


def model_dirs(src, scratch):
    sys.path.insert(0, os.path.join(src, "tests", "support"))
    import make_decoder_fixtures
    generated = os.path.join(scratch, "generated")
    make_decoder_fixtures.main(generated)
    dirs = [os.path.join(generated, d) for d in sorted(os.listdir(generated)) if d.startswith("tiny-")]
    hf = os.path.join(src, "tests", "data", "models", "hf_transformers5")
    for name in sorted(os.listdir(hf)):
        if not os.path.isdir(os.path.join(hf, name)):
            continue
        dirs.append(os.path.join(hf, name))
        legacy = os.path.join(scratch, name + "-legacy")
        os.makedirs(legacy)
        shutil.copy(os.path.join(hf, name, "config.legacy.json"), os.path.join(legacy, "config.json"))
        os.symlink(os.path.join(hf, name, "model.safetensors"), os.path.join(legacy, "model.safetensors"))
        dirs.append(legacy)
    return dirs, os.path.join(generated, "tokens.npy")


def zoo_dirs(src, scratch):
    """make_zoo_fixtures.py's four forms of every hf_zoo checkpoint, and their token stream."""
    import make_zoo_fixtures
    out = os.path.join(scratch, "zoo")
    dirs = make_zoo_fixtures.main(os.path.join(src, "tests", "data", "models", "hf_zoo"), out)
    return dirs, os.path.join(out, "tokens.npy")


def family(model_dir):
    """The checkpoint's name without its form: 'zoo-qwen2-moe-f32' -> 'qwen2-moe', 'tiny-llama-bf16'
    -> 'tiny-llama', 'llama-gqa-f32-legacy' -> 'llama-gqa'."""
    parts = os.path.basename(model_dir).removeprefix("zoo-").split("-")
    while len(parts) > 1 and parts[-1] in ("f32", "bf16", "f16", "v5", "legacy"):
        parts.pop()
    return "-".join(parts)


def check_inspect(binary, model, want, failures):
    """`inspect --json` of model reports the facts in want."""
    j = json.loads(subprocess.run([binary, "inspect", "--json", model], capture_output=True, text=True,
                                  check=True).stdout)
    wrong = {k: (j.get(k), v) for k, v in want.items() if j.get(k) != v}
    print(f"inspect {os.path.basename(model)}: {'as expected' if not wrong else wrong}")
    if wrong:
        failures.append(f"inspect {os.path.basename(model)}: {wrong}")


def linsweep_nll(binary, model, tokens):
    out = subprocess.run([binary, "eval", "--model", model, "--corpus", tokens, "--tokens", str(TOKENS), "--context",
                          str(CONTEXT), "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{model}: linsweep eval failed ({out.returncode}): {out.stderr.strip()}")
    j = json.loads(out.stdout)
    return j["nll_sum"], j["tokens_scored"]


def compare(binary, dirs, tokens, failures, worst):
    """Each model of dirs on tokens, linsweep against the reference; worst[family] updated."""
    from reference_forward import ReferenceModel, nll_sum
    ids = torch.from_numpy(np.load(tokens)[:TOKENS].astype(np.int64)).reshape(-1, CONTEXT)
    for d in dirs:
        ours, scored = linsweep_nll(binary, d, tokens)
        ref = nll_sum(ReferenceModel(d).forward(ids)[1], ids)
        # |Δ ppl| / ppl = |exp(Δ mean nll) − 1|
        rel = abs(math.expm1((ours - ref) / scored))
        worst[family(d)] = max(worst.get(family(d), 0.0), rel)
        line = f"{os.path.basename(d):28s} ppl {math.exp(ref / scored):10.3f}  relative difference {rel:.2e}"
        print(line)
        if not rel <= BOUND:
            failures.append(line)


def main():
    binary, src, scratch = (os.path.abspath(a) for a in sys.argv[1:4])
    sys.path.insert(0, os.path.join(src, "tests", "support"))
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    failures, worst = [], {}
    dirs, tokens = model_dirs(src, scratch)
    compare(binary, dirs, tokens, failures, worst)
    zoo, zoo_tokens = zoo_dirs(src, scratch)
    compare(binary, zoo, zoo_tokens, failures, worst)
    models = os.path.join(src, "tests", "data", "models")
    # `inspect` reports the decoder's own facts from its record, the experts' among them.
    check_inspect(binary, os.path.join(models, "hf_transformers5", "llama3-tied-bf16"),
                  {"architecture": "llama", "heads": 8, "kv_heads": 2, "head_dim": 8, "norm": "rms_norm",
                   "gated_mlp": True, "activation": "silu", "rope_type": "llama3", "rotary_dims": 8, "tied_head": True,
                   "residual": "sequential"}, failures)
    check_inspect(binary, os.path.join(models, "hf_zoo", "qwen2-moe-f32"),
                  {"architecture": "qwen2_moe", "experts": 6, "experts_per_token": 2, "expert_d_ff": 48,
                   "shared_expert_d_ff": 96, "sparse_layers": [1, 2]}, failures)
    check_inspect(binary, os.path.join(models, "hf_zoo", "mixtral-bf16"),
                  {"architecture": "mixtral", "experts": 4, "experts_per_token": 2, "expert_d_ff": 96,
                   "sparse_layers": [0, 1]}, failures)
    for name in sorted(worst):
        print(f"  worst {name:24s} {worst[name]:.2e}")
    total = len(dirs) + len(zoo)
    print(f"decoder parity: {total} checkpoints, worst relative perplexity difference {max(worst.values()):.2e} "
          f"(bound {BOUND})")
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
