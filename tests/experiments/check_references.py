#!/usr/bin/python3
"""Checks a store's measurement results against scikit-learn, numpy and scipy on the same
stored activations (read with h5py; no project code).

Usage: check_references.py STORE [CHECK...]   (CHECK: gates clusters nofly compound token_context
                                                token_keys auc_intervals gate_curves window_nll;
                                                default all)
  gate (linear):   threshold and labels; StandardScaler; LogisticRegression(C=1.0, tol=1e-9,
                   max_iter=10000, solver="newton-cg") coefficients within relative 1e-4
                   (max |Δ| / max |w|); the stored hold-out AUC equals roc_auc_score within 1e-9.
                   The default solver (lbfgs) is reported, not asserted: scipy's L-BFGS-B stops on
                   its ftol (2.2e-9 relative change of the objective) long before tol=1e-10, so
                   its gradient stays ~1e-3; the gradient at our solution is checked instead.
  gate choice:     the selected variant has the lowest select-split Δ% (select_by delta) or the
                   highest select-split AUC (auc); auc_pick marks the AUC's choice
  hold-outs:       by window (the default): no window has rows on both sides, round(W·holdout)
                   windows held out
  clusters:        PCA (svd_solver="full") explained variance ratio within 1e-6; k-means inertia no worse than
                   KMeans with the same n_init (relative 1e-9 slack)
  nofly:           tokens keyed by the input token or the next token (checked against the next
                   row and, on npy corpora, the token stream); thresholds (absolute or top share)
                   and listed/found/still_listed/flipped/shared recounted; both Pearson r (over
                   shared and over found tokens) equal numpy.corrcoef within 1e-12 (scipy
                   .stats.pearsonr too); each r's interval within the sampling error of numpy's
                   own bootstrap over tokens (as the AUC intervals below); an r over fewer than 10
                   tokens, or undefined, flagged with its n
  token_context:   the residual stream entering each block, per-row ‖r‖, ‖e‖, ‖c‖ and their means
                   against tests/support/reference_forward.py (float64 torch from the checkpoints,
                   no project code) within 1e-5 relative; captured X against its MLP input at r
  token keys:      token_context's lookup AUCs by the predicted and by the input token, and
                   token_features' log frequency (npy corpora) of the token its `key` names, with
                   its Pearson r with δ and that r's interval against numpy's bootstrap over windows
  compound:        FLOPs saved recomputed from each model's config.json (d, d_ff, L, V), the share
                   routed and the chosen gates' variants, within relative 1e-12
  gate baselines:  each threshold-curve point's share from numpy logits of the stored chosen gate
                   on the captured eval X; its ends (all_linear's Δ%, the untouched model) and its
                   p > 0.5 point (the gate's row) exactly; random routing inside its interval
  AUC intervals:   each gate variant's hold-out AUC interval within the sampling error of numpy's
                   own bootstrap over hold-out windows: the exact (Beta) law of the order statistics
                   ours interpolates, at 5e-7 per bound
  per-window NLL:  every all_linear, gate and compound Δ% recomputed from the unit's stored
                   per-window NLL sums within 1e-9 percentage points; window_start as the split
Exits 77 (skipped) when the Python packages are missing.
"""
import json
import os
import sys
import warnings

try:
    import h5py
    import numpy as np
    import scipy.stats
    from sklearn.cluster import KMeans
    from sklearn.decomposition import PCA
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.preprocessing import StandardScaler
except ImportError as e:  # ctest maps 77 to "skipped"
    print(f"SKIP: reference packages missing ({e}); install python3-sklearn python3-scipy python3-h5py")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from unit_files import Unit, unit_paths  # noqa: E402

warnings.filterwarnings("ignore")  # newton-cg reports that rounding, not its tolerance, ended it
store = sys.argv[1]
worst = {}


MIN_CORRELATION_N = 10  # docs/methods.md, "Correlations"


def check_bootstrap_bounds(draws, ours, B, what):
    """ours: (low, high), the 2.5% and 97.5% points of B bootstrap draws interpolated by numpy's
    linear rule (between the k-th and (k+1)-th smallest, k = ⌊q(B−1)⌋ + 1); draws: numpy's own
    draws of the same statistic. Under the draws' distribution F, F at the k-th smallest of B is
    Beta(k, B+1−k) exactly, so F(ours) lies between Beta(k, B+1−k)'s and Beta(k+1, B−k)'s
    quantiles at α/2 and 1−α/2, α = 5e-7 per bound; numpy's F is known to within 5 of its
    standard errors, √(t(1−t)/N)."""
    alpha = 5e-7
    for q, value in zip((0.025, 0.975), ours):
        k = int(np.floor(q * (B - 1))) + 1
        lo = scipy.stats.beta.ppf(alpha / 2, k, B + 1 - k)
        hi = scipy.stats.beta.ppf(1 - alpha / 2, k + 1, B - k)
        below, at_most = np.mean(draws < value), np.mean(draws <= value)
        margin = 5 * np.sqrt(max(lo * (1 - lo), hi * (1 - hi)) / len(draws))
        assert at_most >= lo - margin and below <= hi + margin, (what, q, value, below, at_most, lo, hi)


