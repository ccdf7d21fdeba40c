#!/usr/bin/env python3
"""Checks two finished demos (see demo_test.sh): summaries, held-out PPL against the unigram
PPL, tables, SVG figures, that the resumed demos continued instead of starting over, and that
the two demos' tables are identical.
Usage: check_demo.py OUT_A SUMMARY_A.json OUT_B SUMMARY_B.json"""
import collections
import csv
import json
import os
import sys
import xml.etree.ElementTree as ET

MODELS = ["gpt2-s", "gpt2-m", "gpt2-l", "neox-s", "neox-m", "neox-l", "llama-s", "llama-m", "llama-l",
          "mixtral-s", "mixtral-m"]
MOE = [m for m in MODELS if m.startswith("mixtral")]  # 4 experts, top-2, in every layer
FAMILIES = ["gpt2", "gpt_neox", "llama", "mixtral"]
LAYERS = {"s": 2, "m": 3, "l": 4}
CORPORA = ["fiction", "learned", "news"]


def fail(msg):
    print("check_demo: FAIL:", msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def load_summary(path):
    with open(path) as f:
        lines = [l for l in f if l.startswith("{")]
    check(len(lines) == 1, f"{path}: expected one JSON line")
    return json.loads(lines[0])


def journal(out):
    events = []
    with open(os.path.join(out, "store", "journal.jsonl")) as f:
        for line in f:
            events.append(json.loads(line))
    return events


def check_figures(out):
    figs = os.path.join(out, "report", "figures")
    names = sorted(os.listdir(figs))
    check(names, f"{figs}: no figures")
    svg = "{http://www.w3.org/2000/svg}"
    for n in names:
        check(n.endswith(".svg"), f"{n}: not an SVG")
        root = ET.parse(os.path.join(figs, n)).getroot()  # raises on malformed XML
        check(root.tag == f"{svg}svg", f"{n}: root is {root.tag}")
    for corpus in CORPORA:
        root = ET.parse(os.path.join(figs, f"fig1_nonlinearity_map_{corpus}.svg")).getroot()
        panels = [g.get("data-title").split(" · ")[0] for g in root.iter(f"{svg}g") if g.get("class") == "panel"]
        check(sorted(panels) == sorted(MODELS), f"fig1 {corpus}: panels {panels}, expected one per model")
        n = f"gate_delta_models_{corpus}.svg"
        check(n in names, f"missing figure {n}")
        root = ET.parse(os.path.join(figs, n)).getroot()
        series = [g.get("data-label") for g in root.iter(f"{svg}g") if g.get("class") == "series"]
        check(sorted(series) == sorted(MODELS), f"{n}: series {series}, expected one per model")
        n = f"fig3_cost_vs_size_{corpus}.svg"
        check(n in names, f"missing {n}")
        root = ET.parse(os.path.join(figs, n)).getroot()
        series = [g.get("data-label") for g in root.iter(f"{svg}g") if g.get("class") == "series"]
        check(sorted(series) == FAMILIES, f"{n}: series {series}, expected one per family")
    check("fig6_training_news.svg" in names, "missing fig6_training_news.svg (the demo's training)")
    # Every model's panel shows the training variants side by side.
    root = ET.parse(os.path.join(figs, "fig6_training_news.svg")).getroot()
    panels = [g for g in root.iter(f"{svg}g") if g.get("class") == "panel"]
    check(sorted(g.get("data-title").split(" · ")[0] for g in panels) == sorted(MODELS),
          "fig6_training_news: expected a panel per model")
    want = {"control", "linearized", "two_phase", "progressive", "progressive control"}
    for g in panels:
        series = {s.get("data-label") for s in g.iter(f"{svg}g") if s.get("class") == "series"}
        check(series == want, f"fig6_training_news {g.get('data-title')}: series {sorted(series)}")
    for m in MODELS:
        for stem in ("all_linear_", "fig2_gate_vs_all_linear_", "fig5_redistribution_", "delta_hist_"):
            check(any(n.startswith(stem + m) for n in names), f"missing {stem}{m}*.svg")
        check(f"fig4_token_categories_{m}.svg" in names, f"missing fig4_token_categories_{m}.svg")
    # The experts: a heat map per mixture of experts (a panel per corpus, a cell per expert and
    # layer), and linearity against routed share per corpus (a series per mixture of experts).
    for m in MODELS:
        check((f"experts_delta_{m}.svg" in names) == (m in MOE), f"experts_delta_{m}.svg: only for {MOE}")
    for m in MOE:
        root = ET.parse(os.path.join(figs, f"experts_delta_{m}.svg")).getroot()
        cells = [c for c in root.iter() if c.get("data-value") is not None]
        check(len(cells) == 4 * LAYERS[m[-1]] * len(CORPORA), f"experts_delta_{m}: {len(cells)} cells")
    for corpus in CORPORA:
        n = f"experts_linearity_vs_share_{corpus}.svg"
        check(n in names, f"missing {n}")
        root = ET.parse(os.path.join(figs, n)).getroot()
        series = {g.get("data-label") for g in root.iter(f"{svg}g") if g.get("class") == "series"}
        check(series == set(MOE), f"{n}: series {sorted(series)}, expected {MOE}")
    index = os.path.join(out, "report", "index.html")
    check(os.path.isfile(index), f"missing {index}")
    print(f"{figs}: {len(names)} SVG files parse as XML; Fig. 1 has a panel per model; {index} written")


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def check_tables(out):
    csvdir = os.path.join(out, "report", "csv")
    rows = read_csv(os.path.join(csvdir, "all_linear_per_layer.csv"))
    check(rows[0][:2] == ["model", "layer"] and len(rows[0]) == 2 + len(CORPORA), f"all_linear_per_layer header {rows[0]}")
    per_model = collections.Counter(r[0] for r in rows[1:])
    for m in MODELS:
        check(per_model[m] == LAYERS[m[-1]], f"all_linear_per_layer: {per_model[m]} rows for {m}")
    check(all("[" in c for r in rows[1:] for c in r[2:]), "all_linear_per_layer: a cell without its interval")
    gates = read_csv(os.path.join(csvdir, "gates_per_layer.csv"))
    check(len(gates) - 1 == sum(LAYERS[m[-1]] for m in MODELS) * len(CORPORA) * 3, f"gates_per_layer rows {len(gates) - 1}")
    for name in ("gating_summary", "all_linear_extremes", "token_context", "routing_lists", "clusters", "compound",
                 "progressive", "layer0", "cross_scale", "token_regression", "cost_vs_share",
                 "speed_predicted_vs_measured", "speed_forwards", "speed_decode",
                 "experts_layers"):
        check(os.path.exists(os.path.join(csvdir, name + ".csv")), f"missing table {name}")
    experts = read_csv(os.path.join(csvdir, "experts_layers.csv"))
    check(sorted((r[0], r[1], int(r[2])) for r in experts[1:]) ==
          sorted((m, c, l) for m in MOE for c in CORPORA for l in range(LAYERS[m[-1]])),
          f"experts_layers: rows {[r[:3] for r in experts[1:]]}")
    # The defaults of docs/methods.md: every gate beside random routing at its share, the
    # residual-space token vs context, routing lists that list tokens, progressive's control.
    summary = read_csv(os.path.join(csvdir, "gating_summary.csv"))
    random = summary[0].index("random at its share: Δ% [95% CI]")
    check(all("[" in r[random] for r in summary[1:]), "gating_summary: a row without its random baseline")
    context = read_csv(os.path.join(csvdir, "token_context.csv"))[0]
    check({"AUC r", "AUC c", "AUC paper"} <= set(context), f"token_context header {context}")
    lists = read_csv(os.path.join(csvdir, "routing_lists.csv"))
    check(all(int(r[lists[0].index("listed")]) > 0 for r in lists[1:]), "routing_lists: a model lists no token")
    # The report opens with findings: a row per model and corpus, each with its layers and gates.
    findings = read_csv(os.path.join(csvdir, "findings.csv"))
    check(sorted((r[0], r[1]) for r in findings[1:]) == sorted((m, c) for m in MODELS for c in CORPORA),
          f"findings rows {[(r[0], r[1]) for r in findings[1:]]}")
    for topic in ("cheapest layer, all-linear Δ%", "chosen gate vs random routing, Δ% difference",
                  "compound, every chosen gate at once"):
        col = findings[0].index(topic)
        check(all(r[col].strip() not in ("", "–") for r in findings[1:]), f"findings: an empty '{topic}' cell")
    progressive = read_csv(os.path.join(csvdir, "progressive.csv"))
    check({"progressive", "control"} <= {r[1] for r in progressive[1:]}, "progressive: no control beside it")
    # The demo's training helps: every control ends below the untouched model's PPL.
    last = {}
    for r in progressive[1:]:
        if r[1] == "control" and int(r[2]) >= last.get(r[0], (-1, ""))[0]:
            last[r[0]] = (int(r[2]), r[progressive[0].index("news")])
    check(sorted(last) == sorted(MODELS), f"progressive: controls of {sorted(last)}")
    for m, (step, cell) in sorted(last.items()):
        check(cell.endswith(")") and float(cell[cell.rindex("(") + 1:-1]) < 0, f"progressive control {m}: {cell}")
    finetune = read_csv(os.path.join(csvdir, "finetune.csv"))
    delta = finetune[0].index("Δ% vs base")
    controls = {r[0]: float(r[delta]) for r in finetune[1:] if r[2] == "control"}
    check(sorted(controls) == sorted(MODELS), f"finetune: controls of {sorted(controls)}")
    check(all(d < 0 for d in controls.values()), f"finetune: a control above the untouched model {controls}")
    check({r[2].rstrip(" ‡") for r in finetune[1:]} == {"control", "linearized", "two_phase"},
          "finetune: expected control, linearized and two_phase")
    scale = read_csv(os.path.join(csvdir, "cross_scale.csv"))
    families = sorted({r[scale[0].index("family")] for r in scale[1:]})
    check(families == FAMILIES, f"cross_scale: families {families}, expected {FAMILIES}")
    md = open(os.path.join(out, "report", "tables.md")).read()
    check("†" in md or "[" in md, "tables.md has no intervals")
    # The sweep over compound's seed: both settings side by side, paired on the same windows.
    settings = read_csv(os.path.join(csvdir, "settings.csv"))
    col = {h: i for i, h in enumerate(settings[0])}
    pairs = [r for r in settings[1:] if r[col["setting"]] == "compound.seed=1"]
    check(len(pairs) == 2 * len(MODELS) * len(CORPORA), f"settings: {len(pairs)} rows of compound.seed=1")
    check(all(r[col["paired with"]] == "compound.seed=0" and r[col["shared windows"]] == r[col["windows"]]
              for r in pairs), "settings: a seed-1 row not paired with seed 0 on every window")
    check(all(r[col["difference [paired 95% CI]"]].startswith("+0.00 [+0.00, +0.00]")
              for r in pairs if r[col["series"]] == "gated"), "settings: the same gates differ between seeds")
    print(f"{csvdir}: per-layer all-linear costs for {len(MODELS)} models with intervals; {len(gates) - 1} gate rows")


def main():
    out_a, sum_a, out_b, sum_b = sys.argv[1:5]
    a, b = load_summary(sum_a), load_summary(sum_b)
    # Held-out PPL at most half the unigram PPL of the same tokens, every model and corpus.
    check([m["name"] for m in a["models"]] == MODELS, f"models {[m['name'] for m in a['models']]}")
    for m in a["models"]:
        for h in m["heldout"]:
            print(f"{m['name']:7} {h['corpus']:8} held-out PPL {h['ppl']:8.1f}  unigram PPL {h['unigram_ppl']:8.1f}  ratio {h['ratio']:.3f}")
            check(h["ppl"] <= 0.5 * h["unigram_ppl"], f"{m['name']} on {h['corpus']}: PPL above half the unigram PPL")
    check(a["heldout_below_half_unigram"], "summary says a model is above half the unigram PPL")
    # The first demo's rerun continued at least one model from its checkpoint.
    resumed = [m["name"] for m in a["models"] if m.get("resumed_at", 0) > 0]
    check(resumed, "no model resumed from a checkpoint after the interrupt")
    print("resumed from checkpoints:", ", ".join(f"{m['name']} at step {m['resumed_at']}" for m in a["models"] if m.get("resumed_at", 0) > 0))
    # The second demo trained nothing.
    check(all(m["cached"] for m in b["models"]), "the second demo retrained a model")
    for s in (a, b):
        print("phase seconds:", {k: round(v, 1) for k, v in s["seconds"].items()})
    # The interrupted sweep continued: no unit was committed twice.
    for out in (out_a, out_b):
        commits = collections.Counter(e["unit"] for e in journal(out) if e["event"] == "committed")
        check(commits and max(commits.values()) == 1, f"{out}: a unit was committed twice")
        print(f"{out}: {len(commits)} units, each committed once")
    for out in (out_a, out_b):
        check_figures(out)
        check_tables(out)
    # Same tables from both demos.
    csv_a, csv_b = os.path.join(out_a, "report", "csv"), os.path.join(out_b, "report", "csv")
    check(sorted(os.listdir(csv_a)) == sorted(os.listdir(csv_b)), "the two demos wrote different tables")
    for n in sorted(os.listdir(csv_a)):
        check(open(os.path.join(csv_a, n)).read() == open(os.path.join(csv_b, n)).read(), f"{n} differs between the demos")
    print(f"the two demos' {len(os.listdir(csv_a))} tables are identical")
    print("check_demo: OK")


if __name__ == "__main__":
    main()
