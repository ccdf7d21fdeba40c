#!/usr/bin/python3
"""Every citation of a document in code names a file and a section that exist.

Usage: doc_citations_test.py SOURCE_DIR

Code cites the docs as `docs/methods.md, "Gates"` (or `methods.md "Gates"`, or a Markdown link
`slurm.md#worker-groups-and-nodes`). A citation resolves when the file exists under docs/ (or
at the path given) and has a heading whose text, without backticks, is the cited section or
starts with it followed by a space, a colon or a parenthesis ("Sweeps" cites "## Sweeps:
settings side by side"); an anchor resolves when some heading's GitHub slug equals it.
Exit 1 with one line per broken citation.
"""
import os
import re
import subprocess
import sys

CITATION = re.compile(r'\b((?:docs/)?[a-z_0-9]+\.md),? \(?"([A-Z][^"]*)"')
ANCHOR = re.compile(r'\b((?:docs/)?[a-z_0-9]+\.md)#([a-z0-9-]+)')
CODE = (".cpp", ".hpp", ".py", ".sh", ".cmake", ".txt", ".yaml", ".in")


def headings(path):
    out = []
    in_code = False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and line.startswith("#"):
            out.append(line.lstrip("#").strip().replace("`", ""))
    return out


def slug(heading):
    s = re.sub(r"[^\w\- ]", "", heading.lower().replace("`", ""))
    return s.replace(" ", "-")


def doc_path(src, cited):
    return os.path.join(src, cited if cited.startswith("docs/") else os.path.join("docs", cited))


def section_found(titles, section):
    return any(t == section or (t.startswith(section) and t[len(section)] in " :(,") for t in titles)


def main():
    src = sys.argv[1]
    files = subprocess.run(["git", "-C", src, "ls-files", "--cached", "--others", "--exclude-standard"],
                           capture_output=True, text=True, check=True).stdout.split()
    problems, cited = [], 0
    for rel in files:
        if not rel.endswith(CODE) or rel.startswith(("docs/", "tests/data/", "tests/fuzz/seeds/")):
            continue
        text = open(os.path.join(src, rel), encoding="utf-8", errors="replace").read()
        for n, line in enumerate(text.splitlines(), 1):
            for doc, section in CITATION.findall(line):
                cited += 1
                path = doc_path(src, doc)
                if not os.path.isfile(path):
                    problems.append(f"{rel}:{n}: cites {doc}, which does not exist")
                elif not section_found(headings(path), section):
                    problems.append(f'{rel}:{n}: cites {doc}, "{section}": no such section')
            for doc, anchor in ANCHOR.findall(line):
                cited += 1
                path = doc_path(src, doc)
                if not os.path.isfile(path) or anchor not in {slug(h) for h in headings(path)}:
                    problems.append(f"{rel}:{n}: cites {doc}#{anchor}: no such file or heading")
    for p in problems:
        print(p)
    print(f"doc_citations: {cited} citations, {len(problems)} broken")
    return 1 if problems or cited == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