def bootstrap_r(a, b, group, rng, n_draws=8000):
    """numpy's bootstrap of Pearson r: the distinct groups drawn with replacement, every pair of a
    drawn group counted as often as it was drawn; draws whose r is undefined left out. Returns
    the draws and the share left out."""
    _, g = np.unique(group, return_inverse=True)
    groups = g.max() + 1
    weight = rng.multinomial(groups, np.full(groups, 1 / groups), size=n_draws).astype(float)  # draws × groups
    x, y = a - a.mean(), b - b.mean()
    per = lambda v: np.bincount(g, weights=v, minlength=groups)  # noqa: E731 (each group's sum)
    n, sx, sy = weight @ per(np.ones_like(x)), weight @ per(x), weight @ per(y)
    xx, yy = weight @ per(x * x), weight @ per(y * y)
    sxx, syy, sxy = xx - sx * sx / n, yy - sy * sy / n, weight @ per(x * y) - sx * sy / n
    ok = (sxx > 1e-12 * xx) & (syy > 1e-12 * yy)
    r = sxy[ok] / np.sqrt(sxx[ok] * syy[ok])
    return np.clip(r, -1, 1), 1 - ok.mean()


def check_r_interval(a, b, group, low, high, B, rng, what):
    """Our interval of r over (a, b) against numpy's bootstrap, where draws rarely leave r
    undefined (else the two leave out different shares of B; then only its range)."""
    draws, undefined = bootstrap_r(a, b, group, rng)
    if undefined < 1e-3:
        check_bootstrap_bounds(draws, (low, high), B, what)
    else:
        assert draws.min() - 1e-12 <= low <= high <= draws.max() + 1e-12, (what, low, high, draws.min(), draws.max())


def record(name, value, tol):
    worst[name] = max(worst.get(name, 0.0), value)
    if not value <= tol:
        sys.exit(f"FAIL {name}: {value:.3g} > {tol}")


def units(kind):
    for path in unit_paths(store, kind):
        f = Unit(path)
        yield f, json.loads(f.attrs["params"])


def layer_units(kind, table, prefix):
    """Per-layer units of `kind`: the file, its provenance, its rows of `table` and the array
    group arrays/<prefix>/<model>/<corpus>/layer<l>."""
    for f, prov in units(kind):
        rows = f[f"tables/{table}"][:]
        model, corpus = rows["model"][0].decode(), rows["corpus"][0].decode()
        yield f, prov, rows, f"arrays/{prefix}/{model}/{corpus}/layer{prov['params']['layer']}"


def captured(capture_id, split, layer):
    with Unit(f"{store}/units/{capture_id}.h5") as u:  # how many parts the unit committed
        n = int(u["arrays/capture/parts"][0])
    parts = [f"{store}/activations/{capture_id}/{split}/layer{layer}.part{p}.h5" for p in range(n)]
    x, delta, tok = [], [], []
    for p in parts:
        with h5py.File(p, "r") as f:
            x.append(f["X"][:].astype(np.float64))
            delta.append(f["delta"][:].astype(np.float64))
            tok.append(f["token_ids"][:])
    return np.concatenate(x), np.concatenate(delta), np.concatenate(tok)


def windows_of(capture_id, split, layer):
    """The window index of every captured row, in captured()'s order."""
    with Unit(f"{store}/units/{capture_id}.h5") as u:
        n = int(u["arrays/capture/parts"][0])
    out = []
    for p in range(n):
        with h5py.File(f"{store}/activations/{capture_id}/{split}/layer{layer}.part{p}.h5", "r") as f:
            out.append(f["window"][:])
    return np.concatenate(out)


def check_holdout(prov, hold, n):
    """A hold-out by window (the default) holds all of a window's rows or none, and
    round(W·holdout) windows; the drawn rows are checked by the reference fits either way."""
    p = prov["params"]
    if p["holdout_by"] != "window":
        return
    window = windows_of(prov["deps"][0], "gate", p["layer"])
    assert len(window) == n, (len(window), n)
    held = set(window[hold].tolist())
    trained = set(window[train_rows(n, hold)].tolist())
    assert not held & trained, f"windows on both sides of the hold-out: {sorted(held & trained)[:5]}"
    record("hold-out windows vs round(W·holdout) (abs)", abs(len(held) - int(np.floor(len(held | trained) * p["holdout"] + 0.5))), 0)


def check_choice(select_by, rows):
    """One variant is selected: the lowest select-split Δ% (select_by delta) or the highest
    select-split AUC (auc), the first on ties; auc_pick marks the AUC's choice either way."""
    def first_best(values, higher):
        finite = [i for i, v in enumerate(values) if np.isfinite(v)]
        if not finite:
            return 0
        best = max(values[i] for i in finite) if higher else min(values[i] for i in finite)
        return next(i for i in finite if values[i] == best)
    auc_pick = first_best(list(rows["select_auc"]), True)
    chosen = auc_pick if select_by == "auc" else first_best(list(rows["select_delta_pct"]), False)
    assert list(rows["selected"]) == [int(i == chosen) for i in range(len(rows))], (select_by, rows)
    assert list(rows["auc_pick"]) == [int(i == auc_pick) for i in range(len(rows))], rows


