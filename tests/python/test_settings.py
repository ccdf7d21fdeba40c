#!/usr/bin/python3
"""A sweep's settings side by side (docs/spec.md, "Sweeps") on the store make_stores.py runs with
`-m context=16,32 fit.lambda=[0.01],[10]`: the settings' units coexist as current results, the
swept keys are typed columns of every table (`query`, the units table), `compare` recomputes each
table's Δ% from the stored windows with the units' own bootstrap count and pairs only settings
that hold the same windows (as the README's example does), the report shows one setting and the
comparison last, among its diagnostics, a plain run keeps the sweep current, a swept compound
shares its gates and `export` asks which setting, and sweeps written wrongly are refused with
exit 2.

Usage: test_settings.py LINSWEEP SOURCE_DIR STORES
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest

LINSWEEP, SRC, STORES = sys.argv[1:4]
STORE = os.path.join(STORES, "sweep")
SPEC = os.path.join(SRC, "examples", "fixture_measure.yaml")
ONE_MODEL = ["models=[{name: tiny-gpt2, path: ../tests/data/models/tiny-gpt2}]",
             "corpora=[{name: stream-a, path: ../tests/data/models/tiny-gpt2.tokens.npy, format: npy}]",
             "layers=[0,1]", "experiments={fit: {lambda: [0.01]}, all_linear: {bootstrap: 200}}"]
SWEEP = ["-m", "context=16,32", "fit.lambda=[0.01],[10]"]
SETTINGS = {"context=16,fit.lambda=[0.01]", "context=16,fit.lambda=[10]", "context=32,fit.lambda=[0.01]",
            "context=32,fit.lambda=[10]"}


def linsweep(*args, check=True):
    r = subprocess.run([LINSWEEP, *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"linsweep {' '.join(args)} exited {r.returncode}: {r.stderr}")
    return r


def query(store, table, *extra):
    return json.loads(linsweep("query", store, table, "--format", "json", *extra).stdout)


class Settings(unittest.TestCase):
    def test_settings_are_columns_of_every_table(self):
        rows = query(STORE, "all_linear")
        self.assertEqual(len(rows), 2 * 4)  # two layers, four settings
        self.assertEqual({r["setting"] for r in rows}, SETTINGS)
        for r in rows:
            self.assertEqual(list(r)[-4:], ["unit", "setting", "context", "fit.lambda"])
            self.assertEqual(r["setting"], f"context={r['context']:g},fit.lambda={r['fit.lambda']}")
        self.assertEqual({r["context"] for r in rows}, {16.0, 32.0})
        stats = [u for u in query(STORE, "units") if u["kind"] == "stats"]
        self.assertEqual(sorted(u["setting"] for u in stats), ["context=16", "context=32"])
        self.assertEqual({u["fit.lambda"] for u in stats}, {""})  # stats does not depend on λ
        self.assertTrue(all(u["slot"].endswith("@" + u["setting"]) for u in stats))
        narrowed = query(STORE, "all_linear", "--where", "context=32", "--where", r"fit.lambda=\[10\]")
        self.assertEqual(len(narrowed), 2)
        # With --all too, the columns come in linsweep's order in the Python reader.
        sys.path.insert(0, os.path.join(SRC, "python"))
        from linsweep_store import open_store
        every = query(STORE, "all_linear", "--all")
        self.assertEqual(list(every[0])[-6:], ["unit", "current", "planned_by", "setting", "context", "fit.lambda"])
        self.assertEqual(list(open_store(STORE).table("all_linear", units=False, all=True).columns), list(every[0]))

    def test_compare_pairs_settings_on_shared_windows(self):
        table = {(r["layer"], r["setting"]): r for r in query(STORE, "all_linear")}
        rows = json.loads(linsweep("compare", STORE, "--json").stdout)
        self.assertEqual(len(rows), len(table))
        for r in rows:
            with self.subTest(series=r["series"], setting=r["setting"]):
                stored = table[(int(r["series"][len("layer"):]), r["setting"])]
                self.assertAlmostEqual(r["delta_pct"], stored["delta_pct"], places=9)
                self.assertEqual(r["resamples"], 200)  # the all_linear units' own bootstrap count
                self.assertLessEqual(r["delta_lo"], r["delta_pct"])
                self.assertLessEqual(r["delta_pct"], r["delta_hi"])
                if "fit.lambda=[0.01]" in r["setting"]:  # first of its context: nothing before it shares windows
                    self.assertEqual((r["baseline"], r["shared_windows"], r["diff_pct"]), ("", 0, None))
                    continue
                context = r["setting"].split(",")[0]
                self.assertEqual(r["baseline"], context + ",fit.lambda=[0.01]")
                self.assertEqual(r["shared_windows"], r["windows"])
                other = table[(stored["layer"], r["baseline"])]
                self.assertAlmostEqual(r["diff_pct"], stored["delta_pct"] - other["delta_pct"], places=9)
                self.assertLessEqual(r["diff_lo"], r["diff_pct"])
                self.assertLessEqual(r["diff_pct"], r["diff_hi"])
                # Pairing removes the windows' shared variation: narrower than either setting's interval.
                self.assertLess(r["diff_hi"] - r["diff_lo"], r["delta_hi"] - r["delta_lo"])
        told = json.loads(linsweep("compare", STORE, "--json", "--resamples", "50").stdout)
        self.assertEqual({r["resamples"] for r in told}, {50})
        text = linsweep("compare", STORE).stdout
        self.assertIn("paired with", text)
        self.assertIn("context=16,fit.lambda=[0.01]", text)

    def test_report_shows_one_setting_and_the_comparison_last(self):
        out = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, out)
        linsweep("tables", STORE, "--out", out)
        with open(os.path.join(out, "tables.md")) as f:
            md = f.read()
        titles = [line for line in md.splitlines() if line.startswith("## ")]
        self.assertTrue(titles[-1].startswith("## Settings side by side"), titles)
        self.assertIn("The other tables and figures show setting context=16,fit.lambda=[0.01].", md)
        self.assertNotIn("context=32", md.split("## Settings side by side")[0])  # the results: one setting only
        linsweep("report", STORE, "--out", out)
        with open(os.path.join(out, "index.html")) as f:
            html = f.read()
        self.assertIn("The page shows setting context=16,fit.lambda=[0.01] of the sweep", html)
        # A diagnostic, after every result table: its own section, after "Tables".
        self.assertLess(html.index('<section id="tables">'), html.index('<section id="diagnostics">'))
        self.assertLess(html.index('<section id="diagnostics">'), html.index('<h3 id="table-settings">'))
        self.assertLess(html.index("The page shows setting"), html.index('<h3 id="table-settings">'))
        with open(os.path.join(out, "tables.md")) as f:
            titles = [line for line in f.read().splitlines() if line.startswith("## ")]
        self.assertTrue(titles[0].startswith("## Findings") and titles[-1].startswith("## Settings side by side"),
                        titles)

    def test_the_readme_compare_example_pairs(self):
        """The README's sweep keeps the eval windows (no context or split swept), so `compare` has
        windows to pair its settings on; its compare reads the store the run wrote."""
        with open(os.path.join(SRC, "README.md"), encoding="utf-8") as f:
            lines = [line.split("#")[0] for line in f if line.startswith("build/linsweep ")]
        run = next(shlex.split(line) for line in lines if " -m " in line)
        compare = next(shlex.split(line) for line in lines if line.split()[1] == "compare")
        swept = [a.split("=")[0] for a in run[run.index("-m") + 1:] if not a.startswith("-") and "=" in a]
        self.assertTrue(swept, run)
        for key in swept:
            self.assertFalse(key == "context" or re.match(r"(experiments\.)?splits?\.", key) or key == "splits",
                             f"the README sweeps {key}: its settings hold different windows, so compare pairs none")
        self.assertEqual(compare[2], run[run.index("--store") + 1])

    def test_a_plain_run_keeps_the_sweep_current_and_a_rerun_does_nothing(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        store = os.path.join(d, "store")
        shutil.copytree(STORE, store)
        plan = json.loads(linsweep("plan", SPEC, *ONE_MODEL, *SWEEP, "--store", store, "--json").stdout)
        self.assertEqual(plan["counts"], {"done": len(plan["units"])})
        self.assertEqual({json.dumps(u["setting"], sort_keys=True) for u in plan["units"] if u["kind"] == "all_linear"},
                         {'{"context": 16, "fit.lambda": [0.01]}', '{"context": 16, "fit.lambda": [10]}',
                          '{"context": 32, "fit.lambda": [0.01]}', '{"context": 32, "fit.lambda": [10]}'})
        linsweep("run", SPEC, *ONE_MODEL, "--store", store, "--quiet")
        rows = query(store, "all_linear")
        self.assertEqual(len(rows), 2 * 5)  # the four settings and the plain run's context 32
        self.assertEqual(sum(r["setting"] == "" for r in rows), 2)
        self.assertEqual([r["context"] for r in rows if r["setting"] == ""], [None, None])  # NaN: no setting

    def test_a_swept_compound_pairs_its_random_routing_and_export_asks_which(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        store, out = os.path.join(d, "store"), os.path.join(d, "routed")
        gated = ["layers=[1]", "experiments={fit: {lambda: [0.01]}, gate: {variants: [linear], bootstrap: 100, "
                 "random_draws: 2, curve_steps: 0}, compound: {layers: [1], bootstrap: 100}}"]
        linsweep("run", SPEC, *ONE_MODEL[:2], *gated, "-m", "compound.seed=0,1", "--store", store, "--quiet")
        self.assertEqual(sorted(r["setting"] for r in query(store, "compound")),
                         ["compound.seed=0", "compound.seed=1"])
        self.assertEqual({r["setting"] for r in query(store, "gates")}, {""})  # the gates do not depend on it
        rows = {(r["series"], r["setting"]): r
                for r in json.loads(linsweep("compare", store, "--experiment", "compound", "--json").stdout)}
        self.assertEqual(set(rows), {(s, f"compound.seed={k}") for s in ("gated", "random") for k in (0, 1)})
        same = rows[("gated", "compound.seed=1")]  # the same gates on the same windows: no difference
        self.assertEqual((same["baseline"], same["diff_pct"], same["diff_lo"], same["diff_hi"]),
                         ("compound.seed=0", 0.0, 0.0, 0.0))
        self.assertEqual(rows[("random", "compound.seed=1")]["shared_windows"], same["windows"])
        r = linsweep("export", store, "--model", "tiny-gpt2", "--corpus", "stream-a", "--out", out, check=False)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("2 settings of a sweep hold a current compound result", r.stderr)
        unit = next(u["unit"] for u in query(store, "compound") if u["setting"] == "compound.seed=1")
        linsweep("export", store, "--model", "tiny-gpt2", "--corpus", "stream-a", "--unit", unit, "--out", out)
        self.assertTrue(os.path.exists(os.path.join(out, "routed.json")))

    def test_sweeps_written_wrongly_are_refused(self):
        cases = [
            (["context=16,32"], "add -m"),
            (["-m", "runtime.batch=1,2"], "only context, layers, splits.* and experiments.*"),
            (["-m", "context=16,16"], "lists 16 twice"),
            (["-m", "context=16,100000"], "override 'context=100000': context: 100000 is longer than model"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                r = linsweep("plan", SPEC, *ONE_MODEL, *args, check=False)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(message, r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
