"""Every control of the demo's training (finetune's and progressive's) ends below the untouched
model's eval PPL, in each store given; every model of the spec and every variant ran and was
evaluated.
Usage: check_demo_training.py LINSWEEP_BINARY SPEC STORE..."""
import json
import subprocess
import sys

import yaml


def last_rows(binary, store, table):
    rows = json.loads(subprocess.run([binary, "query", store, table, "--json"], check=True,
                                     capture_output=True, text=True).stdout)
    last = {}
    for r in rows:
        key = (r["model"], r["corpus"], r["variant"])
        if key not in last or r["step"] > last[key]["step"]:
            last[key] = r
    return last


def main():
    binary, spec, stores = sys.argv[1], sys.argv[2], sys.argv[3:]
    small = {m["name"] for m in yaml.safe_load(open(spec))["models"]}  # the demo's *-s models
    problems = []
    for store in stores:
        for table, variants in (("finetune", {"control", "linearized", "two_phase"}),
                                ("progressive", {"control", "progressive"})):
            last = last_rows(binary, store, table)
            models = {m for m, _, _ in last}
            if models != small:
                problems.append(f"{store} {table}: models {sorted(models)}, expected {sorted(small)}")
            for m in sorted(models):
                got = {v for mm, _, v in last if mm == m}
                if got != variants:
                    problems.append(f"{store} {table} {m}: variants {sorted(got)}, expected {sorted(variants)}")
            for (m, c, v), r in sorted(last.items()):
                print(f"{store} {table:11} {m:8} {c:7} {v:11} step {r['step']:3} PPL {r['ppl']:8.3f} "
                      f"base {r['ppl_base']:8.3f} Δ% {r['delta_pct']:+.2f}")
                if v == "control" and not r["ppl"] < r["ppl_base"]:
                    problems.append(f"{store} {table} {m}/{c}: the control ends at PPL {r['ppl']:.3f}, "
                                    f"not below the untouched {r['ppl_base']:.3f}")
    for p in problems:
        print("FAIL:", p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