def labels_of(delta, threshold=None):
    if threshold is None:
        q = 25 if np.mean(delta < 0) < 0.05 else 50
        threshold = np.percentile(delta, q)
    return (delta <= threshold).astype(np.int64), threshold


def train_rows(n, holdout):
    mask = np.ones(n, bool)
    mask[holdout] = False
    return np.nonzero(mask)[0]


def check_gates():
    count = 0
    for f, prov, rows, key in layer_units("gate", "gates", "gates"):
        layer = prov["params"]["layer"]
        cap = prov["deps"][0]
        x, delta, _ = captured(cap, "gate", layer)
        y, threshold = labels_of(delta)
        record("gate threshold (abs)", abs(threshold - f[f"{key}/threshold"][0]), 1e-12)
        hold = f[f"{key}/holdout"][:].astype(np.int64)
        check_holdout(prov, hold, len(y))
        check_choice(prov["params"]["select_by"], rows)
        train = train_rows(len(y), hold)
        scaler = StandardScaler().fit(x[train])
        record("scaler mean (abs)", np.max(np.abs(scaler.mean_ - f[f"{key}/linear/scaler/mean"][:])), 1e-9)
        record("scaler scale (rel)", np.max(np.abs(scaler.scale_ / f[f"{key}/linear/scaler/scale"][:] - 1)), 1e-9)
        xs, ys = scaler.transform(x[train]), y[train]
        w = f[f"{key}/linear/logistic/weight"][:]
        b = f[f"{key}/linear/logistic/bias"][0]
        ours = np.concatenate([w, [b]])

        def gradient(v):  # of Σ logloss + ½‖w‖² (intercept unpenalised)
            p = 1 / (1 + np.exp(-(xs @ v[:-1] + v[-1])))
            return np.max(np.abs(np.concatenate([xs.T @ (p - ys) + v[:-1], [np.sum(p - ys)]])))

        # newton-cg stops at max |gradient| <= 1e-9, reached in 10-16 iterations; at 1e-10 some
        # fits never get there in float64 and run all 10000 (most of this test's time) to the
        # same coefficients.
        for solver, stop, tol in (("newton-cg", 1e-9, 1e-4), ("lbfgs", 1e-10, None)):
            ref = LogisticRegression(C=1.0, tol=stop, max_iter=10000, solver=solver).fit(xs, ys)
            coef = np.concatenate([ref.coef_[0], ref.intercept_])
            diff = np.max(np.abs(ours - coef)) / np.max(np.abs(coef))
            if tol is not None:
                record(f"logistic coefficients vs {solver} (max |Δ| / max |w|)", diff, tol)
            else:
                worst.setdefault("lbfgs", []).append((diff, gradient(coef)))
        record("gradient max at our solution", gradient(ours), 1e-5)
        # Scores from the stored scaler (sklearn's differs in the last bits) and row-wise sums,
        # so identical activations tie exactly as they do in linsweep: a GEMV may round equal
        # rows differently, and each broken tie moves the AUC by 1/(positives·negatives).
        scores = np.sum((x[hold] - f[f"{key}/linear/scaler/mean"][:]) / f[f"{key}/linear/scaler/scale"][:] * w, axis=1) + b
        auc = float(rows[rows["gate"] == b"linear"]["auc"][0])
        record("hold-out AUC vs roc_auc_score (abs)", abs(roc_auc_score(y[hold], scores) - auc), 1e-9)
        count += 1
    return count


def check_clusters():
    count = 0
    for f, prov, rows, key in layer_units("clusters", "clusters", "clusters"):
        p = prov["params"]
        layer = p["layer"]
        x, _, _ = captured(prov["deps"][0], "gate", layer)
        hold = f[f"{key}/holdout"][:].astype(np.int64)
        check_holdout(prov, hold, len(x))
        train = train_rows(len(x), hold)
        k = min(p["pca"], len(train), x.shape[1])
        pca = PCA(n_components=k, svd_solver="full").fit(x[train])  # "auto" may pick the randomized solver
        record("PCA explained variance ratio (abs)", np.max(np.abs(pca.explained_variance_ratio_ - f[f"{key}/explained_ratio"][:])), 1e-6)
        record("PCA total share (abs)", abs(pca.explained_variance_ratio_.sum() - rows["pca_var"][0]), 1e-6)
        km = KMeans(n_clusters=int(rows["k"][0]), n_init=p["n_init"], random_state=0).fit(pca.transform(x[train]))
        ours = float(rows["inertia"][0])
        record("k-means inertia: ours / scikit-learn - 1 (≤ 0 is no worse)", max(ours / km.inertia_ - 1, 0.0), 1e-9)
        worst.setdefault("k-means inertia ratios", []).append(ours / km.inertia_)
        count += 1
    return count


def per_token(delta, tok):
    out = {}
    for t in np.unique(tok):
        d = delta[tok == t]
        out[int(t)] = (len(d), float(np.mean(d)), int(np.sum(d > 0)))
    return out


def spec_corpus(name):
    """(path, format) of corpus `name` in the store's spec.yaml, the path resolved against
    examples/ (where the fixture specs live)."""
    import re
    with open(f"{store}/spec.yaml") as f:
        m = re.search(r"\{name: " + re.escape(name) + r", path: ([^,]+), format: (\w+)\}", f.read())
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "examples", m.group(1))), m.group(2)


