#!/usr/bin/python3
"""Checks `linsweep report` on the fixture stores against the stores' own rows, read with h5py
(no project code): every figure's panels, series, labels and plotted values (the SVG's data
attributes carry each value's exact text), every table's CSV against the rows it summarises,
and the page's contents links, CSV links and provenance.

Usage: check_report.py LINSWEEP MEASURE_STORE TRAINING_STORE SOURCE_DIR WORK_DIR
  MEASURE_STORE   a finished run of examples/fixture_measure.yaml
  TRAINING_STORE  a finished run of examples/fixture_training.yaml
Exits 77 (skipped) without h5py and numpy for /usr/bin/python3.
"""
import csv
import glob
import html
import html.parser
import json
import math
import os
import re
import shlex
import statistics
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET

try:
    import h5py
    import numpy as np
except ImportError as e:
    print(f"SKIP: {e}; install python3-h5py python3-numpy")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import gpt2_bytes  # noqa: E402
from unit_files import Unit, unit_paths  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"
U64 = 2.0 ** -53
checked = []


def fail(msg):
    sys.exit(f"check_report: FAIL: {msg}")


def check(cond, msg):
    if not cond:
        fail(msg)


def table(store, name):
    """Rows of a consolidated table as dicts (strings decoded)."""
    with h5py.File(f"{store}/store.h5", "r") as f:
        if f"tables/{name}" not in f:
            return []
        t = f[f"tables/{name}"][:]
    out = []
    for r in t:
        out.append({k: (r[k].decode() if isinstance(r[k], bytes) else r[k].item()) for k in t.dtype.names})
    return out


def report(binary, store, out):
    r = subprocess.run([binary, "report", store, "--out", out, "--json"], capture_output=True, text=True)
    check(r.returncode == 0, f"report {store}: exit {r.returncode}: {r.stderr}")
    j = json.loads(r.stdout)
    check(j["index"] == f"{out}/index.html" and os.path.isfile(j["index"]), f"report {store}: no index.html")
    return j


def svg(out, stem):
    path = f"{out}/figures/{stem}.svg"
    check(os.path.isfile(path), f"missing figure {stem}.svg")
    return ET.parse(path).getroot()


def panels(root):
    """{panel title: {series label: [(x, y, low, high)]}} and the panels' reference lines."""
    out, refs = {}, {}
    for p in root.iter(f"{SVG}g"):
        if p.get("class") != "panel":
            continue
        title = p.get("data-title")
        series = {}
        for g in p.iter(f"{SVG}g"):
            if g.get("class") != "series":
                continue
            pts = []
            for e in g:
                if e.get("class") == "point":
                    pts.append(tuple(float(e.get(a, "nan")) for a in ("data-x", "data-y", "data-low", "data-high")))
            series[g.get("data-label")] = pts
        # A chart with more series than one panel shows is split into "title (k of n)" panels.
        title = re.sub(r" \([0-9]+ of [0-9]+\)$", "", title)
        out.setdefault(title, {}).update(series)
        refs.setdefault(title, {}).update({e.get("data-label"): float(e.get("data-y")) for e in p.iter(f"{SVG}line")
                                           if e.get("class") == "reference"})
        # A reference line's interval: {label + " band": (low, high)}.
        refs[title].update({e.get("data-label") + " band": (float(e.get("data-low")), float(e.get("data-high")))
                            for e in p.iter(f"{SVG}rect") if e.get("class") == "interval band"})
    return out, refs


def figure_panels(out, stem, rows, key, what):
    """panels() of figure stem, checked to be one panel per value of key among rows; returns them
    and those values, sorted."""
    got, refs = panels(svg(out, stem))
    names = sorted({r[key] for r in rows})
    check(sorted(got) == names, f"{what}: panels {sorted(got)}")
    return got, refs, names


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b


def check_points(pts, expected, what):
    """pts: [(x, y, low, high)] from the SVG; expected: {x: (y, low, high)} from the store."""
    got = {p[0]: p[1:] for p in pts}
    check(sorted(got) == sorted(expected), f"{what}: x values {sorted(got)} vs the store's {sorted(expected)}")
    for x, want in expected.items():
        for g, w in zip(got[x], want):
            check(same(g, float(w)), f"{what} at x={x}: {got[x]} vs the store's {want}")


def count_si(v):
    suffix = ["", "k", "M", "B", "T"]
    k = 0
    while v >= 999.5 and k < 4:
        v /= 1000
        k += 1
    return f"{v:.3g}{suffix[k]}"


