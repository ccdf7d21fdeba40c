#!/usr/bin/python3
"""Tests build against Catch2 2 (Debian 12) and 3 (Debian 13), but only one of them is on a
given machine. tests/support/catch.hpp provides Catch2 3's names for both; this checks that
every test spells only those, so that a name only Catch2 2 has (e.g. Catch::StartsWith) fails
here rather than on the other release.

Usage: catch2_names_test.py SOURCE_DIR
Exit 1 with one line per use of another name in the Catch namespace.
"""
import os
import re
import sys

ALLOWED = {"Catch::Approx", "Catch::Session"}  # and everything under Catch::Matchers::
NAME = re.compile(r"\bCatch::(?!Matchers::)[A-Za-z_]+")


def uses(source_dir):
    """(file:line, name) for every Catch name outside ALLOWED in the tests' C++ sources."""
    tests = os.path.join(source_dir, "tests")
    for root, _, files in os.walk(tests):
        for name in sorted(files):
            if not name.endswith((".cpp", ".hpp")) or name == "catch.hpp":
                continue
            path = os.path.join(root, name)
            with open(path, encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    for m in NAME.finditer(line):
                        if m.group(0) not in ALLOWED:
                            yield f"{os.path.relpath(path, source_dir)}:{n}", m.group(0)


bad = [f"{where}: {name} is not in tests/support/catch.hpp's names (use Catch::Matchers::...)"
       for where, name in uses(sys.argv[1])]
print("\n".join(bad + [f"catch2 names: {len(bad)} uses outside tests/support/catch.hpp's names"]))
sys.exit(1 if bad else 0)