def predicted_tokens(capture_id, split, layer):
    """Each captured row's next token, the one its δ scores. Every row but a window's last is
    checked against the input token of the row after it; on an npy corpus every row is checked
    against the token stream itself (the window's start + t + 1)."""
    with Unit(f"{store}/units/{capture_id}.h5") as u:
        n = int(u["arrays/capture/parts"][0])
        prov = json.loads(u.attrs["params"])
    cols = {k: [] for k in ("token_ids", "next_token_ids", "window", "position")}
    for p in range(n):
        with h5py.File(f"{store}/activations/{capture_id}/{split}/layer{layer}.part{p}.h5", "r") as f:
            for k in cols:
                cols[k].append(f[k][:])
    tok, nxt, win, pos = (np.concatenate(cols[k]) for k in cols)
    follows = (win[1:] == win[:-1]) & (pos[1:] == pos[:-1] + 1)
    assert np.array_equal(nxt[:-1][follows], tok[1:][follows]), (capture_id, "next_token_ids vs the next row")
    path, fmt = spec_corpus(prov["slot"].split("/")[2])
    if fmt == "npy":
        stream, sp = np.load(path), prov["params"]["splits"][split]
        at = sp["start"] + prov["params"]["context"] * win + pos
        assert np.array_equal(tok, stream[at]) and np.array_equal(nxt, stream[at + 1]), (capture_id, "vs the corpus")
    return nxt


def spec_model_dir(name):
    """The directory of model `name` in the store's spec.yaml, resolved against examples/."""
    import re
    with open(f"{store}/spec.yaml") as f:
        m = re.search(r"\{name: " + re.escape(name) + r", path: ([^,}]+)\}", f.read())
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", m.group(1)))


def check_token_context():
    """The residual stream r whose norm is the MLP's input at block ℓ, and the stream r_block
    entering the block, against reference_forward.py's (float64, from the checkpoint): r and
    r_block of the first window and every row's ‖r‖, ‖e‖, ‖c = r − e‖ within 1e-5 relative, the
    table's means (also ‖r_block‖, ‖c_block‖, cos(e, c_block)) likewise; the captured X is the
    reference's MLP input at r_block within float16 storage (2⁻¹¹ relative, ×2)."""
    import torch
    from reference_forward import ReferenceModel
    count, refs = 0, {}
    for f, prov, rows, key in layer_units("token_context", "token_context", "token_context"):
        layer, model = prov["params"]["layer"], rows["model"][0].decode()
        assert sorted(v.decode() for v in rows["variant"]) == sorted(["X", "r", "e", "c", "paper", "r_block", "c_block",
                                                                      "token_lookup", "token_lookup_input", "random"])
        ref = refs.setdefault(model, ReferenceModel(spec_model_dir(model)))
        x, _, tok = captured(prov["deps"][0], "gate", layer)
        per_window = int(f[f"{key}/r_first_window"].shape[0])
        ids = torch.from_numpy(tok.astype(np.int64).reshape(-1, per_window))
        with torch.no_grad():
            streams, _ = ref.forward(ids)
            r_block, e = streams[layer], ref.embed(ids)
            r = ref.mlp_stream(layer, r_block)
            x_ref = ref.mlp_input(layer, r_block).reshape(-1, r.shape[-1]).numpy()
        d = r.shape[-1]
        r, r_block, e = r.reshape(-1, d).numpy(), r_block.reshape(-1, d).numpy(), e.reshape(-1, d).numpy()
        c = r - e
        for name, ref_stream in (("r_first_window", r), ("r_block_first_window", r_block)):
            first, want = f[f"{key}/{name}"][:], ref_stream[:per_window]
            record(f"token_context {name} (max |Δ| / max)", np.abs(first - want).max() / np.abs(want).max(), 1e-5)
        block_norms = np.linalg.norm(r_block, axis=1)
        record("token_context mean ‖r_block‖ (|Δ| / max)", abs(rows["r_block_norm"][0] - block_norms.mean()) / block_norms.max(), 1e-5)
        c_block = r_block - e
        cb = np.linalg.norm(c_block, axis=1)
        record("token_context mean ‖c_block‖ (|Δ| / max ‖r_block‖)", abs(rows["c_block_norm"][0] - cb.mean()) / block_norms.max(), 1e-5)
        eb = np.linalg.norm(e, axis=1) * cb
        cos_block = np.mean(np.divide(np.sum(e * c_block, 1), eb, out=np.zeros_like(eb), where=eb > 0))
        record("token_context mean cos(e, c_block) (abs)", abs(rows["cosine_block"][0] - cos_block), 1e-5)
        # At layer 0 c_block = 0, and so is c for a parallel-residual block: norms relative to the
        # largest, cos(e, 0) taken as 0.
        for name, v in (("r_norm", r), ("e_norm", e), ("c_norm", c)):
            norms = np.linalg.norm(v, axis=1)
            scale = max(norms.max(), 1e-300)
            record("token_context per-row norms (max |Δ| / max)", np.max(np.abs(f[f"{key}/{name}"][:] - norms)) / scale, 1e-5)
            record("token_context mean norms (|Δ| / max)", abs(rows[name][0] - norms.mean()) / scale, 1e-5)
        ec = np.linalg.norm(e, axis=1) * np.linalg.norm(c, axis=1)
        cosine = np.mean(np.divide(np.sum(e * c, 1), ec, out=np.zeros_like(ec), where=ec > 0))
        record("token_context mean cos(e, c) (abs)", abs(rows["cosine"][0] - cosine), 1e-5)
        record("token_context captured X vs the reference's MLP input at r (max |Δ| / max |X|)",
               np.abs(x - x_ref).max() / np.abs(x_ref).max(), 2 * 2.0 ** -11)
        count += 1
    return count


