#!/usr/bin/python3
"""scikit-learn side of bench/gate_training.sh.

make:     writes gate-like training data: x.npy float32 [n, d] (correlated columns: a random
          low-rank factor model plus noise, columns of very different scales and offsets, a few
          outsized columns) and y.npy uint8 [n] drawn from a noisy logistic model of x (roughly
          balanced, not linearly separable).
sklearn:  times StandardScaler().fit_transform + LogisticRegression(C=1, tol=1e-10,
          max_iter=10000).fit (default solver, lbfgs) on that data; prints JSON. --reference also
          fits solver="newton-cg" and compares both solutions (standardised space) with
          linsweep's, read from linsweep_coef.npy.

Threads: OMP/OpenBLAS/MKL are limited to --threads before numpy is imported.
"""
import argparse
import json
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import int_options  # noqa: E402


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("command", choices=["make", "sklearn"])
    ap.add_argument("--dir", required=True)
    int_options(ap, n=25000, d=1024, rank=48, seed=0, threads=2, repeats=1)
    ap.add_argument("--reference", action="store_true", help="also fit newton-cg and compare with linsweep_coef.npy")
    return ap.parse_args()


args = parse()
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(args.threads)

import numpy as np  # noqa: E402


def make():
    rng = np.random.default_rng(args.seed)
    n, d, r = args.n, args.d, args.rank
    # Factor model: columns share r latent factors (correlated), plus per-column noise.
    z = rng.standard_normal((n, r), dtype=np.float32)
    a = rng.standard_normal((r, d), dtype=np.float32) / np.sqrt(r)
    x = z @ a + 0.5 * rng.standard_normal((n, d), dtype=np.float32)
    # Heavy-tailed rows (some tokens have much larger activations than others).
    x *= np.exp(0.3 * rng.standard_normal((n, 1), dtype=np.float32))
    # Per-column scales spanning ~3 orders of magnitude, offsets, and a few outsized columns.
    scale = np.exp(rng.normal(0.0, 1.0, d)).astype(np.float32)
    scale[rng.choice(d, 4, replace=False)] *= 50
    offset = (rng.normal(0.0, 1.0, d) * scale).astype(np.float32)
    x = x * scale + offset
    # Labels: a noisy logistic model of the standardised x (logit sd ~ 2.5, Bayes error ~ 0.2),
    # intercept near 0 so the classes are roughly balanced.
    xs = (x - x.mean(0)) / x.std(0)
    w = rng.standard_normal(d) * (rng.random(d) < 0.25)  # a quarter of the columns matter
    logit = xs.astype(np.float64) @ w
    logit *= 2.5 / logit.std()
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.uint8)
    np.save(f"{args.dir}/x.npy", np.ascontiguousarray(x, dtype=np.float32))
    np.save(f"{args.dir}/y.npy", y)
    print(f"data: n={n} d={d} rank {r} + noise, column scales {scale.min():.3g}..{scale.max():.3g}, "
          f"positives {y.mean():.3f}")


def gradient_max(xs, y, coef):
    """‖∇‖∞ of Σ logloss + ‖w‖²/2 (C = 1, intercept not penalised) at coef = [w, b], float64."""
    r = 1 / (1 + np.exp(-(xs @ coef[:-1] + coef[-1]))) - y
    return float(max(np.abs(xs.T @ r + coef[:-1]).max(), abs(r.sum())))


def sklearn_run():
    import sklearn
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler
    from threadpoolctl import threadpool_info

    x = np.load(f"{args.dir}/x.npy")
    y = np.load(f"{args.dir}/y.npy")
    if x.dtype != np.float32 or x.ndim != 2 or y.dtype != np.uint8 or y.shape != (x.shape[0],):
        sys.exit("gate_training.py: x.npy must be float32 [n, d] and y.npy uint8 [n]")
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        xs = StandardScaler().fit_transform(x)
        clf = LogisticRegression(C=1.0, tol=1e-10, max_iter=10000).fit(xs, y)
        times.append(time.perf_counter() - t0)
    out = {"seconds": times, "n_iter": int(clf.n_iter_[0]), "sklearn": sklearn.__version__, "solver": clf.solver,
           "threads": [f"{i['internal_api']} {i['num_threads']}" for i in threadpool_info()]}
    if args.reference:
        # Coefficients in the standardised space: linsweep's stored weight and bias (float64,
        # written by bench_gate_training) against the default solver and against newton-cg,
        # which runs to its gradient tolerance; gradients of linsweep's (summed) objective at
        # each solution, on one float64 standardisation.
        coef = np.load(f"{args.dir}/linsweep_coef.npy")
        if coef.shape != (x.shape[1] + 1,):
            sys.exit("gate_training.py: linsweep_coef.npy must hold d + 1 values")
        warnings.filterwarnings("ignore")  # newton-cg reports that rounding, not its tolerance, ended it
        t0 = time.perf_counter()
        ref = LogisticRegression(C=1.0, tol=1e-10, max_iter=10000, solver="newton-cg").fit(xs, y)
        out["newton_cg_seconds"] = time.perf_counter() - t0
        out["newton_cg_n_iter"] = int(ref.n_iter_[0])
        x64 = x.astype(np.float64)
        xs64 = (x64 - x64.mean(0)) / x64.std(0)
        for name, model in (("lbfgs", clf), ("newton_cg", ref)):
            other = np.concatenate([model.coef_[0], model.intercept_]).astype(np.float64)
            out[f"diff_{name}"] = float(np.abs(coef - other).max() / np.abs(other).max())
            out[f"gradient_{name}"] = gradient_max(xs64, y, other)
        out["gradient_linsweep"] = gradient_max(xs64, y, coef)
        out["train_accuracy"] = float(clf.score(xs, y))
        out["positives"] = float(y.mean())
    print(json.dumps(out))


make() if args.command == "make" else sklearn_run()
