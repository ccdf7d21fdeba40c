#!/usr/bin/env bash
# Opens `linsweep report` of a fixture store in headless Chromium (Debian's `chromium`, driven
# by playwright-core from npm, tests/presentation/package.json) and checks it as a reader sees
# it (browser_check.mjs); leaves the screenshots in WORK_DIR/screenshots.
# Usage: browser_test.sh LINSWEEP STORE SOURCE_DIR WORK_DIR
# Exits 77 (skipped) only when Chromium is not installed (scripts/setup.sh installs it).
set -euo pipefail
bin="$1"; store="$2"; src="$3"; work="$4"
if [[ ! -x /usr/bin/chromium ]]; then
  echo "SKIP: /usr/bin/chromium is not installed (apt-get install -y chromium; scripts/setup.sh does it)"
  exit 77
fi
command -v npm >/dev/null || { echo "browser_test: npm is needed for playwright-core (apt-get install -y npm)" >&2; exit 1; }
rm -rf "$work/report" "$work/screenshots"; mkdir -p "$work/node"
# playwright-core at the locked version, in the build tree (never in the sources).
cp "$src/tests/presentation/package.json" "$src/tests/presentation/package-lock.json" "$src/tests/presentation/browser_check.mjs" "$work/node/"
if ! cmp -s "$work/node/package-lock.json" "$work/node/.installed-lock" 2>/dev/null; then
  (cd "$work/node" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) \
    || { echo "browser_test: npm ci failed in $work/node (offline? npm's cache may hold playwright-core)" >&2; exit 1; }
  cp "$work/node/package-lock.json" "$work/node/.installed-lock"
fi
"$bin" report "$store" --out "$work/report" > /dev/null
node "$work/node/browser_check.mjs" "$work/report/index.html" "$work/screenshots" \
  --intervals=fig-fig1_,fig-fig2_,fig-fig3_,fig-fig5_,fig-token_context_,fig-all_linear_ fig-fig2_ fig-fig4_ fig-fig5_
ls "$work/screenshots"
