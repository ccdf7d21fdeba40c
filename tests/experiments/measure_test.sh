#!/usr/bin/env bash
# Runs examples/fixture_measure.yaml (every measurement experiment, three models, two corpora)
# with -n 1 and mpirun -n 3: the stores must hold the same rows (compare_stores.py) and
# `linsweep tables` must print the same summaries. Then -n 3 with worker groups of 2 ranks
# (capture shards in two parts, windows sharded, sums all-reduced) must agree within
# compare_stores.py's tolerances. A copy of the -n 1 store then runs the routing lists keyed by
# the predicted token (the diagnostic: which tokens are hurt) and the token features keyed by
# the input token, the lists with the absolute threshold (n1-keys). Last, `speed` runs on n1 and every
# compound configuration is exported (`linsweep export`), both checked by check_routed.py.
# Usage: measure_test.sh LINSWEEP_BINARY SOURCE_DIR WORK_DIR
set -euo pipefail
bin="$1"; src="$2"; work="$3"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
export LINSWEEP_THREADS=1   # same threads in every rank count: bitwise-equal forwards
rm -rf "$work"; mkdir -p "$work"
spec="$src/examples/fixture_measure.yaml"
"$bin" run "$spec" --store "$work/n1" --quiet
mpirun -n 3 "$bin" run "$spec" --store "$work/n3" --quiet
/usr/bin/python3 "$src/tests/orchestrator/compare_stores.py" "$work/n1" "$work/n3" --exact
sed 's/ranks_per_group: 1/ranks_per_group: 2/' "$spec" | sed "s|\.\./tests/|$src/tests/|g" > "$work/rpg2.yaml"
grep -q "ranks_per_group: 2" "$work/rpg2.yaml"
mpirun -n 3 "$bin" run "$work/rpg2.yaml" --store "$work/n3g2" --quiet
/usr/bin/python3 "$src/tests/orchestrator/compare_stores.py" "$work/n1" "$work/n3g2"
[ -n "$(ls "$work"/n3g2/activations/*/gate/layer0.part1.h5 2>/dev/null | head -1)" ]   # two parts were written
"$bin" tables "$work/n1" --out "$work/tables-n1" > /dev/null
"$bin" tables "$work/n3" --out "$work/tables-n3" > /dev/null
diff "$work/tables-n1/tables.md" "$work/tables-n3/tables.md"
for kind in capture gate token_context token_features clusters nofly compound; do
  n=$(ls "$work/n1/units" | grep -c "^$kind-" || true)
  echo "$kind: $n units"
  [ "$n" -gt 0 ]
done
echo "-n 1 and -n 3: same rows in every table, identical tables.md ($(grep -c '^## ' "$work/tables-n1/tables.md") summaries)"
# The routing lists' and token features' other key (nofly: predicted; token_features: input), and
# the lists' other threshold, on a copy:
# only the nofly and token_features units run again (check_references.py checks both stores).
cp -a "$work/n1" "$work/n1-keys"
"$bin" run "$spec" --store "$work/n1-keys" --quiet +experiments.nofly.key=predicted experiments.nofly.top=0 \
  +experiments.token_features.key=input
new_units=$(comm -13 <(ls "$work/n1/units") <(ls "$work/n1-keys/units"))
echo "$new_units" | grep -q "^nofly-"
echo "$new_units" | grep -q "^token_features-"
if echo "$new_units" | grep -v "^nofly-\|^token_features-"; then
  echo "FAIL: more than nofly and token_features ran again" >&2; exit 1
fi
# A routing list that cannot be made (no token seen min_count times) is flagged with its reason
# in the nofly table, in `linsweep tables` and in `linsweep status`, on another copy.
cp -a "$work/n1" "$work/n1-empty"
"$bin" run "$spec" --store "$work/n1-empty" --quiet experiments.nofly.min_count=100000
reason="empty list: no source token seen min_count = 100000 times"
"$bin" status "$work/n1-empty" | grep -F "flagged: nofly" | grep -qF "$reason"
"$bin" status "$work/n1-empty" --json | /usr/bin/python3 -c "
import json, sys
f = json.load(sys.stdin)['flagged']
assert any(x['table'] == 'nofly' and x['flag'].startswith('$reason') for x in f), f"
"$bin" tables "$work/n1-empty" --out "$work/tables-empty" > /dev/null
grep -F "Routing lists" -A8 "$work/tables-empty/tables.md" | grep -qF "$reason"
# The fixture's lists are measurements, but each finds fewer than 10 listed tokens on its
# target: the r over them is flagged with its n (status, and ‡ in tables.md), and nothing else.
flags=$("$bin" status "$work/n1" | grep -F "flagged: nofly" || true)
[ -n "$flags" ] || { echo "FAIL: the fixture's r over a handful of found tokens is not flagged" >&2; exit 1; }
if echo "$flags" | grep -v "r over found: only [0-9] found, under the minimum n = 10$"; then
  echo "FAIL: the fixture's lists are flagged for more than a small n" >&2; exit 1
fi
grep -F "Routing lists (No-Fly), deployable" -A8 "$work/tables-n1/tables.md" | grep -q ", n = [0-9] ‡"
echo "an empty routing list is flagged in the table, tables.md and status; an r over few tokens with its n"
# speed times forwards, so its rows differ from run to run: it runs after the comparisons, on
# n1 alone, with two repeats, and with compound over layers 0 and 1 (so that each layer is also
# timed alone; only compound and speed units run). Then every compound configuration is
# exported; both are checked against the compound and gate units (check_routed.py).
ls "$work/n1/units" > "$work/units-before-speed"
"$bin" run "$spec" --store "$work/n1" --quiet 'experiments.compound.layers=[0, 1]' '+experiments.speed={repeats: 2, decode_max_seconds: 2}'
new_units=$(comm -13 "$work/units-before-speed" <(ls "$work/n1/units"))
echo "$new_units" | grep -q "^speed-"
if echo "$new_units" | grep -v "^speed-\|^compound-"; then echo "FAIL: more than compound and speed ran" >&2; exit 1; fi
rm -rf "$work/exports"
"$bin" query "$work/n1" compound --columns model,corpus --format tsv | tail -n +2 |
  while IFS=$'\t' read -r model corpus; do
    "$bin" export "$work/n1" --model "$model" --corpus "$corpus" --out "$work/exports/$model.$corpus" > /dev/null
  done
/usr/bin/python3 "$src/tests/experiments/check_routed.py" "$work/n1" "$work/exports"
