#!/usr/bin/env bash
# The demo's training recipe improves the models it trains: examples/demo.yaml's finetune and
# progressive blocks, as written, on the demo's four small models (one per family, each its own
# pretraining seed) pretrained by `linsweep demo` with their own recipes, then again with
# another batch-order seed: the demo run a second time, which reuses its pretrained models.
# check_demo_training.py asserts that every control ends below the untouched model's eval PPL.
# Usage: demo_training_test.sh LINSWEEP_BINARY SOURCE_DIR WORK_DIR
set -euo pipefail
bin="$1"; src="$2"; work="$3"
rm -rf "$work"; mkdir -p "$work"
mapfile -t data < <("$src/scripts/fetch_demo_data.sh")
/usr/bin/python3 - "$src/examples/demo.yaml" "$work" <<'PY'
import json, sys, yaml
spec = yaml.safe_load(open(sys.argv[1]))
spec["models"] = [m for m in spec["models"] if m["name"].endswith("-s")]
spec["experiments"] = {k: spec["experiments"][k] for k in ("finetune", "progressive")}
spec.pop("sweep", None)  # it sweeps compound, left out here
for seed in (0, 1):
    for k in ("finetune", "progressive"):
        spec["experiments"][k]["seed"] = seed
    open(f"{sys.argv[2]}/spec{seed}.yaml", "w").write(json.dumps(spec, indent=1))
PY
common=(--cache "$work/cache" --brown "${data[0]}" --encoder "${data[1]}" --workers 2 --quiet)
for seed in 0 1; do
  "$bin" demo "${common[@]}" --spec "$work/spec$seed.yaml" --out "$work/seed$seed"
done
/usr/bin/python3 "$src/tests/orchestrator/check_demo_training.py" "$bin" "$work/spec0.yaml" "$work/seed0/store" \
  "$work/seed1/store"
