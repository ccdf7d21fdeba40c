#!/usr/bin/env bash
# The demo's training recipe improves the models it trains: examples/demo.yaml's finetune and
# progressive blocks, as written, on the demo's three small models (one per family, each its own
# pretraining seed) pretrained by `linsweep demo` with their own recipes, then again with
# another batch-order seed, launched as the demo launches its sweep with `--workers 2`
# (demo/demo.cpp: two worker ranks and a dispatching one, one torch thread each).
# check_demo_training.py asserts that every control ends below the untouched model's eval PPL.
# Usage: demo_training_test.sh LINSWEEP_BINARY SOURCE_DIR WORK_DIR
set -euo pipefail
bin="$1"; src="$2"; work="$3"
rm -rf "$work"; mkdir -p "$work"
mapfile -t data < <("$src/scripts/fetch_demo_data.sh")
/usr/bin/python3 - "$src/examples/demo.yaml" "$work/spec.yaml" <<'PY'
import json, sys, yaml
spec = yaml.safe_load(open(sys.argv[1]))
spec["models"] = [m for m in spec["models"] if m["name"].endswith("-s")]
spec["experiments"] = {k: spec["experiments"][k] for k in ("finetune", "progressive")}
spec.pop("sweep", None)  # it sweeps compound, left out here
open(sys.argv[2], "w").write(json.dumps(spec, indent=1))
PY
common=(--cache "$work/cache" --brown "${data[0]}" --encoder "${data[1]}" --workers 2 --quiet)
"$bin" demo "${common[@]}" --spec "$work/spec.yaml" --out "$work/seed0"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
mpirun -n 3 "$bin" run "$work/cache/demo/demo.yaml" --store "$work/seed1/store" --threads 1 --quiet \
  +experiments.finetune.seed=1 +experiments.progressive.seed=1
/usr/bin/python3 "$src/tests/orchestrator/check_demo_training.py" "$bin" "$work/seed0/store" "$work/seed1/store"
