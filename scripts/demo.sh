#!/usr/bin/env bash
# Sets everything up, builds, and runs the main job. Until the embedded demo (six models
# trained on the Brown corpus) lands, the main job is the fixture sweep in
# examples/fixture_measure.yaml: surrogate fits, all-linear costs and every measurement
# experiment (gates, token vs context, routing lists, clusters, compound) for three tiny
# models, every layer, two corpora, then the summary tables and figures.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
bin="${LINSWEEP_BUILD_DIR:-$root/build}/linsweep"
out="${LINSWEEP_OUT:-$root/runs/fixture-measure}"
start=$(date +%s)
"$bin" run "$root/examples/fixture_measure.yaml" --store "$out"
"$bin" tables "$out"
"$bin" plot "$out" --out "$out/figures" >/dev/null
echo
echo "done in $(( $(date +%s) - start )) s. Store: $out"
echo "  tables:  $out/report/tables.md (.tex, csv/)   figures: $out/figures/*.svg"
echo "  query:   $bin query $out all_linear --sort delta_pct"
echo "           $bin query $out gates --where selected=1 --columns model,corpus,layer,gate,auc,pct_linear,delta_pct"