def list_threshold(tokens, min_count, p):
    if p["top"] <= 0:
        return p["min_mean_delta"]
    means = sorted((m for n, m, _ in tokens.values() if n >= min_count), reverse=True)
    k = int(np.ceil(p["top"] * len(means)))
    return means[k - 1] if k > 0 else np.inf


def is_listed(t, min_count, threshold, p):
    n, m, pos = t
    above = (m >= threshold and m > 0) if p["top"] > 0 else m > threshold
    return n >= min_count and above and pos > p["min_positive"] * n


def lookup_scores(key_tokens, y, train, hold):
    """Each held-out row's share of positive labels among the training rows with its token,
    the training rows' share for a token they never show."""
    rate = {}
    for t, label in zip(key_tokens[train], y[train]):
        pos, n = rate.get(int(t), (0, 0))
        rate[int(t)] = (pos + int(label), n + 1)
    overall = np.mean(y[train]) if len(train) else 0.5
    return np.array([rate[int(t)][0] / rate[int(t)][1] if int(t) in rate else overall for t in key_tokens[hold]])


def check_token_keys():
    """Tokens as the paper keys them. token_context's lookups by the predicted token (the one δ
    scores, checked against the next row and the corpus) and by the input token: each hold-out
    AUC recomputed with roc_auc_score within 1e-12. token_features' log frequency (npy corpora,
    whose token stream is the file): every row's value from the corpus counts of the token its
    unit's `key` names (t + 1 or t) within 1e-12, and its Pearson r with δ per layer from
    numpy.corrcoef within 1e-9, with its interval against numpy's bootstrap over windows."""
    count = 0
    for f, prov, rows, key in layer_units("token_context", "token_context", "token_context"):
        layer = prov["params"]["layer"]
        _, delta, tok = captured(prov["deps"][0], "gate", layer)
        nxt = predicted_tokens(prov["deps"][0], "gate", layer)
        y, _ = labels_of(delta)
        hold = f[f"{key}/holdout"][:].astype(np.int64)
        check_holdout(prov, hold, len(y))
        train = train_rows(len(y), hold)
        auc = {r["variant"].decode(): r["auc"] for r in rows}
        for variant, tokens in (("token_lookup", nxt), ("token_lookup_input", tok)):
            ref = roc_auc_score(y[hold], lookup_scores(tokens, y, train, hold))
            record("token_context lookup AUC by key vs roc_auc_score (abs)", abs(auc[variant] - ref), 1e-12)
        count += 1
    for f, prov in units("token_features"):
        p = prov["params"]
        rows = f["tables/token_regression"][:]
        model, corpus = rows["model"][0].decode(), rows["corpus"][0].decode()
        path, fmt = spec_corpus(corpus)
        if fmt != "npy":
            continue
        assert {r["key"].decode() for r in rows} == {p["key"]}, (p["key"], set(rows["key"]))
        stream = np.load(path).astype(np.int64)
        counts = np.bincount(stream)
        layer0 = p["layers"][0]
        window = windows_of(prov["deps"][0], "gate", layer0)
        with Unit(f"{store}/units/{prov['deps'][0]}.h5") as u:
            parts = int(u["arrays/capture/parts"][0])
        position = np.concatenate([h5py.File(f"{store}/activations/{prov['deps'][0]}/gate/layer{layer0}.part{i}.h5",
                                             "r")["position"][:] for i in range(parts)])
        at = p["split"]["start"] + p["context"] * window + position + (1 if p["key"] == "predicted" else 0)
        logf = np.log(counts[stream[at]] / len(stream))
        stored = f[f"arrays/token_features/{model}/{corpus}/log_frequency"][:]
        record("token_features log frequency of the keyed token (max |Δ|)", np.abs(stored - logf).max(), 1e-12)
        for r in rows[[v.decode() == "log frequency" for v in rows["feature"]]]:
            _, delta, _ = captured(prov["deps"][0], "gate", int(r["layer"]))
            record("token_features log-frequency Pearson r vs numpy (abs)",
                   abs(r["pearson_r"] - np.corrcoef(logf, delta)[0, 1]), 1e-9)
            # Its interval resamples windows; n is the positions (samples), far above the minimum.
            assert r["samples"] == len(delta) >= MIN_CORRELATION_N and r["flag"].decode() == "", r
            check_r_interval(logf, delta, window, r["pearson_ci_low"], r["pearson_ci_high"], p["bootstrap"],
                             np.random.default_rng(int(r["layer"])), "token_regression log frequency r")
        count += 1
    return count


