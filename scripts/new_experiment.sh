#!/usr/bin/env bash
# Writes a new experiment from the template: experiments/NAME/NAME.cpp (parameters, units, one
# table, a report section, all registered from that one file) and docs/experiments/NAME.md (its
# page: parameters and table, generated blocks that tests/docs_generated_test.py holds equal to
# the code). Nothing else needs editing: after a rebuild, `linsweep experiments` lists it, a spec
# with `NAME: {}` plans and runs it, and `query`, `catalogue`, `tables`, the report and the
# Python reader show its table (docs/architecture.md, "Where does my change go").
# Usage: scripts/new_experiment.sh NAME   (NAME: lower-case letters, digits and _, starting with a
# letter; not an experiment, table or unit kind that exists)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ $# -ne 1 ]]; then
  echo "usage: scripts/new_experiment.sh NAME" >&2
  exit 2
fi
name=$1
if [[ ! $name =~ ^[a-z][a-z0-9_]{0,39}$ ]]; then
  echo "new_experiment: '$name': a name is 1 to 40 lower-case letters, digits and _, starting with a letter" >&2
  exit 2
fi
if [[ -e "$root/experiments/$name" || -e "$root/docs/experiments/$name.md" ]]; then
  echo "new_experiment: '$name' exists already (experiments/$name or docs/experiments/$name.md)" >&2
  exit 2
fi
# A name some file of experiments/ registers (an experiment, a table, a unit kind, a provider).
if grep -rqE "(\(|\{|^ *)\"$name\"," "$root/experiments"; then
  echo "new_experiment: '$name' is already an experiment, table or unit kind" >&2
  exit 2
fi
# NAME in CamelCase for the type names: token_rank -> TokenRank.
camel=$(sed -E 's/(^|_)([a-z0-9])/\U\2/g' <<<"$name")
mkdir -p "$root/experiments/$name" "$root/docs/experiments"
sed -e "s/@NAME@/$name/g" -e "s/@Name@/$camel/g" "$root/scripts/templates/experiment.cpp.in" >"$root/experiments/$name/$name.cpp"
sed -e "s/@NAME@/$name/g" -e "s/@Name@/$camel/g" "$root/scripts/templates/experiment.md.in" >"$root/docs/experiments/$name.md"
echo "new_experiment: wrote experiments/$name/$name.cpp and docs/experiments/$name.md"
echo "  rebuild (scripts/build.sh), then: build/linsweep experiments; a spec with 'experiments: {$name: {}}'"
