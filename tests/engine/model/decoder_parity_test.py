#!/usr/bin/python3
"""Llama, Mistral, Qwen2 and Gemma checkpoints through `linsweep eval` against the independent
float64 reference forward (tests/support/reference_forward.py): each must agree to 1e-5
relative perplexity.

Usage: decoder_parity_test.py LINSWEEP_BINARY SOURCE_DIR SCRATCH_DIR

Checkpoints: our generator's (tests/support/make_decoder_fixtures.py: each architecture in
float32, bfloat16 and float16, with llama3, linear and dynamic rope scaling) and the ones HF
transformers wrote itself (tests/data/models/hf_transformers5), read with their 5.x config and
with the 4.x form of the same config. Weights are read at their stored precision by both sides,
and linsweep computes in float32, so the bound is float32 rounding over two layers: the
measured worst case is printed.
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


def linsweep_nll(binary, model, tokens):
    out = subprocess.run([binary, "eval", "--model", model, "--corpus", tokens, "--tokens", str(TOKENS), "--context",
                          str(CONTEXT), "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{model}: linsweep eval failed ({out.returncode}): {out.stderr.strip()}")
    j = json.loads(out.stdout)
    return j["nll_sum"], j["tokens_scored"]


def main():
    binary, src, scratch = (os.path.abspath(a) for a in sys.argv[1:4])
    sys.path.insert(0, os.path.join(src, "tests", "support"))
    from reference_forward import ReferenceModel, nll_sum
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    dirs, tokens = model_dirs(src, scratch)
    ids = torch.from_numpy(np.load(tokens)[:TOKENS].astype(np.int64)).reshape(-1, CONTEXT)
    failures, worst = [], 0.0
    for d in dirs:
        ours, scored = linsweep_nll(binary, d, tokens)
        ref = nll_sum(ReferenceModel(d).forward(ids)[1], ids)
        # |Δ ppl| / ppl = |exp(Δ mean nll) − 1|
        rel = abs(math.expm1((ours - ref) / scored))
        worst = max(worst, rel)
        line = f"{os.path.basename(d):28s} ppl {math.exp(ref / scored):10.3f}  relative difference {rel:.2e}"
        print(line)
        if not rel <= BOUND:
            failures.append(line)
    # `inspect` reports the decoder's own facts from its record.
    j = json.loads(subprocess.run([binary, "inspect", "--json", os.path.join(src, "tests", "data", "models",
                                   "hf_transformers5", "llama3-tied-bf16")], capture_output=True, text=True,
                                  check=True).stdout)
    want = {"architecture": "llama", "heads": 8, "kv_heads": 2, "head_dim": 8, "norm": "rms_norm", "gated_mlp": True,
            "activation": "silu", "rope_type": "llama3", "rotary_dims": 8, "tied_head": True, "residual": "sequential"}
    wrong = {k: (j.get(k), v) for k, v in want.items() if j.get(k) != v}
    print(f"inspect llama3-tied-bf16: {'as expected' if not wrong else wrong}")
    if wrong:
        failures.append(f"inspect: {wrong}")
    print(f"decoder parity: {len(dirs)} checkpoints, worst relative perplexity difference {worst:.2e} (bound {BOUND})")
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
