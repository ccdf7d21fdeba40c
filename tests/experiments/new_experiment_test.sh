#!/usr/bin/env bash
# An experiment added from the template touches nothing else (docs/architecture.md, "Where does
# my change go"). In a copy of the checkout (its files as git sees them, committed into a fresh
# repository): scripts/new_experiment.sh NAME; `git status` shows only experiments/NAME/ and
# docs/experiments/NAME.md; the copy builds; `linsweep experiments` lists it; a spec with
# `NAME: {}` plans and runs it; `query`, `catalogue`, `tables`, the report and the Python reader
# show its table; the docs' generated blocks hold.
# NAME sorts after every experiment folder, so that the unity batches before it are the same as
# the checkout's and the build takes them from the compiler cache.
# Usage: new_experiment_test.sh SOURCE_DIR WORK_DIR
set -euo pipefail
src=$(cd "$1" && pwd)
work=$2
name=zz_template_check
rm -rf "$work"
mkdir -p "$work/tree"
fail() { echo "new_experiment_test: FAIL: $*" >&2; exit 1; }

# The checkout's files as git sees them (tracked and untracked, not ignored), in a repository of
# their own so that `git status` shows what the script adds.
(cd "$src" && git ls-files -z --cached --others --exclude-standard |
  tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$work/tree"
tree="$work/tree"
git -C "$tree" init -q
git -C "$tree" -c user.name=t -c user.email=t@t add -A
git -C "$tree" -c user.name=t -c user.email=t@t commit -qm base

"$tree/scripts/new_experiment.sh" "$name"
status=$(git -C "$tree" status --porcelain --untracked-files=all | sort)
expected=$(printf '?? docs/experiments/%s.md\n?? experiments/%s/%s.cpp\n' "$name" "$name" "$name")
[[ "$status" == "$expected" ]] || fail "git status after new_experiment.sh:
$status
expected:
$expected"
"$tree/scripts/new_experiment.sh" "$name" 2>/dev/null && fail "a second new_experiment.sh $name was not refused"
"$tree/scripts/new_experiment.sh" "gate" 2>/dev/null && fail "new_experiment.sh gate (an experiment) was not refused"

# Build what a user runs: linsweep and linsweep-full (the catalogue comes with them). The build
# directory sits in the copy as build/ does in a checkout, so that every compile command reads as
# the checkout's and the compiler cache has the objects of every unchanged batch.
build="$tree/build"
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
cmake -S "$tree" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF >"$work/configure.log" 2>&1 ||
  fail "configure: $(tail -5 "$work/configure.log")"
cmake --build "$build" --target linsweep --parallel "$(nproc)" >"$work/build.log" 2>&1 || fail "build: $(grep -m5 -A3 error "$work/build.log")"
bin="$build/linsweep"

# Each listing is read whole before it is searched: grep -q leaving early would end the writer
# with SIGPIPE, which pipefail reports as a failure.
listing=$("$bin" experiments)
grep -q "^$name: " <<<"$listing" || fail "linsweep experiments does not list $name"
catalogue=$("$bin" catalogue "$name" --json)
grep -q '"keys": *\["model", *"corpus"\]\|"keys":\["model","corpus"\]' <<<"$catalogue" ||
  fail "linsweep catalogue $name: $("$bin" catalogue "$name" --json)"
cat >"$work/spec.yaml" <<YAML
store: $work/store
context: 32
models:
  - {name: tiny-gpt2, path: $src/tests/data/models/tiny-gpt2}
  - {name: tiny-neox, path: $src/tests/data/models/tiny-neox}
corpora:
  - {name: stream-a, path: $src/tests/data/models/tiny-gpt2.tokens.npy, format: npy}
splits:
  eval: {start: 0, tokens: 512}
experiments:
  $name: {}
YAML
plan=$("$bin" plan "$work/spec.yaml")
grep -q "$name" <<<"$plan" || fail "plan lists no $name unit"
LINSWEEP_THREADS=1 "$bin" run "$work/spec.yaml" --quiet || fail "run exited $?"
rows=$("$bin" query "$work/store" "$name" --format csv)
[[ $(wc -l <<<"$rows") -eq 3 ]] || fail "query $name: $rows"
"$bin" tables "$work/store" --out "$work/tables" --quiet >/dev/null
grep -q "$name" "$work/tables/tables.md" || fail "tables.md has no $name table"
"$bin" report "$work/store" --out "$work/report" >/dev/null
grep -q "$name" "$work/report/index.html" || fail "the report shows no $name table"
PYTHONPATH="$tree/python" /usr/bin/python3 - "$work/store" "$name" <<'PY' || fail "the Python reader"
import sys
from linsweep_store import open_store
df = open_store(sys.argv[1]).table(sys.argv[2])
assert len(df) == 2 and set(df["model"]) == {"tiny-gpt2", "tiny-neox"}, df
assert (df["ppl"] > 1).all() and (df["tokens"] == 8 * 31).all(), df
PY
/usr/bin/python3 "$tree/tests/docs_generated_test.py" "$tree" "$bin" >"$work/docs.log" || fail "docs: $(cat "$work/docs.log")"
echo "new_experiment_test: $name written, built, planned, run and read back; git status showed only its two files"
