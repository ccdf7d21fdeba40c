#!/usr/bin/env python3
"""Ctrl-C and `status` during a live run, on the command line with the `toy` test experiment.

One Ctrl-C: a line says the run stops after the running unit and how to abort; the run exits 3
and names the exact command that continues it, which then completes the sweep. Meanwhile
`status` names the live run and its running unit and counts every unit in one column only.
Two Ctrl-Cs: the process ends by SIGINT at once, without waiting for the unit.

Usage: interrupt_test.py TEST_BIN SOURCE_DIR WORK_DIR
"""
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time

SLEEP_S = 4  # each toy unit: `status` takes seconds to start on a busy machine


def wait_for(pred, what, timeout=60):
    t0 = time.monotonic()
    while not pred():
        if time.monotonic() - t0 > timeout:
            sys.exit(f"FAILED: waited {timeout} s for {what}")
        time.sleep(0.02)


def journal_has(store, event):
    try:
        with open(f"{store}/journal.jsonl") as f:
            return any(json.loads(line).get("event") == event for line in f if line.strip())
    except FileNotFoundError:
        return False


def start_run(test_bin, spec, store):
    return subprocess.Popen([test_bin, "run", spec, "--store", store], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def main():
    test_bin, source, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    data = f"{source}/tests/data/models"
    spec = f"{work}/spec.yaml"
    with open(spec, "w") as f:
        f.write(f"context: 16\nmodels:\n  - {{name: m, path: {data}/tiny-gpt2}}\n"
                f"corpora:\n  - {{name: c, path: {data}/tiny-gpt2.tokens.npy}}\n"
                f"experiments:\n  toy: {{units: 3, sleep: {SLEEP_S}}}\n")

    # One Ctrl-C, with `status` asked while the first unit runs.
    store = f"{work}/store"
    p = start_run(test_bin, spec, store)
    wait_for(lambda: journal_has(store, "started"), "the first unit to start")
    st = json.loads(subprocess.run([test_bin, "status", store, "--json"], capture_output=True, text=True,
                                   check=True).stdout)
    assert st["live_run"] and f"pid {p.pid}" in st["live_run"], st["live_run"]
    toy, after = st["by_kind"]["toy"], st["by_kind"]["toy_after"]
    # Between two units nothing runs; otherwise the one running unit, counted once.
    assert len(st["running"]) <= 1 and all(r.startswith("toy-") for r in st["running"]), st["running"]
    assert toy["unfinished"] == len(st["running"]), toy
    assert toy["committed"] + toy["pending"] + toy["unfinished"] + toy["failed"] == 3, toy
    assert after["committed"] + after["pending"] + after["unfinished"] == 1, after
    text = subprocess.run([test_bin, "status", store], capture_output=True, text=True, check=True).stdout
    assert "live run: host " in text and f"pid {p.pid}" in text, text

    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 3, (p.returncode, err)
    assert "run: stopping after the running unit… (Ctrl-C again to abort)" in err, err
    cont = [line for line in err.splitlines() if line.startswith("run: to continue: ")]
    assert cont == [f"run: to continue: linsweep resume {store}"], err
    assert journal_has(store, "committed"), "the running unit was not finished"
    after_stop = json.loads(subprocess.run([test_bin, "status", store, "--json"], capture_output=True, text=True,
                                           check=True).stdout)
    assert after_stop["live_run"] is None and after_stop["running"] == [], after_stop
    # The printed command, run as printed (with the test binary), completes the sweep.
    resume = shlex.split(cont[0][len("run: to continue: "):])
    r = subprocess.run([test_bin] + resume[1:] + ["--quiet"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    done = json.loads(subprocess.run([test_bin, "status", store, "--json"], capture_output=True, text=True,
                                     check=True).stdout)
    assert done["by_kind"]["toy"]["committed"] == 3 and done["by_kind"]["toy_after"]["committed"] == 1, done

    # Two Ctrl-Cs: ended by the signal, well before the running unit could finish.
    store2 = f"{work}/store2"
    p = start_run(test_bin, spec, store2)
    wait_for(lambda: journal_has(store2, "started"), "the first unit to start")
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    time.sleep(0.2)
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=60)
    took = time.monotonic() - t0
    assert p.returncode == -signal.SIGINT, p.returncode
    assert took < SLEEP_S, took
    assert not journal_has(store2, "committed")
    print(f"interrupt: one Ctrl-C exits 3 with the resume command; two end the run in {took:.2f} s")


if __name__ == "__main__":
    main()