def check_nofly():
    rng = np.random.default_rng(1)
    count = 0
    for f, prov in units("nofly"):
        p = prov["params"]
        layer = p["layer"]

        def tokens_of(cap):
            _, delta, tok = captured(cap, "gate", layer)
            return per_token(delta, predicted_tokens(cap, "gate", layer) if p["key"] == "predicted" else tok)

        src = tokens_of(prov["deps"][0])
        threshold = list_threshold(src, p["min_count"], p)
        listed = [t for t in src if is_listed(src[t], p["min_count"], threshold, p)]
        rows = f["tables/nofly"][:]
        for k, cap in enumerate(prov["deps"][1:]):
            tgt = tokens_of(cap)
            row = rows[rows["target"] == p["corpora"][k + 1].encode()][0]
            target_threshold = list_threshold(tgt, p["min_found"], p)
            found = [t for t in listed if t in tgt and tgt[t][0] >= p["min_found"]]
            still = [t for t in found if is_listed(tgt[t], p["min_found"], target_threshold, p)]
            flipped = [t for t in found if tgt[t][1] < 0]
            both = [t for t in src if src[t][0] >= p["min_found"] and t in tgt and tgt[t][0] >= p["min_found"]]
            assert row["key"].decode() == p["key"], row
            assert (row["listed"], row["found"], row["still_listed"], row["flipped"], row["shared"]) == \
                (len(listed), len(found), len(still), len(flipped), len(both)), (row, p)
            record("nofly thresholds (abs)", max(abs(row["threshold"] - threshold),
                                                 abs(row["target_threshold"] - target_threshold)), 1e-12)
            flag = row["flag"].decode()
            for name, tokens, what in (("pearson_r", both, "r over shared"), ("pearson_r_listed", found, "r over found")):
                a, b = np.array([src[t][1] for t in tokens]), np.array([tgt[t][1] for t in tokens])
                low, high = row[name + "_ci_low"], row[name + "_ci_high"]
                if len(tokens) < 2 or np.std(a) == 0 or np.std(b) == 0:
                    assert np.isnan(row[name]) and f"{what} undefined: {len(tokens)} " in flag, (name, row)
                    continue
                record("Pearson r vs numpy.corrcoef (abs)", abs(np.corrcoef(a, b)[0, 1] - row[name]), 1e-12)
                record("Pearson r vs scipy.stats.pearsonr (abs)", abs(scipy.stats.pearsonr(a, b)[0] - row[name]), 1e-12)
                # Below the minimum n the row says so, with the n.
                assert (f"{what}: only {len(tokens)} " in flag) == (len(tokens) < MIN_CORRELATION_N), (name, flag)
                check_r_interval(a, b, np.arange(len(tokens)), low, high, p["bootstrap"], rng, f"nofly {name}")
            count += 1
    return count


