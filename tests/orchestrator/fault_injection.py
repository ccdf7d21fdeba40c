#!/usr/bin/python3
"""Fault injection: SIGKILL at seeded random moments of an `mpirun -n 3` sweep, then a resume.

Usage: fault_injection.py BIN TEST_BIN SRC WORK [--trials N | --long] [--seed S] [--kinds K,K] [--only KIND:T]
(TEST_BIN: linsweep_test_cli, the command line with the `toy` test experiment, whose units
sleep on request; the escaping-error case slows its sweep down with them.)

Kinds: `whole` (mpirun and every rank), `worker` (one worker rank), `coordinator` (rank 0),
`launcher` (mpirun alone: its ranks must not live on as orphans).
After an uninterrupted reference run, every trial starts the sweep into a fresh store, kills at
its moment, and checks:
  - a killed rank does not leave the others hanging: mpirun exits within HANG_S and no rank of
    the job is still alive after it (OpenMPI ends the job when one of its processes dies);
  - the store as the kill left it: every units/<id>.h5 is a whole unit file (h5py reads it and
    its unit_id), store.h5 (when present) reads, anything half-written is a .tmp-* file;
  - the resume (`mpirun -n 3 linsweep resume STORE`, or the `run` command again; the trial's
    draw) is not blocked by the lock the killed run held, exits 0, and leaves tables equal to the
    reference (compare_stores.py), every unit of the plan committed exactly once (one unit file,
    at most one `committed` journal line), no .tmp-* file, and an empty lock record.
Once per run (not with --only), an error escaping rank 0 mid-sweep (its journal made immutable
with `chattr +i`, so the next append fails with EPERM; skipped where chattr cannot) must end the
job through MPI_Abort with one `linsweep: rank 0: ...; aborting the job` line instead of leaving
the workers and MPI_Finalize waiting forever; the resume then completes as above.
A moment is "once k units are committed, plus d ms" (k = 0: d ms after mpirun started), drawn
from random.Random("SEED:KIND:T") with d scaled by the reference run's times, so the moments
spread over the sweep on any machine. The trial's line prints everything drawn; `--only KIND:T
--seed S` reruns that one trial. Trials per kind: --trials, else $LINSWEEP_FAULT_TRIALS, else 2;
seed: --seed, else $LINSWEEP_FAULT_SEED, else 20261130. --long (ctest's `long` test): 20 trials
per kind unless $LINSWEEP_FAULT_TRIALS says otherwise, and exit 77 (skipped) unless
LINSWEEP_LONG_TESTS=1. Exit 0 when every trial passed, 1 otherwise.
"""
import argparse
import os
import random
import signal
import subprocess
import sys
import time

import h5py

HANG_S = 60        # mpirun must be gone this long after a kill, or the trial is a hang
RESUME_S = 600     # a resume that takes longer is a hang too
KINDS = ("whole", "worker", "coordinator", "launcher")


def write_spec(path, src, rpg):
    with open(path, "w") as f:
        f.write(f"""store: {os.path.dirname(path)}/unused
context: 32
models:
  - {{name: tiny-gpt2, path: {src}/tests/data/models/tiny-gpt2}}
  - {{name: tiny-neox, path: {src}/tests/data/models/tiny-neox}}
corpora:
  - {{name: stream-a, path: {src}/tests/data/models/tiny-gpt2.tokens.npy, format: npy}}
  - {{name: fiction, path: {src}/tests/data/tokenizer/brown_fiction.txt, format: text}}
splits:
  fit:  {{start: 0,    tokens: 1024}}
  eval: {{start: 2560, tokens: 1024}}
layers: all
experiments:
  fit: {{lambda: [0.01, 0.1]}}
  all_linear: {{bootstrap: 200}}
runtime: {{batch: 8, grace_seconds: 20, ranks_per_group: {rpg}, retries: 0}}
""")


def committed(store):
    try:
        return sorted(n for n in os.listdir(f"{store}/units")
                      if n.endswith(".h5") and not n.endswith(".arrays.h5") and not n.startswith("."))
    except FileNotFoundError:
        return []


