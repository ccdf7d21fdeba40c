#!/usr/bin/python3
"""The documentation habits docs/architecture.md states, checked on the tree.

Usage: docs_habits_test.py SOURCE_DIR

- README.md is under 90 lines and no line is over 120 characters; details live in docs/.
- Nothing cites a design file outside the repository: the semantics that code comments cite
  are in docs/ (docs/methods.md), so no source, script or doc says "DESIGN §".
- Dated measurements live in docs/benchmarks.md and docs/reliability.md only: no other doc,
  and not the README, carries a date.
Exit 1 with one line per violation.
"""
import os
import re
import sys

SOURCES = (".cpp", ".hpp", ".h", ".py", ".sh", ".cmake", ".md", ".txt", ".yaml")
SKIP_DIRS = {".git", "build", "build-asan", "build-fuzz", "runs", "node_modules"}
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
DATED_DOCS = {"docs/benchmarks.md", "docs/reliability.md"}


def readme_problems(src):
    with open(os.path.join(src, "README.md"), encoding="utf-8") as f:
        lines = f.read().splitlines()
    problems = [f"README.md: {len(lines)} lines (limit 89)"] if len(lines) >= 90 else []
    problems += [f"README.md:{n}: {len(line)} characters (limit 120)"
                 for n, line in enumerate(lines, 1) if len(line) > 120]
    return problems


def tree_problems(src):
    problems = []
    for dirpath, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith("build")]
        for name in files:
            if not name.endswith(SOURCES) or name == os.path.basename(__file__):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, src)
            with open(path, encoding="utf-8", errors="replace") as f:
                for n, line in enumerate(f, 1):
                    if "DESIGN §" in line:
                        problems.append(f"{rel}:{n}: cites a design file outside the repository")
                    is_doc = rel == "README.md" or rel.startswith("docs/")
                    if is_doc and rel not in DATED_DOCS and DATE.search(line):
                        problems.append(f"{rel}:{n}: a date outside docs/benchmarks.md and docs/reliability.md")
    return problems


def main():
    problems = readme_problems(sys.argv[1]) + tree_problems(sys.argv[1])
    print("\n".join(problems + [f"docs_habits: {len(problems)} violations"]))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