def model_sizes(model):
    """d, d_ff, L, V of a test fixture model, read from its HF config.json."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "data", "models", model, "config.json")) as f:
        c = json.load(f)
    if c["model_type"] == "gpt2":
        return c["n_embd"], c.get("n_inner") or 4 * c["n_embd"], c["n_layer"], c["vocab_size"]
    return c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"], c["vocab_size"]


def gate_cost(name, d):
    """Multiply-adds ×2 of a gate at one position: linear 2d, pca:K and mlp:H 2dK + 2K."""
    if name == "linear":
        return 2 * d
    k = int(name.split(":")[1])
    return 2 * d * k + 2 * k


def check_compound():
    count = 0
    for f, prov in units("compound"):
        row = f["tables/compound"][0]
        model = row["model"].decode()
        d, d_ff, n_layers, vocab = model_sizes(model)
        layers = prov["params"]["layers"]
        assert row["layers"] == len(layers), row
        cost = 0
        for gate_id in prov["deps"][1:]:
            with Unit(f"{store}/units/{gate_id}.h5") as g:
                chosen = [r for r in g["tables/gates"][:] if r["selected"] == 1]
            assert len(chosen) == 1, gate_id
            cost += gate_cost(chosen[0]["gate"].decode(), d)
        # Per scored position: Σ_layers share·(MLP − surrogate) − Σ gates.
        saved = len(layers) * row["pct_linear"] / 100 * (4 * d * d_ff - 2 * d * d) - cost
        mlp = 100 * saved / (n_layers * 4 * d * d_ff)
        total = 100 * saved / (n_layers * (8 * d * d + 4 * d * d_ff) + 2 * d * vocab)
        record("compound MLP FLOPs saved % (relative)", abs(mlp - row["mlp_flops_saved_pct"]) / abs(mlp), 1e-12)
        record("compound total FLOPs saved % (relative)", abs(total - row["total_flops_saved_pct"]) / abs(total), 1e-12)
        assert row["random_ci_low"] <= row["random_delta_pct"] <= row["random_ci_high"], row
        count += 1
    return count


def gate_logits(g, key, x):
    """Logits of the gate stored under `key` (linear, pca:K or mlp:H) for the stored rows x, in
    numpy, and per row a bound on how far the logit of the live float32 X can be: captures keep
    X in float16, |x − fp16(x)| ≤ 2⁻¹¹|x| + 2⁻²⁵ per element (half an ulp, subnormals), and the
    logit moves by at most Σ_i sensitivity_i · that, with sensitivity |w|/scale (linear),
    |C|ᵀ|w|/scale (pca) or |P|ᵀ|v|/scale (mlp: ReLU is 1-Lipschitz); 1% more for the stored
    |x| standing in for the live one."""
    scale = g[f"{key}/scaler/scale"][:]
    xs = (x - g[f"{key}/scaler/mean"][:]) / scale
    if f"{key}/mlp/P" in g:
        p, v = g[f"{key}/mlp/P"][:], g[f"{key}/mlp/v"][:]
        z, sens = np.maximum(xs @ p.T, 0) @ v + g[f"{key}/mlp/c"][0], np.abs(p).T @ np.abs(v)
    else:
        w = g[f"{key}/logistic/weight"][:]
        if f"{key}/pca/components" in g:
            c = g[f"{key}/pca/components"][:]
            xs, sens = (xs - g[f"{key}/pca/mean"][:]) @ c.T, np.abs(c).T @ np.abs(w)
        else:
            sens = np.abs(w)
        z = xs @ w + g[f"{key}/logistic/bias"][0]
    return z, 1.01 * ((np.abs(x) * 2.0**-11 + 2.0**-25) @ (sens / scale)) + 1e-9


def check_baselines():
    """The chosen gate's threshold curve: each point's share from numpy logits of the stored gate
    on the captured eval X (a row within gate_logits' bound of the threshold may fall either
    way); k = 0 is all_linear's Δ% exactly, p > 0.5 the gate's own row, the last point the
    untouched model. Random routing lies in its interval."""
    all_linear = {}
    for f, _ in units("all_linear"):
        for r in f["tables/all_linear"][:]:
            all_linear[(r["model"].decode(), r["corpus"].decode(), int(r["layer"]))] = r["delta_pct"]
    count = 0
    for f, prov, rows, key in layer_units("gate", "gates", "gates"):
        for r in rows:
            assert r["random_ci_low"] <= r["random_delta_pct"] <= r["random_ci_high"], r
        if "tables/gate_curve" not in f:
            continue
        layer, steps = prov["params"]["layer"], prov["params"]["curve_steps"]
        curve = sorted(f["tables/gate_curve"][:], key=lambda c: c["step"])
        chosen = [r for r in rows if r["selected"] == 1][0]
        assert [int(c["step"]) for c in curve] == list(range(steps + 1)), curve
        x, _, _ = captured(prov["deps"][0], "eval", layer)
        z, band = gate_logits(f, f"{key}/chosen", x)
        for c in curve:
            t = c["p_threshold"]
            edge = -np.inf if t <= 0 else np.inf if t >= 1 else np.log(t / (1 - t))
            lo, hi = 100 * np.mean(z - band > edge), 100 * np.mean(z + band > edge)
            assert lo - 1e-9 <= c["pct_linear"] <= hi + 1e-9, (c, lo, hi)
            record("curve points decided by the float16 bound (share %)", hi - lo, 100)
            if 2 * c["step"] == steps:
                assert (c["pct_linear"], c["delta_pct"]) == (chosen["pct_linear"], chosen["delta_pct"]), (c, chosen)
        assert curve[-1]["pct_linear"] == 0 and curve[-1]["delta_pct"] == 0, curve[-1]
        cell = (rows["model"][0].decode(), rows["corpus"][0].decode(), layer)
        if cell in all_linear:
            assert curve[0]["delta_pct"] == all_linear[cell], (curve[0], all_linear[cell])
        count += 1
    return count


def delta_from(nll, base, windows, context):
    tokens = windows * (context - 1)
    return 100 * (np.exp(np.sum(nll) / tokens) / np.exp(np.sum(base) / tokens) - 1)


def check_window_nll():
    """Every Δ% of all_linear, gate (variants, random routing, curve) and compound recomputed from
    the unit's per-window NLL sums. numpy sums pairwise, linsweep in window order: the sums agree
    to W·2⁻⁵³ relative, Δ% to ~1e-13 percentage points; 1e-9 bounds it. window_start is
    split.start + i·context."""
    count = 0
    for kind, table in (("all_linear", "all_linear"), ("gate", "gates"), ("compound", "compound")):
        for f, prov in units(kind):
            p = prov["params"]
            context, split = p["context"], p["split"]
            rows = f[f"tables/{table}"][:]
            model, corpus = rows["model"][0].decode(), rows["corpus"][0].decode()
            key = f"arrays/nll/{model}/{corpus}/{kind}" + (f"/layer{p['layer']}" if kind == "gate" else "")
            starts = f[f"{key}/window_start"][:]
            w = split["tokens"] // context
            assert np.array_equal(starts, split["start"] + context * np.arange(w)), (key, starts[:3])
            base = f[f"{key}/base"][:]
            pairs = []
            if kind == "all_linear":
                pairs = [(f"layer{r['layer']}", r["delta_pct"]) for r in rows]
            elif kind == "gate":
                for r in rows:
                    g = r["gate"].decode()
                    pairs += [(g, r["delta_pct"]), (f"random/{g}", r["random_delta_pct"])]
                if "tables/gate_curve" in f:
                    pairs += [(f"curve/{c['step']}", c["delta_pct"]) for c in f["tables/gate_curve"][:]]
            else:
                pairs = [("gated", rows[0]["delta_pct"]), ("random", rows[0]["random_delta_pct"])]
            for name, delta in pairs:
                record("Δ% from per-window NLL (abs, points)", abs(delta_from(f[f"{key}/{name}"][:], base, w, context) - delta), 1e-9)
                count += 1
    return count


def check_auc_intervals():
    """Each gate variant's hold-out AUC interval against numpy's own bootstrap over hold-out
    windows (N = 8000 draws of its default generator). Ours interpolates between the k-th and
    (k+1)-th smallest of B = `bootstrap` draws (k = ⌊q(B−1)⌋ + 1, numpy's linear rule). Under the
    draws' own distribution F, F at the k-th smallest of B is Beta(k, B+1−k) exactly, so F(ours)
    lies between Beta(k, B+1−k)'s and Beta(k+1, B−k)'s quantiles at α/2 and 1−α/2, α = 5e-7 per
    bound; numpy's F is known to within 5 of its standard errors, √(t(1−t)/N). The normal
    approximation to the order statistic is not used: at q = 0.975 and B = 200 only 5 draws lie
    above, and that count's tail is Poisson-heavy."""
    rng = np.random.default_rng(0)
    count, n_draws, alpha = 0, 8000, 5e-7
    for f, prov, rows, key in layer_units("gate", "gates", "gates"):
        layer, B = prov["params"]["layer"], prov["params"]["bootstrap"]
        x, delta, _ = captured(prov["deps"][0], "gate", layer)
        y, _ = labels_of(delta)
        hold = f[f"{key}/holdout"][:].astype(np.int64)
        _, window = np.unique(windows_of(prov["deps"][0], "gate", layer)[hold], return_inverse=True)
        n_windows, yh = window.max() + 1, y[hold]
        # A draw weights each row by how often its window was drawn; the AUC of weighted rows is
        # Σ w_i w_j ([z_j < z_i] + ½[z_j = z_i]) over positive i, negative j, over Σw_i · Σw_j.
        weight = rng.multinomial(n_windows, np.full(n_windows, 1 / n_windows), size=n_draws)[:, window]
        wp, wn = weight[:, yh == 1], weight[:, yh == 0]
        for r in rows:
            z, _ = gate_logits(f, f"{key}/{r['gate'].decode()}", x[hold])
            zp, zn = z[yh == 1], z[yh == 0]
            beats = (zn[None, :] < zp[:, None]) + 0.5 * (zn[None, :] == zp[:, None])
            both = (wp.sum(1) > 0) & (wn.sum(1) > 0)
            # (wp·beats)·wn row by row, as one matrix product (BLAS) instead of einsum's loop: every
            # term is a count or a half-count, so the sums are exact either way.
            draws = ((wp[both] @ beats) * wn[both]).sum(1) / (wp[both].sum(1) * wn[both].sum(1))
            record("gate AUC vs roc_auc_score, weights all 1 (abs)",
                   abs(np.sum(beats) / (len(zp) * len(zn)) - roc_auc_score(yh, z)), 1e-12)
            for q, ours in ((0.025, r["auc_ci_low"]), (0.975, r["auc_ci_high"])):
                k = int(np.floor(q * (B - 1))) + 1
                lo = scipy.stats.beta.ppf(alpha / 2, k, B + 1 - k)
                hi = scipy.stats.beta.ppf(1 - alpha / 2, k + 1, B - k)
                below, at_most = np.mean(draws < ours), np.mean(draws <= ours)
                margin = 5 * np.sqrt(max(lo * (1 - lo), hi * (1 - hi)) / len(draws))
                assert at_most >= lo - margin and below <= hi + margin, (key, r["gate"], q, ours, below, at_most, lo, hi)
            count += 1
    return count

checks = {"gates": check_gates, "clusters": check_clusters, "nofly": check_nofly, "compound": check_compound,
          "token_context": check_token_context, "token_keys": check_token_keys,
          "auc_intervals": check_auc_intervals, "gate_curves": check_baselines, "window_nll": check_window_nll}
chosen = sys.argv[2:] or list(checks)
counts = {name: checks[name]() for name in chosen}
if min(counts.values()) == 0:
    sys.exit("FAIL: the store has nothing to check for " + ", ".join(n for n, c in counts.items() if c == 0))
print("checked against scikit-learn/numpy/scipy: " + ", ".join(f"{c} {n}" for n, c in counts.items()))
ratios, lbfgs = worst.pop("k-means inertia ratios", None), worst.pop("lbfgs", None)
for name, value in sorted(worst.items()):
    print(f"  worst {name}: {value:.3g}")
if ratios:
    print(f"  k-means inertia ours/scikit-learn: min {min(ratios):.6f}, max {max(ratios):.6f}")
if lbfgs:
    print(f"  default lbfgs (not asserted): coefficients differ up to {max(d for d, _ in lbfgs):.3g} relative; "
          f"its gradient max up to {max(g for _, g in lbfgs):.3g}")