def model_parameters(src, model):
    """Parameters of a fixture model from its safetensors header, buffers left out."""
    with open(f"{src}/tests/data/models/{model}/model.safetensors", "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    total = 0
    for name, t in header.items():
        if name == "__metadata__" or name.endswith((".attn.bias", ".attn.masked_bias", "rotary_emb.inv_freq")):
            continue
        total += math.prod(t["shape"])
    return total


def check_fig1_fig3(out, rows, src):
    corpora = sorted({r["corpus"] for r in rows})
    for corpus in corpora:
        got, _ = panels(svg(out, f"fig1_nonlinearity_map_{corpus}"))
        models = sorted({r["model"] for r in rows if r["corpus"] == corpus})
        check(len(got) == len(models), f"fig1 {corpus}: {len(got)} panels for {len(models)} models")
        for m in models:
            title = [t for t in got if t.split(" · ")[0] == m]
            check(len(title) == 1, f"fig1 {corpus}: no panel for {m} ({list(got)})")
            mr = [r for r in rows if r["model"] == m and r["corpus"] == corpus]
            check(f"{count_si(mr[0]['params'])} parameters" in title[0], f"fig1 {corpus} {m}: title {title[0]}")
            series = got[title[0]]
            check(list(series) == ["all-linear Δ% (95% CI)"], f"fig1 {corpus} {m}: series {list(series)}")
            check_points(series["all-linear Δ% (95% CI)"],
                         {r["layer"]: (r["delta_pct"], r["ci_low"], r["ci_high"]) for r in mr}, f"fig1 {corpus} {m}")
        # Fig. 3: one point per model, at its parameter count and its median cost over layers ≥ 1.
        got, _ = panels(svg(out, f"fig3_cost_vs_size_{corpus}"))
        (series,) = got.values()
        families = sorted({r["family"] for r in rows})
        check(sorted(series) == families, f"fig3 {corpus}: series {sorted(series)}, families {families}")
        for fam in families:
            expected = {}
            for m in sorted({r["model"] for r in rows if r["family"] == fam and r["corpus"] == corpus}):
                mr = [r for r in rows if r["model"] == m and r["corpus"] == corpus]
                p = model_parameters(src, m)
                check(mr[0]["params"] == p, f"all_linear params of {m}: {mr[0]['params']}, safetensors {p}")
                used = sorted([r for r in mr if r["layer"] > 0] or mr, key=lambda r: r["delta_pct"])
                lo, hi = used[(len(used) - 1) // 2], used[len(used) // 2]  # the middle layer(s)
                expected[float(p)] = (statistics.median(r["delta_pct"] for r in used),
                                      min(lo["ci_low"], hi["ci_low"]), max(lo["ci_high"], hi["ci_high"]))
            check_points(series[fam], expected, f"fig3 {corpus} {fam}")
    checked.append(f"Fig. 1 and Fig. 3: {len(corpora)} corpora, values = all_linear rows, parameters = safetensors")


def share_axis_floor(root, title):
    """The lowest y tick label of panel `title` (a number)."""
    for p in root.iter(f"{SVG}g"):
        if p.get("class") == "panel" and p.get("data-title") == title:
            ticks = [float(t.text) for t in p.iter(f"{SVG}text")
                     if t.get("text-anchor") == "end" and t.get("class") is None and re.fullmatch(r"-?[0-9.]+", (t.text or "").strip())]
            return min(ticks) if ticks else None
    fail(f"no panel {title}")


def check_fig2_fig5(out, gates, all_linear, compound):
    chosen = [g for g in gates if g["selected"] == 1]
    for m in sorted({g["model"] for g in chosen}):
        got, _, corpora = figure_panels(out, f"fig2_gate_vs_all_linear_{m}", [g for g in chosen if g["model"] == m],
                                        "corpus", f"fig2 {m}")
        for c in corpora:
            ch = [g for g in chosen if g["model"] == m and g["corpus"] == c]
            al = [r for r in all_linear if r["model"] == m and r["corpus"] == c]
            s = got[c]
            check_points(s["chosen gate (95% CI)"], {g["layer"]: (g["delta_pct"], g["ci_low"], g["ci_high"]) for g in ch},
                         f"fig2 {m} {c} chosen")
            check_points(s["all-linear (95% CI)"], {r["layer"]: (r["delta_pct"], r["ci_low"], r["ci_high"]) for r in al},
                         f"fig2 {m} {c} all-linear")
            check_points(s["random routing at the gate's share (95% CI)"],
                         {g["layer"]: (g["random_delta_pct"], g["random_ci_low"], g["random_ci_high"]) for g in ch},
                         f"fig2 {m} {c} random routing")
            # A ring only where the whole interval lies below zero, never on a point estimate alone.
            beats = {g["layer"]: (g["delta_pct"], math.nan, math.nan) for g in ch if g["ci_high"] < 0}
            ring = "gate beats the untouched model (whole 95% CI below 0)"
            if beats:
                check_points(s[ring], beats, f"fig2 {m} {c} rings")
            else:
                check(ring not in s, f"fig2 {m} {c}: rings without a layer below 0")
        got, refs = panels(svg(out, f"fig5_redistribution_{m}"))
        check(len(got) == 2 * len(corpora), f"fig5 {m}: {len(got)} panels for {len(corpora)} corpora")
        for c in corpora:
            ch = [g for g in chosen if g["model"] == m and g["corpus"] == c]
            share = got[f"{c}: share routed linear"]["chosen gate, layer alone"]
            check_points(share, {g["layer"]: (g["pct_linear"], math.nan, math.nan) for g in ch}, f"fig5 {m} {c} share")
            comp = [r for r in compound if r["model"] == m and r["corpus"] == c]
            if comp:
                check(refs[f"{c}: share routed linear"] == {"compound: mean share, every gate at once": comp[0]["pct_linear"]},
                      f"fig5 {m} {c}: compound share line {refs[f'{c}: share routed linear']}")
                label = "compound: Δ% with every gate at once (band: 95% CI)"
                check(refs[f"{c}: cost"] == {label: comp[0]["delta_pct"],
                                             label + " band": (comp[0]["ci_low"], comp[0]["ci_high"])},
                      f"fig5 {m} {c}: compound cost line and band {refs[f'{c}: cost']}")
            # Shares start at 0: the lowest tick of the share panel's y axis is 0.
            check(share_axis_floor(svg(out, f"fig5_redistribution_{m}"), f"{c}: share routed linear") == 0,
                  f"fig5 {m} {c}: the share axis does not start at 0")
        got, _ = panels(svg(out, f"gate_share_{m}"))
        for c in corpora:
            variants = sorted({g["gate"] for g in gates if g["model"] == m and g["corpus"] == c})
            check(sorted(got[c]) == variants, f"gate_share {m} {c}: series {sorted(got[c])}")
            for v in variants:
                check_points(got[c][v], {g["layer"]: (g["pct_linear"], math.nan, math.nan) for g in gates
                                         if g["model"] == m and g["corpus"] == c and g["gate"] == v}, f"gate_share {m} {c} {v}")
    checked.append(f"Fig. 2, Fig. 5, gate shares: {len(chosen)} chosen gates, rings where the CI is below 0, "
                   "compound lines with their bands, shares from 0")


# The two lookups as the report names them: which one a router could deploy.
LOOKUP_LABELS = {"token_lookup_input": "token_lookup_input (deployable)",
                 "token_lookup": "token_lookup (predicted: which tokens are hurt, not deployable)"}


def check_token_context(out, rows):
    for m in sorted({r["model"] for r in rows}):
        got, _ = panels(svg(out, f"token_context_{m}"))
        for c in sorted({r["corpus"] for r in rows if r["model"] == m}):
            mine = [r for r in rows if r["model"] == m and r["corpus"] == c]
            variants = sorted({r["variant"] for r in mine})
            check(sorted(got[c]) == sorted(LOOKUP_LABELS.get(v, v) for v in variants),
                  f"token_context {m} {c}: series {sorted(got[c])}")
            for v in variants:
                check_points(got[c][LOOKUP_LABELS.get(v, v)],
                             {r["layer"]: (r["auc"], r["auc_ci_low"], r["auc_ci_high"]) for r in mine
                              if r["variant"] == v}, f"token_context {m} {c} {v}")
    rows_csv = list(csv.DictReader(open(f"{out}/csv/token_context.csv", encoding="utf-8")))
    check(all(f"AUC {label}" in rows_csv[0] for label in LOOKUP_LABELS.values()),
          f"token_context.csv: the lookups are not labelled deployable / not deployable: {list(rows_csv[0])}")
    checked.append(f"token_context: {len(rows)} AUCs with their intervals; the lookups labelled by deployability")


def check_histograms(out, store):
    n = 0
    for path in unit_paths(store, "capture"):
        with Unit(path) as u:
            prov = json.loads(u.attrs["params"])
            parts = int(u["arrays/capture/parts"][0])
        _, model, corpus = prov["slot"].split("/")
        unit = os.path.basename(path)[:-3]
        root = svg(out, f"delta_hist_{model}_{corpus}")
        titles = [p.get("data-title") for p in root.iter(f"{SVG}g") if p.get("class") == "panel"]
        check(titles == [f"layer {l}" for l in prov["params"]["layers"]], f"delta_hist {model} {corpus}: {titles}")
        check(model in "".join(t.text or "" for t in root.iter(f"{SVG}text")), f"delta_hist {model}: model not in title")
        for p in root.iter(f"{SVG}g"):
            if p.get("class") != "panel":
                continue
            layer = int(p.get("data-title").split()[1])
            rows = sum(h5py.File(f"{store}/activations/{unit}/gate/layer{layer}.part{k}.h5", "r")["delta"].shape[0]
                       for k in range(parts))
            bars = sum(float(b.get("data-count")) for b in p.iter(f"{SVG}rect") if b.get("class") == "bar")
            check(bars == rows, f"delta_hist {model} {corpus} layer {layer}: {bars} counted, {rows} rows")
            n += 1
    checked.append(f"δ histograms: {n} panels, every gate-split row counted once")


def vocabulary(src, model):
    d = f"{src}/tests/data/models/{model}"
    if os.path.exists(f"{d}/vocab.json"):
        vocab = json.load(open(f"{d}/vocab.json"))
    else:
        j = json.load(open(f"{d}/tokenizer.json"))
        vocab = dict(j["model"]["vocab"])
        for t in j.get("added_tokens", []):
            vocab[t["content"]] = t["id"]
    dec = gpt2_bytes.char_to_byte()
    return {i: bytes(dec[c] for c in s) if all(c in dec for c in s) else s.encode() for s, i in vocab.items()}


def token_class(t):
    """The class of a token's bytes, as docs/methods.md ("Token features") defines it."""
    i = 0
    while i < len(t) and chr(t[i]).isspace():
        i += 1
    rest = t[i:]
    if not rest:
        return 4
    letter = lambda c: chr(c).isascii() and chr(c).isalpha() or c >= 0x80
    if any(letter(c) for c in rest) and all(letter(c) or c in b"'-" for c in rest):
        return 1 if i > 0 else 0
    if all(chr(c).isdigit() for c in rest):
        return 2
    if all(chr(c) in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~" for c in rest):
        return 3
    return 4


CLASSES = ["word", "whitespace-prefixed word", "number", "punctuation", "other"]


def check_token_features(out, store, src):
    classes, regs = table(store, "token_classes"), table(store, "token_regression")
    check(classes and regs, "no token_classes or token_regression rows")
    n_units = 0
    for path in unit_paths(store, "token_features"):
        with Unit(path) as u:
            prov = json.loads(u.attrs["params"])
            _, model, corpus = prov["slot"].split("/")
            feats = {k: u[f"arrays/token_features/{model}/{corpus}/{k}"][:] for k in u[f"arrays/token_features/{model}/{corpus}"]}
        capture = [d for d in prov["deps"] if d.startswith("capture-")][0]
        with Unit(f"{store}/units/{capture}.h5") as u:
            parts = int(u["arrays/capture/parts"][0])
        vocab = vocabulary(src, model)
        for layer in prov["params"]["layers"]:
            # The described token: the one δ scores (next_token_ids) or the input token.
            ids = "next_token_ids" if prov["params"]["key"] == "predicted" else "token_ids"
            delta, tok, window = [], [], []
            for k in range(parts):
                with h5py.File(f"{store}/activations/{capture}/gate/layer{layer}.part{k}.h5", "r") as f:
                    delta.append(f["delta"][:].astype(np.float64))
                    tok.append(f[ids][:])
                    window.append(f["window"][:])
            delta, tok, window = np.concatenate(delta), np.concatenate(tok), np.concatenate(window)
            cls = np.array([token_class(vocab[int(t)]) for t in tok])
            check((cls == feats["token_class"]).all(), f"token_features {model} {corpus}: token classes differ")
            # Class means and population SDs; float32 δ summed in float64 (n·u64 relative).
            for r in classes:
                if (r["model"], r["corpus"], r["layer"], r["scheme"]) != (model, corpus, layer, "class"):
                    continue
                d = delta[cls == CLASSES.index(r["category"])]
                tol = 4 * len(d) * U64 * max(1.0, float(np.abs(d).max()))
                check(r["count"] == len(d) and abs(r["mean_delta"] - d.mean()) <= tol and abs(r["sd_delta"] - d.std()) <= 10 * tol,
                      f"token_classes {model} {corpus} {layer} {r['category']}: {r} vs n={len(d)} mean={d.mean()}")
            # R² of least squares on all features (numpy lstsq), in sample and on held-out windows.
            names = ["log_frequency", "length", "position", "whitespace_prefix", "word_continuation",
                     "next-token_entropy", "surprisal"]
            cols = [feats[n] for n in names] + [(cls == c).astype(float) for c in range(1, 5) if (cls == c).any()]
            a = np.column_stack([np.ones(len(delta))] + cols)
            hold = window % 10 >= 7

            def r2(fit, score):
                beta = np.linalg.lstsq(a[fit], delta[fit], rcond=None)[0]
                res = delta[score] - a[score] @ beta
                return 1 - (res @ res) / ((delta[score] - delta[score].mean()) ** 2).sum()

            (row,) = [r for r in regs if (r["model"], r["corpus"], r["layer"], r["feature"]) == (model, corpus, layer, "all")]
            cond = np.linalg.cond(a)
            tol = 10 * len(delta) * U64 * cond  # both solve by SVD (LAPACK gelsd): backward stable
            check(abs(row["r2"] - r2(np.ones(len(delta), bool), np.ones(len(delta), bool))) <= tol,
                  f"token_regression {model} {corpus} {layer}: r2 {row['r2']} vs numpy {r2(np.ones(len(delta), bool), np.ones(len(delta), bool))}")
            check(abs(row["r2_holdout"] - r2(~hold, hold)) <= tol, f"token_regression {model} {corpus} {layer}: r2_holdout")
            for name in names:
                (single,) = [r for r in regs if (r["model"], r["corpus"], r["layer"]) == (model, corpus, layer)
                             and r["feature"].replace(" ", "_") == name]
                x = feats[name]
                want = np.corrcoef(x, delta)[0, 1] if x.std() > 0 else math.nan
                check(same(single["pearson_r"], want) or abs(single["pearson_r"] - want) <= 1e3 * len(delta) * U64,
                      f"token_regression {name}: r {single['pearson_r']} vs {want}")
        n_units += 1
    check(n_units > 0, "no token_features units")
    # Fig. 4: a heat map per scheme with the class means.
    for m, c, key in sorted({(r["model"], r["corpus"], r["key"]) for r in classes}):
        root = svg(out, f"fig4_token_categories_{m}")
        title = f"{c}: by token class of the {'predicted' if key == 'predicted' else 'input'} token"
        (panel,) = [g for g in root.iter(f"{SVG}g") if g.get("data-title") == title]
        cells = {(e.get("data-row"), e.get("data-column")): float(e.get("data-value")) for e in panel.iter(f"{SVG}rect")
                 if e.get("class") == "cell"}
        mine = [r for r in classes if r["model"] == m and r["corpus"] == c and r["scheme"] == "class"]
        check(len(cells) == len({r["category"] for r in mine}) * len({r["layer"] for r in mine}), f"fig4 {m} {c}: cells")
        for r in mine:
            check(cells.get((r["category"], f"L{r['layer']}")) == r["mean_delta"], f"fig4 {m} {c}: {r}")
    # The table: R² in sample / held out for every (model, corpus, layer).
    rows = list(csv.reader(open(f"{out}/csv/token_regression.csv")))
    check(len(rows) - 1 == len({(r["model"], r["corpus"], r["layer"]) for r in regs}), "token_regression.csv rows")
    checked.append(f"token features: {n_units} units; classes recomputed from the vocabularies, R² with numpy lstsq")


LEXICON = [("the", "at", "determiner"), ("a", "at", "determiner"), ("jury", "nn", "noun"), ("city", "nn", "noun"),
           ("said", "vbd", "verb"), ("ran", "vbd", "verb"), ("quickly", "rb", "adverb"), ("red", "jj", "adjective"),
           ("and", "cc", "conjunction"), ("in", "in", "preposition"), ("he", "pps", "pronoun"),
           ("was", "bedz", "auxiliary"), ("1962", "cd", "number"), (",", ",", "punctuation")]
POS = ["noun", "verb", "auxiliary", "adjective", "adverb", "pronoun", "determiner", "preposition", "conjunction",
       "number", "punctuation", "other"]


def check_brown(binary, src, work):
    """Parts of speech on a Brown-format corpus: sentences drawn (seeded) from a lexicon in which
    every word has one tag, so each token's stored part of speech must be its word's."""
    rng = np.random.default_rng(0)
    os.makedirs(f"{work}/brown/corpus", exist_ok=True)
    for name in ("ca01", "ca02"):
        lines = []
        for _ in range(120):
            words = [LEXICON[i] for i in rng.integers(0, len(LEXICON), size=8)]
            lines.append("\t" + " ".join(f"{w}/{t}" for w, t, _ in words) + " ./.")
        open(f"{work}/brown/corpus/{name}", "w").write("\n".join(lines) + "\n")
    spec = f"{work}/brown/spec.yaml"
    open(spec, "w").write(f"""store: {work}/brown/store
context: 32
models: [{{name: tiny-gpt2, path: {src}/tests/data/models/tiny-gpt2}}]
corpora: [{{name: brown, path: {work}/brown/corpus, format: brown}}]
splits: {{fit: {{start: 0, tokens: 640}}, gate: {{start: 640, tokens: 640}}}}
layers: [0, 1]
experiments: {{fit: {{}}, token_features: {{}}}}
""")
    subprocess.run(["rm", "-rf", f"{work}/brown/store"], check=True)
    r = subprocess.run([binary, "run", spec, "--quiet"], capture_output=True, text=True)
    check(r.returncode == 0, f"brown run: exit {r.returncode}: {r.stderr}")
    store = f"{work}/brown/store"
    (path,) = unit_paths(store, "token_features")
    with Unit(path) as u:
        pos = u["arrays/token_features/tiny-gpt2/brown/pos"][:]
        prov = json.loads(u.attrs["params"])
    capture = [d for d in prov["deps"] if d.startswith("capture-")][0]
    check(prov["params"]["key"] == "predicted", f"brown: token_features key {prov['params']['key']}, not predicted")
    with h5py.File(f"{store}/activations/{capture}/gate/layer0.part0.h5", "r") as f:
        tok = f["next_token_ids"][:]  # the token each δ scores, the default key
    vocab = vocabulary(src, "tiny-gpt2")
    tag_of = {w: p for w, _, p in LEXICON}
    tag_of["."] = "punctuation"
    checked_tokens = 0
    for t, p in zip(tok, pos):
        text = vocab[int(t)].decode("utf-8", "replace").strip()
        if text == "<|endoftext|>":  # between documents: no word, no tag
            check(p == -1, f"brown: end-of-text has part of speech {p}")
            continue
        owners = {tag_of[w] for w in tag_of if text and text in w}
        check(p >= 0 and POS[int(p)] in owners, f"brown: token {text!r} has part of speech {p}, its words' are {owners}")
        checked_tokens += 1
    rows = [r for r in table(store, "token_classes") if r["scheme"] == "pos" and r["layer"] == 0]
    for r in rows:
        check(r["count"] == int((pos == POS.index(r["category"])).sum()), f"brown token_classes {r}")
    report(binary, store, f"{work}/brown/report")
    root = svg(f"{work}/brown/report", "fig4_token_categories_tiny-gpt2")
    titles = [g.get("data-title") for g in root.iter(f"{SVG}g") if g.get("class") == "panel"]
    check(titles == ["brown: by token class of the predicted token",
                     "brown: by part of speech (Brown tags) of the predicted token"], f"brown fig4 panels {titles}")
    checked.append(f"parts of speech: {checked_tokens} tokens of a Brown corpus carry their word's tag; Fig. 4 has both maps")


def check_tables(out, store):
    al, gates = table(store, "all_linear"), table(store, "gates")
    rows = list(csv.DictReader(open(f"{out}/csv/layer0.csv")))
    zero = [r for r in al if r["layer"] == 0]
    check(len(rows) == len(zero), f"layer0.csv: {len(rows)} rows, {len(zero)} all_linear rows at layer 0")
    for r in rows:
        (a,) = [z for z in zero if z["model"] == r["model"] and z["corpus"] == r["corpus"]]
        check(r["all-linear Δ% [95% CI]"].startswith(f"{a['delta_pct']:+.2f} ["), f"layer0.csv {r}")
        check(r["parameters"] == count_si(a["params"]) and r["family"] == a["family"], f"layer0.csv {r}")
        g = [x for x in gates if x["selected"] == 1 and x["layer"] == 0 and x["model"] == r["model"] and x["corpus"] == r["corpus"]]
        check(r["chosen gate"] == (g[0]["gate"] if g else ""), f"layer0.csv chosen gate {r}")
    rows = list(csv.DictReader(open(f"{out}/csv/cross_scale.csv")))
    pairs = {(r["model"], r["corpus"]) for r in al}
    check(len(rows) == len(pairs), f"cross_scale.csv: {len(rows)} rows for {len(pairs)} models and corpora")
    for r in rows:
        mr = [a for a in al if (a["model"], a["corpus"]) == (r["model"], r["corpus"])]
        cost = [a["delta_pct"] for a in mr if a["layer"] > 0] or [a["delta_pct"] for a in mr]
        check(r["median all-linear Δ%"] == f"{statistics.median(cost):+.2f}", f"cross_scale.csv median {r}")
        check(r["parameters"] == count_si(mr[0]["params"]) and r["layers"] == str(len(mr)), f"cross_scale.csv {r}")
    rows = list(csv.DictReader(open(f"{out}/csv/cost_vs_share.csv")))
    layers = {(g["model"], g["corpus"], g["layer"]) for g in gates}
    curve = [c for c in table(store, "gate_curve") if c["step"] > 0]  # step 0 is the all-linear row
    check(len(rows) == len(gates) + len(curve) + 2 * len(layers), f"cost_vs_share.csv: {len(rows)} rows")
    checked.append("tables: layer0, cross_scale, cost_vs_share against all_linear, gates and gate_curve rows")


def check_speed(out, store):
    """The speed section: per model and corpus the compound forward's predicted and measured saving
    beside compound's Δ% (joined on model, corpus and layer set), then every timed forward."""
    speed, compound = table(store, "speed"), table(store, "compound")
    check(speed, "the measure store has no speed rows")
    rows = list(csv.DictReader(open(f"{out}/csv/speed_predicted_vs_measured.csv")))
    routed = [s for s in speed if s["forward"] == "compound"]
    check(len(rows) == len(routed), f"speed_predicted_vs_measured.csv: {len(rows)} rows for {len(routed)}")
    for r in rows:
        (s,) = [x for x in routed if (x["model"], x["corpus"], x["layer_set"]) == (r["model"], r["corpus"], r["layers"])]
        (c,) = [x for x in compound if (x["model"], x["corpus"], x["layer_set"]) == (s["model"], s["corpus"], s["layer_set"])]
        check(r["compound Δ%"] == f"{c['delta_pct']:+.2f}" and r["Δ% here"] == f"{s['delta_pct']:+.2f}", f"speed row {r}")
        check(r["predicted saving %"] == f"{s['predicted_saving_pct']:.1f}", f"speed predicted {r}")
        check(r["measured saving % [min, max]"] ==
              f"{s['saving_pct']:.1f} [{s['saving_low']:.1f}, {s['saving_high']:.1f}]", f"speed measured {r}")
    rows = list(csv.DictReader(open(f"{out}/csv/speed_forwards.csv")))
    check(len(rows) == len(speed), f"speed_forwards.csv: {len(rows)} rows for {len(speed)} speed rows")
    checked.append(f"speed: {len(routed)} predicted-vs-measured rows joined with compound, {len(speed)} forwards")
    decode = table(store, "speed_decode")
    check(decode, "the measure store has no speed_decode rows")
    rows = list(csv.DictReader(open(f"{out}/csv/speed_decode.csv")))
    check(len(rows) == len(decode), f"speed_decode.csv: {len(rows)} rows for {len(decode)}")
    for r in rows:
        (d,) = [x for x in decode if (x["model"], x["corpus"], str(x["batch"])) == (r["model"], r["corpus"], r["batch"])]
        check(r["predicted saving %"] == f"{d['predicted_saving_pct']:.1f}", f"speed_decode predicted {r}")
        cell = r["measured saving % [95%]"]
        if d["pairs"] < 5:
            check(cell == f"– ({d['pairs']} pairs)", f"speed_decode: {d['pairs']} pairs shown as {cell!r}")
            continue
        want = f"{d['saving_pct']:.1f} [{d['saving_low']:.1f}, {d['saving_high']:.1f}]"
        zero = d["saving_low"] <= 0 <= d["saving_high"]
        check(cell == want + (" †" if zero else ""), f"speed_decode measured {cell!r}, want {want} (zero: {zero})")
    plotted = sum(d["pairs"] >= 5 for d in decode)
    svg = f"{out}/figures/speed_decode_predicted_vs_measured.svg"
    check(os.path.exists(svg) == (plotted > 0), f"{svg}: {plotted} rows of at least 5 pairs")
    checked.append(f"speed_decode: {len(rows)} rows, the † and the 5-pair rule, the figure")


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.links, self.svgs = set(), [], 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a":
            self.links.append(a.get("href", ""))
        if tag == "svg":
            self.svgs += 1
        for k in ("src", "href"):
            v = a.get(k, "")
            check(not v.startswith(("http:", "https:", "//")), f"index.html refers to the network: {v}")


def findings(out):
    """{(model, corpus): {topic: text}} from csv/findings.csv."""
    rows = list(csv.DictReader(open(f"{out}/csv/findings.csv", encoding="utf-8")))
    return {(r.pop("model"), r.pop("corpus")): r for r in rows}


def check_findings(out, store):
    """Each findings cell recomputed from the store's tables: the layers chosen on the select
    split, counts of intervals that exclude zero, the compound and speed rows."""
    got = findings(out)
    al, gates, tc = table(store, "all_linear"), table(store, "gates"), table(store, "token_context")
    compound, speed, decode = table(store, "compound"), table(store, "speed"), table(store, "speed_decode")
    pairs = {(r["model"], r["corpus"]) for r in al + gates + tc + compound + speed + decode}
    check(set(got) == pairs, f"findings rows {sorted(got)} vs {sorted(pairs)}")
    for m, c in sorted(pairs):
        cell = got[(m, c)]
        mine = [r for r in al if r["model"] == m and r["corpus"] == c]
        if mine:
            lo = min(mine, key=lambda r: r["select_delta_pct"])
            hi = max(mine, key=lambda r: r["select_delta_pct"])
            for topic, r in (("cheapest layer, all-linear Δ%", lo), ("most expensive layer", hi)):
                want = f"L{r['layer']}: {r['delta_pct']:+.2f} [{r['ci_low']:+.2f}, {r['ci_high']:+.2f}]"
                check(cell[topic].startswith(want), f"findings {m} {c} {topic}: {cell[topic]!r}, want {want}")
        ch = [g for g in gates if g["model"] == m and g["corpus"] == c and g["selected"] == 1]
        if ch:
            beats = sum(g["vs_random_ci_high"] < 0 for g in ch)
            worse = sum(g["vs_random_ci_low"] > 0 for g in ch)
            # The best layer is chosen on the select split (its chosen gate's select Δ%), never on eval.
            best = min(ch, key=lambda g: g["select_delta_pct"] if math.isfinite(g["select_delta_pct"]) else math.inf)
            want = (f"beats random at {beats}/{len(ch)} layers, worse at {worse}; best layer "
                    f"L{best['layer']} {best['gate']} {best['vs_random_pct']:+.2f} [")
            topic = "chosen gate vs random routing, Δ% difference"
            check(cell[topic].startswith(want), f"findings {m} {c} gate: {cell[topic]!r}, want {want}")
        layers = {}
        for r in tc:
            if r["model"] == m and r["corpus"] == c:
                layers.setdefault(r["layer"], {})[r["variant"]] = r
        # Against the context gate stands the lookup a router can deploy: by the input token.
        apart = [(v["token_lookup_input"], v["c"]) for v in layers.values() if "token_lookup_input" in v and "c" in v]
        if apart:
            tok = sum(t["auc_ci_low"] > x["auc_ci_high"] for t, x in apart)
            ctx = sum(x["auc_ci_low"] > t["auc_ci_high"] for t, x in apart)
            want = f"input-token lookup ahead at {tok}/{len(apart)} layers, context c at {ctx} "
            topic = "input token vs context, AUC (deployable)"
            check(cell[topic].startswith(want), f"findings {m} {c} token: {cell[topic]!r}, want {want}")
        for r in compound:
            if (r["model"], r["corpus"]) == (m, c):
                want = f"Δ% {r['delta_pct']:+.2f} [{r['ci_low']:+.2f}, {r['ci_high']:+.2f}]"
                topic = "compound, every chosen gate at once"
                check(cell[topic].startswith(want), f"findings {m} {c} compound: {cell[topic]!r}, want {want}")
        for r in speed:
            if (r["model"], r["corpus"], r["forward"]) == (m, c, "compound"):
                want = f"saving {r['saving_pct']:.1f}% ({r['saving_low']:.1f} to {r['saving_high']:.1f} over "
                topic = "wall-clock saving, compound forward"
                check(cell[topic].startswith(want), f"findings {m} {c} speed: {cell[topic]!r}, want {want}")
        for r in decode:
            if (r["model"], r["corpus"]) != (m, c):
                continue
            text = cell[f"decode saving, batch {r['batch']}"]
            if r["pairs"] < 5:
                check(text.startswith(f"not stated: {r['pairs']} paired repeats"), f"findings decode: {text!r}")
                continue
            zero = r["saving_low"] <= 0 <= r["saving_high"]
            want = (("no saving shown † " if zero else "saving ") + f"{r['saving_pct']:.1f}% [{r['saving_low']:.1f}, "
                    f"{r['saving_high']:.1f}] over {r['pairs']} paired repeats, bytes predict {r['predicted_saving_pct']:.1f}%")
            check(text.startswith(want), f"findings {m} {c} decode batch {r['batch']}: {text!r}, want {want}")
    checked.append(f"findings: {len(got)} rows recomputed from the store's tables")


def headlines(out):
    """The sentences that open the page, unescaped."""
    text = open(f"{out}/index.html", encoding="utf-8").read()
    m = re.search(r'<ul id="headlines">\n(.*?)</ul>', text, re.S)
    return [html.unescape(x) for x in re.findall(r"<li>(.*?)</li>", m.group(1))] if m else []


def ci(v, lo, hi):
    return f"{v:+.2f}% (95% CI {lo:+.2f} to {hi:+.2f})"


def check_headlines(out, store):
    """Three to six sentences open the page, before the findings table, each with a number and its
    interval; the all-linear and gate sentences recomputed from the store's rows, their layers
    chosen on the select split."""
    got = headlines(out)
    check(3 <= len(got) <= 6, f"{len(got)} opening sentences: {got}")
    for h in got:
        check("95% CI" in h and h.endswith("."), f"opening sentence without an interval: {h!r}")
    text = open(f"{out}/index.html", encoding="utf-8").read()
    check(text.index('id="headlines"') < text.index('id="findings-table"'), "the sentences do not precede the table")
    al = [r for r in table(store, "all_linear") if math.isfinite(r["select_delta_pct"])]
    lo, hi = min(al, key=lambda r: r["select_delta_pct"]), max(al, key=lambda r: r["select_delta_pct"])
    want = (f"costs least at layer {lo['layer']} of {lo['model']} on {lo['corpus']}: "
            f"{ci(lo['delta_pct'], lo['ci_low'], lo['ci_high'])} perplexity on the eval split, against "
            f"{ci(hi['delta_pct'], hi['ci_low'], hi['ci_high'])} at the most expensive, layer {hi['layer']} of "
            f"{hi['model']} on {hi['corpus']} (the lowest and highest select-split costs of {len(al)} layers in "
            f"{len({(r['model'], r['corpus']) for r in al})} model–corpus pairs).")
    check(got[0].endswith(want), f"all-linear sentence {got[0]!r}, want …{want!r}")
    ch = [g for g in table(store, "gates") if g["selected"] == 1 and math.isfinite(g["vs_random_pct"])
          and g["random_draws"] > 0]
    best = min(ch, key=lambda g: g["select_delta_pct"] if math.isfinite(g["select_delta_pct"]) else math.inf)
    want = (f"beats random routing of the same share of positions at {sum(g['vs_random_ci_high'] < 0 for g in ch)} "
            f"of {len(ch)} layers and does worse at {sum(g['vs_random_ci_low'] > 0 for g in ch)} (paired 95% "
            f"intervals that exclude zero); at the layer whose gate costs least on the select split, layer "
            f"{best['layer']} of {best['model']} on {best['corpus']} ({best['gate']}, ")
    check(want in got[1], f"gate sentence {got[1]!r}, want …{want!r}")
    check(any(h.startswith("Against a lookup table of the input token") for h in got), "no token-vs-context sentence")
    checked.append(f"opening: {len(got)} sentences with intervals, layers chosen on select as the store's rows say")


def check_page(binary, out, j, store):
    text = open(f"{out}/index.html", encoding="utf-8").read()
    page = Page()
    page.feed(text)
    check(page.svgs == j["figures"] and j["figures"] > 0, f"index.html: {page.svgs} inline SVGs, {j['figures']} figures")
    for f in glob.glob(f"{out}/figures/*.svg"):
        check(open(f, encoding="utf-8").read() in text, f"{f} is not inline in index.html")
    for href in page.links:
        if href.startswith("#"):
            check(href[1:] in page.ids, f"contents link {href} has no target")
        else:
            check(os.path.isfile(os.path.join(out, href)), f"link {href} names no file")
    csvs = [h for h in page.links if h.startswith("csv/")]
    check(len(csvs) == j["tables"], f"{len(csvs)} CSV links for {j['tables']} tables")
    run = json.load(open(f"{store}/run.json"))
    check(run["spec"] in text, "provenance: the spec path from run.json is missing")
    hosts = {json.loads(l).get("host") for l in open(f"{store}/journal.jsonl") if l.startswith("{")}
    check(all(h in text for h in hosts if h), f"provenance: hosts {hosts} missing")
    # The units of the store's current plan (a rerun with other parameters leaves the old units'
    # files beside them): linsweep status's count, no more than the files.
    committed = json.loads(subprocess.run([binary, "status", store, "--json"], capture_output=True, text=True,
                                          check=True).stdout)["committed"]
    check(0 < committed <= len(unit_paths(store)), f"status: {committed} committed for {len(unit_paths(store))} files")
    check(f"{committed} committed" in text, f"provenance: '{committed} committed' missing")
    check("<script" not in text, "index.html has a script")
    # The findings open the page's main part; the provenance lists every planning's spec.
    main = text[text.index("<main>"):]
    check(main.startswith('<main>\n<section id="findings">'), "index.html: the main part does not open with the findings")
    plans = [json.load(open(p)) for p in sorted(glob.glob(f"{store}/plans/*.json"))]
    check(plans, f"{store}: no plan records")
    runs = text[text.index('id="provenance-runs"'):]
    runs = re.sub(r"</?span[^>]*>", "", runs[:runs.index("</table>")])
    for p in plans:
        row = re.search(rf"<tr><td[^>]*>{p['seq']}</td><td[^>]*>[0-9-]+ [0-9:]+ UTC</td><td>{p['command']}</td>"
                        r"<td[^>]*>[^<]*</td><td[^>]*>([^<]*)</td>", runs)
        check(row, f"provenance: planning {p['seq']} missing")
        if row:  # the overrides as shell words: a shell reads back exactly those the run was given
            cell = html.unescape(row.group(1))
            got = [] if cell == "none" else shlex.split(cell)
            check(got == p.get("overrides", []), f"provenance: planning {p['seq']} shows overrides {cell!r}")
    checked.append(f"{out}/index.html: {page.svgs} figures inline, {len(csvs)} CSV links, {len(page.links)} links resolve")


def check_training(out, store):
    progressive = table(store, "progressive")
    for r in progressive:  # the figure names progressive's control apart from finetune's
        r["variant"] = "progressive control" if r["variant"] == "control" else r["variant"]
    rows = progressive + table(store, "finetune")
    check(rows, "no training rows")
    for c in sorted({r["corpus"] for r in rows}):
        got, refs, models = figure_panels(out, f"fig6_training_{c}", [r for r in rows if r["corpus"] == c], "model",
                                          f"fig6 {c}")
        for m in models:
            mine = [r for r in rows if r["model"] == m and r["corpus"] == c]
            variants = sorted({r["variant"] for r in mine})
            check(sorted(got[m]) == variants, f"fig6 {c} {m}: series {sorted(got[m])} vs {variants}")
            check({"progressive", "progressive control", "linearized", "two_phase", "control"} <= set(variants),
                  f"fig6 {c} {m}: {variants}")
            for v in variants:
                check_points(got[m][v], {r["step"]: (r["ppl"], math.nan, math.nan) for r in mine if r["variant"] == v},
                             f"fig6 {c} {m} {v}")
            check(refs[m] == {"untouched model": mine[0]["ppl_base"]}, f"fig6 {c} {m}: reference {refs[m]}")
    # Findings: each experiment's variants at their last step against the untouched model.
    got = findings(out)
    for name, topic in (("progressive", "progressive linearization"), ("finetune", "fine-tuning, one budget")):
        mine = table(store, name)
        for m, c in {(r["model"], r["corpus"]) for r in mine}:
            last = {}
            for r in mine:
                if (r["model"], r["corpus"]) == (m, c) and r["step"] >= last.get(r["variant"], r)["step"]:
                    last[r["variant"]] = r
            text = got[(m, c)][topic]
            check(text.startswith(f"after {max(r['step'] for r in last.values())} steps, Δ% vs untouched: "),
                  f"findings {m} {c} {topic}: {text!r}")
            for v, r in last.items():
                check(f"{v} {r['delta_pct']:+.2f}" in text, f"findings {m} {c} {topic}: no '{v} {r['delta_pct']:+.2f}'")
    checked.append(f"Fig. 6: {len(rows)} evaluations of progressive and fine-tuning units; training findings")


def main():
    binary, measure, training, src, work = (os.path.abspath(a) for a in sys.argv[1:6])
    out = f"{work}/measure"
    j = report(binary, measure, out)
    check_fig1_fig3(out, table(measure, "all_linear"), src)
    check_fig2_fig5(out, table(measure, "gates"), table(measure, "all_linear"), table(measure, "compound"))
    check_token_context(out, table(measure, "token_context"))
    check_histograms(out, measure)
    check_token_features(out, measure, src)
    check_tables(out, measure)
    check_speed(out, measure)
    check_findings(out, measure)
    check_headlines(out, measure)
    check_page(binary, out, j, measure)
    out = f"{work}/training"
    j = report(binary, training, out)
    check_training(out, training)
    check_page(binary, out, j, training)
    check_brown(binary, src, work)
    for line in checked:
        print(line)
    print("check_report: OK")


if __name__ == "__main__":
    main()
