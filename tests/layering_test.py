#!/usr/bin/python3
"""The architecture's rules, checked on every source file (docs/architecture.md, "Layers").

Usage: layering_test.py SOURCE_DIR LINSWEEP

- Dependencies point down: each room includes only the rooms below it.
- Only engine/ and experiments/ include LibTorch (ATen, c10, torch); only storage/ includes
  HDF5; only orchestrator/run/ and engine/comm/ include MPI (and NCCL).
- No file outside experiments/ (and tests/, the demo) names an experiment's table by string in
  storage/, presentation/ or the plan and spec code; the tables come from `LINSWEEP catalogue`.
- No code outside engine/model/ names an architecture (a registered model_type, read from
  engine/model/*_config.cpp and engine/model/arch/*.cpp) by string: everything else asks the
  architecture's record. The demo, which names the architectures it trains, is data.
- No hand-kept list of tables or table keys anywhere but the experiments that declare the
  tables: a literal list, tuple, set or braced initializer of five or more table names (most
  of its strings), or a dict that gives three or more tables a list of column names, in any
  source, script or test. They read `linsweep catalogue --json` or a stored table's `keys`
  attribute instead.
Exit 1 with one line per violation.
"""
import json
import os
import re
import subprocess
import sys

# room -> rooms it may include (besides itself and the standard library)
ALLOWED = {
    "common": set(),
    "storage": {"common"},
    "presentation": {"common", "storage"},
    "slurm": {"common"},
    "engine/comm": {"common"},
    "engine": {"common", "engine"},
    "experiments": {"common", "storage", "presentation", "engine"},
    "orchestrator": {"common", "storage", "presentation", "engine", "experiments", "slurm"},
    "demo": {"common", "storage", "presentation", "engine", "experiments", "orchestrator"},
    "cli": {"common", "storage", "presentation", "engine", "experiments", "slurm", "orchestrator", "demo"},
}
TORCH = re.compile(r'#include\s*[<"](ATen|c10|torch)/')
HDF5 = re.compile(r'#include\s*[<"](hdf5|H5[A-Za-z]*)\.h')
MPI = re.compile(r'#include\s*[<"](mpi|nccl)\.h')
LOCAL = re.compile(r'#include\s*"([a-z_]+)/')
MPI_ROOMS = ("orchestrator/run/", "engine/comm/")
# Files that name experiments whose names are also tables' names, not as tables: the fuzzer's
# stand-ins for the registered experiments.
NOT_TABLE_LISTS = {"tests/fuzz/stand_in_experiments.cpp"}


def architecture_names(src):
    """The model_type strings the architecture files register."""
    names = set()
    model = os.path.join(src, "engine", "model")
    for folder in (model, os.path.join(model, "arch")):
        for name in os.listdir(folder):
            if name.endswith(".cpp"):
                text = open(os.path.join(folder, name), encoding="utf-8").read()
                names |= set(re.findall(r'(?:a\.name = |decoder_variant\()"([a-z0-9_]+)"', text))
    return names


def room_of(rel):
    return "engine/comm" if rel.startswith("engine/comm/") else rel.split("/")[0]


def include_problems(rel, own, text, archs, tables):
    problems = []
    for n, line in enumerate(text.splitlines(), 1):
        where = f"{rel}:{n}"
        if TORCH.search(line) and own not in ("engine", "experiments"):
            problems.append(f"{where}: includes LibTorch outside engine/ and experiments/")
        if HDF5.search(line) and own != "storage":
            problems.append(f"{where}: includes HDF5 outside storage/")
        if MPI.search(line) and not rel.startswith(MPI_ROOMS):
            problems.append(f"{where}: includes MPI outside orchestrator/run/ and engine/comm/")
        m = LOCAL.search(line)
        if m:
            target = "engine/comm" if line.split('"')[1].startswith("engine/comm/") else m.group(1)
            allowed = ALLOWED[own] | ({"engine/comm"} if "engine" in ALLOWED[own] | {own} else set())
            if target != own and target not in allowed and target in ALLOWED:
                problems.append(f"{where}: {own}/ includes {target}/ (allowed: {sorted(ALLOWED[own]) or 'nothing'})")
    code = re.sub(r"//[^\n]*", "", text)  # comments may give examples
    if not rel.startswith("engine/model/") and own != "demo":
        for arch in archs:
            if '"' + arch + '"' in code:
                problems.append(f"{rel}: names the architecture '{arch}' (ask its Architecture record)")
    if own in ("storage", "presentation") or rel.startswith(("orchestrator/plan/", "orchestrator/spec/")):
        for table in tables:
            if re.search(r'"' + table + r'"', code):
                problems.append(f"{rel}: names the experiment table '{table}'")
    return problems


def blank_comments(text, path):
    if path.endswith((".py", ".sh", ".txt", ".cmake")):
        return re.sub(r"(^|\s)#[^\n]*", r"\1", text)
    return re.sub(r"//[^\n]*", "", text)


def table_lists(rel, text, tables):
    """Literal collections in `text` that name five or more tables, or dicts keyed by three or more."""
    names = "|".join(re.escape(t) for t in tables)
    quoted = re.compile(r"""["'](""" + names + r""")["']""")
    strings = re.compile(r"""["']([^"'\n]*)["']""")
    keyed = re.compile(r"""["'](""" + names + r""")["']\s*:\s*[(\[]\s*["']""")
    problems, stack = [], []
    code = blank_comments(text, rel)
    for i, ch in enumerate(code):
        if ch in "[({":
            stack.append(i)
        elif ch in "])}" and stack:
            start = stack.pop()
            inner = code[start:i]
            named = set(quoted.findall(inner))
            listed = len(named) >= 5 and len(named) >= 0.6 * len(set(strings.findall(inner)))
            if len(set(keyed.findall(inner))) >= 3 or listed:
                line = code.count("\n", 0, start) + 1
                # the innermost collection is reported once: outer ones contain it
                if not any(p.startswith(f"{rel}:{line}:") for p in problems):
                    problems.append(f"{rel}:{line}: a hand-kept list of tables (read `linsweep catalogue --json` "
                                    f"or the stored table's `keys` attribute)")
    return problems


def main():
    src, binary = sys.argv[1], sys.argv[2]
    tables = [t["name"] for t in json.loads(subprocess.run([binary, "catalogue", "--json"], capture_output=True,
                                                           text=True, check=True).stdout)]
    problems = []
    archs = architecture_names(src)
    if len(archs) < 6:
        problems.append(f"engine/model: found only the architectures {sorted(archs)}")
    if len(tables) < 10:
        problems.append(f"linsweep catalogue: only the tables {tables}")
    files = subprocess.run(["git", "-C", src, "ls-files", "--cached", "--others", "--exclude-standard"],
                           capture_output=True, text=True, check=True).stdout.split()
    experiment_tables = [t for t in tables if t != "units"]  # `units` is the store's own table
    for rel in files:
        path = os.path.join(src, rel)
        if not os.path.isfile(path):
            continue
        own = room_of(rel)
        if rel.endswith((".cpp", ".hpp")) and own in ALLOWED:
            problems += include_problems(rel, own, open(path, encoding="utf-8").read(), archs, experiment_tables)
        if rel.endswith((".cpp", ".hpp", ".py", ".sh")) and own != "experiments" and rel not in NOT_TABLE_LISTS:
            problems += table_lists(rel, open(path, encoding="utf-8", errors="replace").read(), tables)
    for p in problems:
        print(p)
    print(f"layering: {len(problems)} violations")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
