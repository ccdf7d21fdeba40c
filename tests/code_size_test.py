#!/usr/bin/python3
"""No source file over 500 lines and no function over 100 lines in the rooms a newcomer changes
most: experiments/, orchestrator/, cli/ and demo/ (docs/architecture.md, "Conventions").

Usage: code_size_test.py SOURCE_DIR [--list N]

A function's length runs from the line of its opening brace to the line of its closing brace.
Functions are found by their braces after comments, string and character literals are blanked: a
`{` at namespace or class scope that follows `)` (with qualifiers such as const, noexcept,
override, a trailing return type or a constructor's initializer list) opens a function; lambdas
and blocks inside a function count toward it. --list N prints every function longer than N
lines instead of checking.
Exit 1 with one line per file or function over its limit.
"""
import os
import re
import sys

ROOMS = ("experiments", "orchestrator", "cli", "demo")
MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 100
SCOPE = re.compile(r"^(template\s*<.*>\s*)?(namespace|class|struct|enum|union|extern)\b")
FUNCTION = re.compile(r"\)\s*(const|noexcept|override|final|mutable|&|&&|\s|->\s*[\w:<>,\s\*&]+)*$")
INITIALIZERS = re.compile(r"\)\s*:\s*\w")


def blank(src):
    """`src` with comments and literals replaced by spaces (newlines kept)."""
    out, i, n = [], 0, len(src)
    while i < n:
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif src.startswith('R"', i) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', src[i:])
            j = src.find(")" + m.group(1) + '"', i) + len(m.group(1)) + 2 if m else i + 2
        elif src[i] in "\"'":
            j = i + 1
            while j < n and src[j] != src[i]:
                j += 2 if src[j] == "\\" else 1
            j += 1
        else:
            out.append(src[i])
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", src[i:j]))
        i = j
    return "".join(out)


def functions(text):
    """(first line, length, head) of every function defined in `text`."""
    s = blank(text)
    stack, found, last = [], [], 0
    for m in re.finditer(r"[{};]", s):
        p = m.start()
        if m.group(0) == "{":
            head = " ".join(s[last:p].split())
            kind = "block"
            if not any(k == "fn" for k, _, _ in stack):
                if head == "" or SCOPE.match(head):
                    kind = "scope"
                elif FUNCTION.search(head) or INITIALIZERS.search(head):
                    kind = "fn"
            stack.append((kind, s.count("\n", 0, p) + 1, head[-70:]))
        elif m.group(0) == "}" and stack:
            kind, first, head = stack.pop()
            if kind == "fn":
                found.append((first, s.count("\n", 0, p) + 1 - first + 1, head))
        last = p + 1
    return found


def sources(src):
    for room in ROOMS:
        for dirpath, _, names in os.walk(os.path.join(src, room)):
            for name in sorted(names):
                if name.endswith((".cpp", ".hpp")):
                    path = os.path.join(dirpath, name)
                    yield os.path.relpath(path, src), open(path, encoding="utf-8").read()


def main():
    src = sys.argv[1]
    if len(sys.argv) == 4 and sys.argv[2] == "--list":
        for rel, text in sources(src):
            for first, length, head in functions(text):
                if length > int(sys.argv[3]):
                    print(f"{length:5d} {rel}:{first} {head}")
        return 0
    problems, files, fns = [], 0, 0
    for rel, text in sources(src):
        files += 1
        lines = text.count("\n")
        if lines > MAX_FILE_LINES:
            problems.append(f"{rel}: {lines} lines (at most {MAX_FILE_LINES})")
        for first, length, head in functions(text):
            fns += 1
            if length > MAX_FUNCTION_LINES:
                problems.append(f"{rel}:{first}: a function of {length} lines (at most {MAX_FUNCTION_LINES}): {head}")
    for p in problems:
        print(p)
    print(f"code_size: {files} files, {fns} functions, {len(problems)} over the limits")
    return 1 if problems or fns < 100 else 0


if __name__ == "__main__":
    sys.exit(main())
