#!/usr/bin/env bash
# Benchmark: linear gate training, linsweep's Gate::train (standardise, then Newton logistic
# regression to ‖∇‖∞ ≤ 1e-10) against scikit-learn's StandardScaler().fit_transform +
# LogisticRegression(C=1.0, tol=1e-10, max_iter=10000).fit, on the same data in one run:
# n=25,000 rows of d=1024 float32 (correlated columns of very different scales) with labels
# from a noisy logistic model (bench/gate_training.py make). Both sides use 2 threads (torch
# and OpenBLAS; OMP/OpenBLAS/MKL for Python). Rounds alternate linsweep and Python; medians.
# The last round also fits scikit-learn's newton-cg, which runs to its tolerance, as the
# accuracy reference: the run is void when linsweep's coefficients differ from it by more
# than 1e-4 relative (max |Δ| / max |w|).
# Target: linsweep >= 2x faster than scikit-learn's default solver.
# Usage: bench/gate_training.sh [ROUNDS]   (build first: ninja -C build bench_gate_training)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${LINSWEEP_BUILD_DIR:-$root/build}/bench_gate_training"
rounds="${1:-5}"; threads=2
py=/usr/bin/python3   # Debian's numpy/scikit-learn
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
$py "$root/bench/gate_training.py" make --dir "$work" --n 25000 --d 1024
for round in $(seq "$rounds"); do
  "$bin" "$work/x.npy" "$work/y.npy" "$work/linsweep_coef.npy" "$work/linsweep-$round.json" 1 "$threads" >/dev/null
  reference=(); [[ "$round" == "$rounds" ]] && reference=(--reference)
  $py "$root/bench/gate_training.py" sklearn --dir "$work" --threads "$threads" "${reference[@]}" > "$work/sklearn-$round.json"
  $py - "$work" "$round" <<'PY'
import json, sys
work, r = sys.argv[1], sys.argv[2]
c, p = json.load(open(f"{work}/linsweep-{r}.json")), json.load(open(f"{work}/sklearn-{r}.json"))
print(f"round {r}: linsweep {c['seconds'][0]:.2f} s, scikit-learn {p['seconds'][0]:.2f} s")
PY
done
$py - "$work" "$rounds" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
cs = [json.load(open(f"{work}/linsweep-{r}.json")) for r in range(1, rounds + 1)]
ps = [json.load(open(f"{work}/sklearn-{r}.json")) for r in range(1, rounds + 1)]
c, p = cs[-1], ps[-1]
ours = statistics.median(x["seconds"][0] for x in cs)
theirs = statistics.median(x["seconds"][0] for x in ps)
print(f"data: n=25000, d=1024 float32, positives {p['positives']:.3f}; {c['threads']} torch threads, "
      f"Python {', '.join(p['threads'])} threads; scikit-learn {p['sklearn']}")
print(f"linsweep Gate::train (standardise + fit_logistic): {ours:.2f} s (median of {rounds}); "
      f"last run: standardise {c['standardise']:.2f} s, fit {c['fit']:.2f} s, {c['iterations']} Newton iterations, "
      f"gradient max {c['gradient_max']:.1e}")
print(f"scikit-learn StandardScaler + LogisticRegression ({p['solver']}): {theirs:.2f} s (median of {rounds}), "
      f"{p['n_iter']} iterations; train accuracy {p['train_accuracy']:.3f}")
print(f"scikit-learn newton-cg (reference, not timed against): {p['newton_cg_seconds']:.2f} s, {p['newton_cg_n_iter']} iterations")
print(f"coefficients (standardised space), max |Δ| / max |w|: linsweep vs {p['solver']} {p['diff_lbfgs']:.1e}, "
      f"vs newton-cg {p['diff_newton_cg']:.1e}")
print(f"gradient max of Σ logloss + ‖w‖²/2 at each solution: linsweep {p['gradient_linsweep']:.1e}, "
      f"{p['solver']} {p['gradient_lbfgs']:.1e}, newton-cg {p['gradient_newton_cg']:.1e}")
print(f"ratio scikit-learn/linsweep: {theirs / ours:.2f}x (target >= 2x)")
if p["diff_newton_cg"] > 1e-4:
    sys.exit("benchmark: linsweep and newton-cg disagree; the comparison is void")
PY
