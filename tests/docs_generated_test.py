#!/usr/bin/python3
"""The docs' generated blocks equal what the binary prints, and every experiment, table and spec
section has one.

Usage: docs_generated_test.py SOURCE_DIR LINSWEEP [--fix]

A block in docs/**/*.md is
    <!-- linsweep ARGS -->
    ...
    <!-- end -->
and its text must be exactly `LINSWEEP ARGS`'s output (`experiments --markdown NAME` for a
parameter table, `catalogue --markdown TABLE` for a table's columns). Beyond that:
- every experiment the binary registers has its page docs/experiments/<name>.md with its
  parameter block (the list docs/spec.md points to);
- every table of the catalogue has a column block in some page;
- docs/spec.md has the blocks of the `runtime` and `resources` sections.
--fix rewrites every block with the binary's output instead of checking (the code is the one
home of these facts; the docs show them). Exit 1 with one line per problem.
"""
import glob
import json
import os
import re
import subprocess
import sys

BLOCK = re.compile(r"(<!-- linsweep ([^>]*?) -->\n)(.*?)(<!-- end -->)", re.S)


def output(binary, args):
    r = subprocess.run([binary] + args.split(), capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()
    return r.stdout, ""


def main():
    src, binary = sys.argv[1], sys.argv[2]
    fix = "--fix" in sys.argv[3:]
    problems, blocks = [], {}
    for path in sorted(glob.glob(os.path.join(src, "docs", "**", "*.md"), recursive=True)):
        rel = os.path.relpath(path, src)
        text = open(path, encoding="utf-8").read()

        def check(m):
            args = m.group(2).strip()
            blocks.setdefault(args, []).append(rel)
            out, err = output(binary, args)
            if out is None:
                problems.append(f"{rel}: `linsweep {args}` failed: {err}")
                return m.group(0)
            if m.group(3) != out:
                if not fix:
                    problems.append(f"{rel}: the block of `linsweep {args}` differs from its output "
                                    f"(tests/docs_generated_test.py SRC BIN --fix rewrites it)")
                return m.group(1) + out + m.group(4)
            return m.group(0)

        new = BLOCK.sub(check, text)
        if fix and new != text:
            open(path, "w", encoding="utf-8").write(new)
    listed = json.loads(subprocess.run([binary, "experiments", "--json"], capture_output=True, text=True,
                                       check=True).stdout)
    for e in listed["experiments"]:
        page = os.path.join("docs", "experiments", e["name"] + ".md")
        if not os.path.isfile(os.path.join(src, page)):
            problems.append(f"{page}: missing (every experiment has its page; scripts/new_experiment.sh writes one)")
        elif page not in blocks.get(f"experiments --markdown {e['name']}", []):
            problems.append(f"{page}: no block `<!-- linsweep experiments --markdown {e['name']} -->`")
    for s in listed["sections"]:
        if "docs/spec.md" not in blocks.get(f"experiments --markdown {s['name']}", []):
            problems.append(f"docs/spec.md: no block `<!-- linsweep experiments --markdown {s['name']} -->`")
    tables = json.loads(subprocess.run([binary, "catalogue", "--json"], capture_output=True, text=True,
                                       check=True).stdout)
    for t in tables:
        if f"catalogue --markdown {t['name']}" not in blocks:
            problems.append(f"docs: table '{t['name']}' has no block `<!-- linsweep catalogue --markdown {t['name']} -->`")
    for p in problems:
        print(p)
    print(f"docs_generated: {sum(len(v) for v in blocks.values())} blocks, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
