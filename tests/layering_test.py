#!/usr/bin/python3
"""The architecture's rules, checked on every source file's #include lines.

Usage: layering_test.py SOURCE_DIR

- Dependencies point down: each library folder includes only the folders below it
  (docs/architecture.md, "Layers").
- Only engine/ and experiments/ include LibTorch (ATen, c10, torch); only storage/ includes
  HDF5; only orchestrator/ and engine/comm/ include MPI (and NCCL).
- Presentation, the store and the planner hold no experiment names: no file outside
  experiments/ (and tests/, the demo) names an experiment's table by string.
- No code outside engine/model/ names an architecture (a registered model_type, read from
  engine/model/*_config.cpp and engine/model/arch/*.cpp) by string: everything else asks the
  architecture's record. The demo, which names the architectures it trains, is data.
Exit 1 with one line per violation.
"""
import os
import re
import sys

# folder -> folders it may include (besides itself and the standard library)
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
TABLES = ("fits", "all_linear", "gates", "token_context", "nofly", "clusters", "compound", "progressive",
          "finetune", "training_loss", "soft_gates", "token_classes", "token_regression", "speed")


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


def folder_of(rel):
    if rel.startswith("engine/comm/"):
        return "engine/comm"
    return rel.split("/")[0]


def main():
    src = sys.argv[1]
    problems = []
    archs = architecture_names(src)
    if len(archs) < 6:
        problems.append(f"engine/model: found only the architectures {sorted(archs)}")
    for folder in ALLOWED:
        root = os.path.join(src, folder)
        for dirpath, _, files in os.walk(root):
            for name in files:
                if not name.endswith((".cpp", ".hpp")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, src)
                own = folder_of(rel)
                if own != folder:
                    continue
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                for n, line in enumerate(text.splitlines(), 1):
                    where = f"{rel}:{n}"
                    if TORCH.search(line) and own not in ("engine", "experiments"):
                        problems.append(f"{where}: includes LibTorch outside engine/ and experiments/")
                    if HDF5.search(line) and own != "storage":
                        problems.append(f"{where}: includes HDF5 outside storage/")
                    if MPI.search(line) and own not in ("orchestrator", "engine/comm"):
                        problems.append(f"{where}: includes MPI outside orchestrator/ and engine/comm/")
                    m = LOCAL.search(line)
                    if m:
                        target = m.group(1)
                        target = "engine/comm" if line.split('"')[1].startswith("engine/comm/") else target
                        allowed = ALLOWED[own] | ({"engine/comm"} if "engine" in ALLOWED[own] | {own} else set())
                        if target != own and target not in allowed and target in ALLOWED:
                            problems.append(f"{where}: {own}/ includes {target}/ (allowed: {sorted(ALLOWED[own]) or 'nothing'})")
                if not rel.startswith("engine/model/") and own != "demo":
                    code = re.sub(r"//[^\n]*", "", text)
                    for arch in archs:
                        if '"' + arch + '"' in code:
                            problems.append(f"{rel}: names the architecture '{arch}' (ask its Architecture record)")
                if own in ("storage", "presentation") or rel in ("orchestrator/plan/plan.cpp", "orchestrator/spec/spec.cpp"):
                    code = re.sub(r"//[^\n]*", "", text)  # comments may give examples
                    for table in TABLES:
                        if re.search(r'"' + table + r'"', code):
                            problems.append(f"{rel}: names the experiment table '{table}'")
    for p in problems:
        print(p)
    print(f"layering: {len(problems)} violations")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