def job_processes(tag):
    """{pid: world rank, or -1 for mpirun and helpers} of the live processes started with
    LINSWEEP_FAULT_TAG=tag in their environment (mpirun passes its environment to the ranks, so
    this finds them even after mpirun died and they were reparented)."""
    procs = {}
    for p in os.listdir("/proc"):
        if not p.isdigit() or not alive(int(p)):
            continue
        try:
            with open(f"/proc/{p}/environ", "rb") as f:
                env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
        except OSError:
            continue
        if env.get(b"LINSWEEP_FAULT_TAG") == tag.encode():
            procs[int(p)] = int(env.get(b"OMPI_COMM_WORLD_RANK", b"-1"))
    return procs


def ranks_of(procs):
    return {r: p for p, r in procs.items() if r >= 0}


def alive(pid):
    """True while `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def kill(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class Trial:
    def __init__(self, args, kind, t, ref):
        self.args, self.kind, self.t, self.ref = args, kind, t, ref
        self.rng = random.Random(f"{args.seed}:{kind}:{t}")
        self.layout = self.rng.choice(("rpg1", "rpg2"))
        self.k = self.rng.randrange(ref["units"])
        span = ref["first_commit_s"] if self.k == 0 else ref["unit_s"] * 1.5
        self.delay_ms = int(self.rng.uniform(0, span) * 1000)
        self.victim = {"whole": None, "launcher": None, "worker": self.rng.randrange(1, 3), "coordinator": 0}[kind]
        self.resume_with = self.rng.choice(("resume", "run"))
        self.store = f"{args.work}/trial-{kind}-{t}"
        self.spec = f"{args.work}/{self.layout}.yaml"

    def describe(self):
        what = {"whole": "mpirun and every rank", "worker": f"worker rank {self.victim}", "coordinator": "rank 0",
                "launcher": "mpirun alone"}[self.kind]
        when = f"{self.delay_ms} ms after start" if self.k == 0 else f"{self.delay_ms} ms after unit {self.k} committed"
        return f"{self.kind} #{self.t} (--seed {self.args.seed} --only {self.kind}:{self.t}): {self.layout}, SIGKILL {what} {when}"

    def run(self):
        a = self.args
        subprocess.run(["rm", "-rf", self.store], check=True)
        log = open(f"{self.store}.log", "w")
        t0 = time.monotonic()
        tag = f"{os.getpid()}-{self.kind}-{self.t}"
        mpirun = subprocess.Popen(["mpirun", "-n", "3", a.bin, "run", self.spec, "--store", self.store, "--quiet"],
                                  stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, LINSWEEP_FAULT_TAG=tag))
        # The moment: k units committed (or the start), then the delay.
        while self.k > 0 and len(committed(self.store)) < self.k and mpirun.poll() is None:
            time.sleep(0.005)
        deadline = time.monotonic() + self.delay_ms / 1000
        while time.monotonic() < deadline and mpirun.poll() is None:
            time.sleep(0.002)
        ranks = ranks_of(job_processes(tag))
        if self.victim is not None:  # a moment before the victim exists: as soon as it does
            while self.victim not in ranks and mpirun.poll() is None:
                time.sleep(0.002)
                ranks = ranks_of(job_processes(tag))
        killed_at = time.monotonic()
        if mpirun.poll() is not None:
            outcome = f"missed: the sweep ended first (exit {mpirun.returncode})"
            before = len(committed(self.store))
        else:
            before = len(committed(self.store))
            if self.kind == "whole":
                kill(mpirun.pid)
                for pid in job_processes(tag):
                    kill(pid)
            elif self.kind == "launcher":
                kill(mpirun.pid)
            else:
                kill(ranks[self.victim])
            try:
                code = mpirun.wait(timeout=HANG_S)
            except subprocess.TimeoutExpired:
                left = job_processes(tag)
                for pid in left:
                    kill(pid)
                kill(mpirun.pid)
                mpirun.wait()
                return self.fail(f"HANG: mpirun still running {HANG_S} s after the kill (live ranks {sorted(left.values())})")
            gone = time.monotonic() - killed_at
            outcome = f"killed at {killed_at - t0:.2f} s with {before} units committed; mpirun exit {code} after {gone:.2f} s"
            self.mpirun_exit, self.exit_latency = code, gone
        log.close()
        # No process of the job may outlive it (an orphan would go on writing the store).
        until = time.monotonic() + 10
        while job_processes(tag) and time.monotonic() < until:
            time.sleep(0.05)
        if not outcome.startswith("missed"):
            outcome += f", every rank gone after {time.monotonic() - killed_at:.2f} s"
        orphans = job_processes(tag)
        if orphans:
            for pid in orphans:
                kill(pid)
            return self.fail(f"ORPHANS: {sorted(orphans.values())} (rank, -1: not a rank) alive 10 s after mpirun exited")
        problem = self.check_killed_store()
        if problem:
            return self.fail(problem)
        # The resume. Killed before the run recorded its spec (run.json), there is nothing to
        # resume: `resume` must say so (exit 2) and the spec is run again instead.
        if self.resume_with == "resume" and not os.path.exists(f"{self.store}/run.json"):
            res = subprocess.run(["mpirun", "-n", "3", a.bin, "resume", self.store, "--quiet"], capture_output=True, text=True,
                                 timeout=RESUME_S)
            if res.returncode != 2 or ("not a linsweep store" not in res.stderr and "run.json: missing" not in res.stderr):
                return self.fail(f"`resume` of a store without run.json: exit {res.returncode}: {res.stderr.strip()[-300:]}")
            self.resume_with = "run"
            outcome += "; `resume` refused: no run.json yet (exit 2)"
        cmd = ["mpirun", "-n", "3", a.bin] + (["resume", self.store] if self.resume_with == "resume"
                                              else ["run", self.spec, "--store", self.store]) + ["--quiet"]
        r0 = time.monotonic()
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=RESUME_S)
        except subprocess.TimeoutExpired:
            return self.fail(f"HANG: `{' '.join(cmd[3:5])}` did not finish in {RESUME_S} s")
        if res.returncode != 0:
            ours = [l for l in res.stderr.splitlines() if l.startswith("linsweep")]
            return self.fail(f"`{self.resume_with}` exit {res.returncode}: {ours or res.stderr.strip()[-600:]}")
        problem = self.check_final_store()
        if problem:
            return self.fail(problem)
        self.line = f"{outcome}; `{self.resume_with}` exit 0 in {time.monotonic() - r0:.1f} s; {self.final_note}"
        self.missed = outcome.startswith("missed")
        return True

    def fail(self, why):
        self.line = "FAILED: " + why
        return False

    def check_killed_store(self):
        for n in committed(self.store):
            try:
                with h5py.File(f"{self.store}/units/{n}", "r") as f:
                    uid = f.attrs["unit_id"]
                    uid = uid.decode() if isinstance(uid, bytes) else str(uid)
                    if uid != n[:-3] or "tables" not in f:
                        return f"half-committed unit file {n} (unit_id {uid})"
                    arrays = f"{self.store}/units/{n[:-3]}.arrays.h5"
                    if int(f.attrs.get("arrays", 0)) > 0:
                        with h5py.File(arrays, "r") as a:
                            if len(a["arrays"]) == 0:
                                return f"unit {n} names arrays its arrays file does not hold"
            except Exception as e:  # noqa: BLE001 - any failure to read is the finding
                return f"committed unit file {n} does not read: {e}"
        if os.path.exists(f"{self.store}/store.h5"):
            try:
                with h5py.File(f"{self.store}/store.h5", "r") as f:
                    f["tables/fits"][:]
            except Exception as e:  # noqa: BLE001
                return f"store.h5 left by the kill does not read: {e}"
        return None

    def check_final_store(self):
        # The reference ran with groups of one rank: a resumed rpg1 run must equal it bitwise, an
        # rpg2 run within docs/numerics.md's bounds for other group sizes.
        exact = ["--exact"] if self.layout == "rpg1" else []
        cmp = subprocess.run(["/usr/bin/python3", f"{self.args.src}/tests/orchestrator/compare_stores.py", self.ref["store"], self.store]
                             + exact, capture_output=True, text=True)
        if cmp.returncode != 0:
            return f"tables differ from the reference: {(cmp.stdout + cmp.stderr).strip()[-600:]}"
        units = committed(self.store)
        if len(units) != self.ref["units"]:
            return f"{len(units)} unit files, the plan has {self.ref['units']}"
        leftovers = [n for n in os.listdir(f"{self.store}/units") if n.startswith(".")]
        leftovers += [n for n in os.listdir(self.store) if n.startswith(".tmp-")]
        if leftovers:
            return f"temporary files left after the resume: {leftovers}"
        counts = {}
        with open(f"{self.store}/journal.jsonl", "rb") as f:
            for line in f:
                if b'"event":"committed"' in line:
                    uid = line.split(b'"unit":"', 1)[1].split(b'"', 1)[0].decode()
                    counts[uid] = counts.get(uid, 0) + 1
        twice = {u: c for u, c in counts.items() if c > 1}
        if twice:
            return f"units committed more than once: {twice}"
        strays = set(counts) - {n[:-3] for n in units}
        if strays:
            return f"journal commits without a unit file: {sorted(strays)}"
        with open(f"{self.store}/lock") as f:
            record = f.read()
        if record.strip():
            return f"lock record not emptied by the clean exit: {record!r}"
        unjournaled = {n[:-3] for n in units} - set(counts)
        if unjournaled:  # renamed, then killed before the journal line: the resume must reconcile
            return f"unit files without a committed journal line after the resume: {sorted(unjournaled)}"
        recovered = 0
        with open(f"{self.store}/journal.jsonl", "rb") as f:
            recovered = sum(1 for line in f if b'"recovered":true' in line)
        self.final_note = f"tables equal; {len(units)} units, each committed once in files and journal" + \
            (f" ({recovered} journaled by the resume: killed between rename and append)" if recovered else "")
        return None


def escaping_error(args, ref):
    """rank 0 fails outside any unit (its journal becomes immutable): the job must end, not hang."""
    store = f"{args.work}/escaping-error"
    subprocess.run(["rm", "-rf", store], check=True)
    probe = f"{args.work}/chattr-probe"
    open(probe, "w").close()
    if subprocess.run(["chattr", "+i", probe], capture_output=True).returncode != 0:
        os.remove(probe)
        return "skipped (chattr +i is not supported here)"
    subprocess.run(["chattr", "-i", probe])
    os.remove(probe)
    env = dict(os.environ, LINSWEEP_FAULT_TAG="escaping-error")
    with open(f"{args.work}/rpg1.yaml") as f:
        slow = f.read().replace("experiments:\n", "experiments:\n  toy: {units: 4, sleep: 0.3}\n")
    with open(f"{args.work}/slow.yaml", "w") as f:
        f.write(slow)
    p = subprocess.Popen(["mpirun", "-n", "3", args.test_bin, "run", f"{args.work}/slow.yaml", "--store", store, "--quiet"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    while not committed(store) and p.poll() is None:
        time.sleep(0.01)
    subprocess.run(["chattr", "+i", f"{store}/journal.jsonl"], check=True)
    t0 = time.monotonic()
    try:
        out, _ = p.communicate(timeout=HANG_S)
    except subprocess.TimeoutExpired:
        for pid in job_processes("escaping-error"):
            kill(pid)
        p.kill()
        p.wait()
        return "FAILED: HANG: the job did not end after rank 0's journal write failed"
    finally:
        subprocess.run(["chattr", "-i", f"{store}/journal.jsonl"])
    gone = time.monotonic() - t0
    ours = [l for l in out.splitlines() if l.startswith("linsweep:")]
    if p.returncode == 0 or len(ours) != 1 or "rank 0:" not in ours[0] or "Operation not permitted; aborting the job" not in ours[0]:
        tail = "\n    ".join(out.splitlines()[-20:])
        return f"FAILED: exit {p.returncode}, linsweep lines {ours}; the job's last lines:\n    {tail}"
    time.sleep(2)
    if job_processes("escaping-error"):
        return "FAILED: ranks outlived the aborted job"
    res = subprocess.run(["mpirun", "-n", "3", args.test_bin, "resume", store, "--quiet"], capture_output=True, text=True,
                         timeout=RESUME_S)
    cmp = subprocess.run(["/usr/bin/python3", f"{args.src}/tests/orchestrator/compare_stores.py", ref["store"], store, "--exact",
                          "--ignore=toy"], capture_output=True, text=True)
    if res.returncode != 0 or cmp.returncode != 0:
        return (f"FAILED: resume exit {res.returncode}: {res.stderr.strip()[-300:]} "
                f"{(cmp.stdout + cmp.stderr).strip()[-300:]}")
    subprocess.run(["rm", "-rf", store])
    return f"passed: mpirun exit {p.returncode} {gone:.2f} s after the journal became immutable, with `{ours[0][:140]}...`; resume completed"


def reference(args):
    """The uninterrupted run: its store, unit count and times (to scale the kill moments)."""
    store = f"{args.work}/reference"
    subprocess.run(["rm", "-rf", store], check=True)
    t0 = time.monotonic()
    p = subprocess.Popen(["mpirun", "-n", "3", args.bin, "run", f"{args.work}/rpg1.yaml", "--store", store, "--quiet"])
    first = None
    while p.poll() is None:
        if first is None and committed(store):
            first = time.monotonic() - t0
        time.sleep(0.005)
    total = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit(f"reference run failed: exit {p.returncode}")
    units = len(committed(store))
    first = first if first is not None else total
    ref = {"store": store, "units": units, "first_commit_s": first, "unit_s": max(0.01, (total - first) / max(1, units - 1))}
    print(f"reference: {units} units in {total:.1f} s (first commit after {first:.1f} s, then {ref['unit_s']:.2f} s per unit)",
          flush=True)
    return ref


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bin")
    ap.add_argument("test_bin")
    ap.add_argument("src")
    ap.add_argument("work")
    ap.add_argument("--trials", type=int)
    ap.add_argument("--long", action="store_true")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("LINSWEEP_FAULT_SEED", "20261130")))
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--only", help="KIND:T, one trial")
    args = ap.parse_args()
    if args.long and os.environ.get("LINSWEEP_LONG_TESTS") != "1":
        print("skipped: the long fault-injection test runs with LINSWEEP_LONG_TESTS=1 (ctest -L long)")
        sys.exit(77)
    if args.trials is None:
        args.trials = int(os.environ.get("LINSWEEP_FAULT_TRIALS", "20" if args.long else "2"))
    os.makedirs(args.work, exist_ok=True)
    for k in ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "OMPI_MCA_rmaps_base_oversubscribe"):
        os.environ[k] = "1"
    # OpenMPI 5 (Debian 13) maps through PRRTE, which ignores OpenMPI 4's rmaps_base_oversubscribe.
    os.environ["PRTE_MCA_rmaps_default_mapping_policy"] = ":oversubscribe"
    os.environ["LINSWEEP_THREADS"] = "1"  # bitwise-equal forwards whatever the layout
    write_spec(f"{args.work}/rpg1.yaml", args.src, 1)
    write_spec(f"{args.work}/rpg2.yaml", args.src, 2)
    if args.only:
        kind, t = args.only.split(":")
        plan = [(kind, int(t))]
    else:
        plan = [(kind, t) for t in range(1, args.trials + 1) for kind in args.kinds.split(",")]
    print(f"fault injection: seed {args.seed}, {len(plan)} trials", flush=True)
    started = time.monotonic()
    ref = reference(args)
    failed = 0
    if not args.only:
        outcome = escaping_error(args, ref)
        print(f"error escaping rank 0: {outcome}", flush=True)
        failed += outcome.startswith("FAILED")
    stats = {}
    for kind, t in plan:
        trial = Trial(args, kind, t, ref)
        t0 = time.monotonic()
        ok = trial.run()
        s = stats.setdefault(kind, {"passed": 0, "failed": 0, "missed": 0, "exits": {}, "latency": []})
        s["passed" if ok else "failed"] += 1
        if ok and trial.missed:
            s["missed"] += 1
        if hasattr(trial, "mpirun_exit"):
            s["exits"][trial.mpirun_exit] = s["exits"].get(trial.mpirun_exit, 0) + 1
            s["latency"].append(trial.exit_latency)
        print(f"{trial.describe()}: {trial.line} [{time.monotonic() - t0:.1f} s]", flush=True)
        if ok:
            subprocess.run(["rm", "-rf", trial.store, f"{trial.store}.log"])
    for kind, s in stats.items():
        lat = f", mpirun gone {min(s['latency']):.2f}..{max(s['latency']):.2f} s after the kill" if s["latency"] else ""
        print(f"{kind}: {s['passed']} passed, {s['failed']} failed ({s['missed']} ended before their moment); "
              f"mpirun exit codes {s['exits']}{lat}")
        failed += s["failed"]
    print(f"fault injection: {len(plan)} trials in {time.monotonic() - started:.0f} s, {failed} failed", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
