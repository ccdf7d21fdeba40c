"""How close a throughput benchmark came to the machine's float32 GEMM rate.

Measures the GEMM rate (torch.mm of two N x N float32 matrices, N = 4096, the best of 3 after a
warm-up) with the benchmark's thread count and under its environment, so with the kernels
oneDNN, OpenBLAS and ATen pick for it (ONEDNN_MAX_CPU_ISA, OPENBLAS_CORETYPE,
ATEN_CPU_CAPABILITY). Then, for each NAME=TOKENS_PER_SECOND, prints the GFLOP/s that rate means
for the benchmark's GPT-2-architecture model and its share of the GEMM rate.

FLOPs per token: per layer, the four projections and the MLP, 2·(4d² + 2·d·d_ff) (d_ff = 4d),
and attention's two batched products over the whole window as computed (2·2·context·d, no
saving for the causal mask); then the LM head, 2·d·vocab. LayerNorm, GELU, softmax and the
embeddings are left out (a few per cent). Training counts the backward pass as twice the
forward: 3x.

Usage: gemm_share.py --threads T --d D --layers L --vocab V --context C [--training] NAME=TPS...
"""
import argparse
import os
import platform
import time

import torch


def flops_per_token(d, layers, vocab, context, training=False):
    per_layer = 2 * (4 * d * d + 2 * d * 4 * d) + 4 * context * d
    forward = layers * per_layer + 2 * d * vocab
    return 3 * forward if training else forward


def gemm_gflops(threads, n=4096, repeats=3):
    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(0)
    a, b = torch.rand(n, n, generator=g), torch.rand(n, n, generator=g)
    torch.mm(a, b)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - start)
    return 2 * n**3 / best / 1e9


def machine():
    with open("/proc/cpuinfo") as f:
        cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), platform.machine())
    names = ("ONEDNN_MAX_CPU_ISA", "OPENBLAS_CORETYPE", "ATEN_CPU_CAPABILITY")
    kernels = " ".join(f"{k}={os.environ[k]}" for k in names if k in os.environ) or "the CPU's own"
    return f"{cpu}; kernels: {kernels}; torch {torch.__version__}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name in ("threads", "d", "layers", "vocab", "context"):
        ap.add_argument(f"--{name}", type=int, required=True)
    ap.add_argument("--training", action="store_true")
    ap.add_argument("rates", nargs="+", metavar="NAME=TOKENS_PER_SECOND")
    a = ap.parse_args()
    flops = flops_per_token(a.d, a.layers, a.vocab, a.context, a.training)
    gemm = gemm_gflops(a.threads)
    print(f"machine: {machine()}")
    print(f"float32 GEMM (4096x4096, {a.threads} threads): {gemm:.1f} GFLOP/s; "
          f"{flops / 1e6:.1f} MFLOP per token")
    for item in a.rates:
        name, tps = item.split("=", 1)
        rate = float(tps) * flops / 1e9
        print(f"{name}: {rate:.1f} GFLOP/s, {100 * rate / gemm:.0f}% of the GEMM rate")


if __name__ == "__main__":
    main()
