#!/usr/bin/python3
"""`linsweep query` on the fixture stores, through the real binary: --where lists, !=, globs and
ranges; unmatched values (a note, or exit 2 with did-you-mean); --limit; the default order; CSV
with bare numbers, TSV, and JSON keys in --columns order.

Usage: test_query_cli.py LINSWEEP STORES   (STORES: tests/python/make_stores.py's OUT)
"""
import csv
import io
import json
import os
import subprocess
import sys
import unittest

LINSWEEP, STORES = sys.argv[1:3]
MEASURE = os.path.join(STORES, "measure")
TRAINING = os.path.join(STORES, "training")


def run(*args):
    return subprocess.run([LINSWEEP, "query", *args], capture_output=True, text=True, timeout=120)


def rows(store, table, *args):
    r = run(store, table, "--format", "json", *args)
    if r.returncode != 0:
        raise AssertionError(f"query {table} {args}: exit {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


def key(r):
    return r["model"], r["corpus"], r["layer"]


class Where(unittest.TestCase):
    def models(self, *where):
        return sorted({r["model"] for r in rows(MEASURE, "all_linear", *[a for w in where for a in ("--where", w)])})

    def test_lists_negation_globs_ranges(self):
        every = rows(MEASURE, "all_linear")
        self.assertEqual(self.models(), ["tiny-gpt2", "tiny-neox", "tiny-neox-seq"])
        self.assertEqual(self.models("model=tiny-gpt2,tiny-neox"), ["tiny-gpt2", "tiny-neox"])
        self.assertEqual(self.models("model!=tiny-gpt2"), ["tiny-neox", "tiny-neox-seq"])
        self.assertEqual(self.models("model!=tiny-gpt2,tiny-neox"), ["tiny-neox-seq"])
        self.assertEqual(self.models("model=tiny-neox*"), ["tiny-neox", "tiny-neox-seq"])
        self.assertEqual(self.models("model=tiny-?eox"), ["tiny-neox"])
        self.assertEqual(self.models("model=*-[gn]*", "model!=*seq"), ["tiny-gpt2", "tiny-neox"])
        self.assertEqual(self.models("model!=tiny-neox*"), ["tiny-gpt2"])
        n = len(rows(MEASURE, "all_linear", "--where", "model=tiny-gpt2"))
        self.assertEqual(len(rows(MEASURE, "all_linear", "--where", "model!=tiny-gpt2")), len(every) - n)
        layers = lambda w: sorted({r["layer"] for r in rows(MEASURE, "all_linear", "--where", w)})  # noqa: E731
        self.assertEqual(layers("layer=1..2"), [1, 2])
        self.assertEqual(layers("layer=..0"), [0])
        self.assertEqual(layers("layer=0,2.."), [0, 2])
        self.assertEqual(layers("layer!=0..1"), [2])
        self.assertEqual(rows(MEASURE, "all_linear", "--where", "delta_pct=..-1e9"), [])  # a range may select nothing

    def test_a_value_that_some_rows_lack_is_a_note(self):
        r = run(MEASURE, "all_linear", "--where", "model=tiny-gpt2,tiny-gpt3", "--format", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual({x["model"] for x in json.loads(r.stdout)}, {"tiny-gpt2"})
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertIn("linsweep: note: --where model=tiny-gpt2,tiny-gpt3: no row of 'all_linear' has model "
                      "'tiny-gpt3' (did you mean 'tiny-gpt2'?)", r.stderr)

    def test_a_value_that_no_row_has_exits_2(self):
        cases = [
            (["all_linear", "--where", "model=tiny-gpt3"], "no row of 'all_linear' has model 'tiny-gpt3' "
             "(did you mean 'tiny-gpt2'?); model values: tiny-gpt2, tiny-neox, tiny-neox-seq"),
            (["all_linear", "--where", "model=gpt2*"], "no row of 'all_linear' has a model matching 'gpt2*'"),
            (["all_linear", "--where", "model!=gpt2-s"], "has model 'gpt2-s'"),
            (["all_linear", "--where", r"model=tiny\*"], r"has model 'tiny\*'"),  # escaped: literal
            (["all_linear", "--where", "layer=7"], "no row of 'all_linear' has layer '7'; layer values: 0, 1, 2"),
            (["all_linear", "--where", "layer=1*"], "holds numbers; a pattern"),
            (["all_linear", "--where", "modle=tiny-gpt2"], "has no column 'modle' (did you mean 'model'?)"),
            (["all_linear", "--sort", "layr"], "--sort layr: table 'all_linear' has no column 'layr' (did you mean"),
            (["all_linear", "--columns", "model,corpsu"], "no column 'corpsu' (did you mean 'corpus'?)"),
            (["gatse"], "unknown table 'gatse' (did you mean 'gates'?)"),
            (["fits", "--limit", "-1"], "--limit"),
            (["fits", "--format", "xlsx"], "(table, csv, tsv, json, md)"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                r = run(MEASURE, *args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertEqual(r.stdout, "")
                self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
                self.assertIn(message, r.stderr)

    def test_a_table_without_rows_reports_nothing(self):
        r = run(MEASURE, "progressive", "--where", "model=nothing")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertIn("(0 rows)", r.stdout)


class Order(unittest.TestCase):
    def test_default_order_is_model_corpus_layer_then_the_rest(self):
        got = rows(MEASURE, "all_linear")
        self.assertEqual([key(r) for r in got], sorted(key(r) for r in got))
        by_unit = sorted(got, key=lambda r: r["unit"])  # what the order was: unit ids
        self.assertNotEqual([key(r) for r in by_unit], [key(r) for r in got], "the fixture must tell them apart")
        gates = rows(MEASURE, "gates")
        self.assertEqual([key(r) + (r["gate"],) for r in gates], sorted(key(r) + (r["gate"],) for r in gates))
        # --sort keys come first; the default order breaks their ties.
        desc = rows(MEASURE, "all_linear", "--sort", "-layer")
        self.assertEqual([(-r["layer"],) + key(r) for r in desc], sorted((-r["layer"],) + key(r) for r in desc))

    def test_limit(self):
        every = rows(MEASURE, "fits")
        self.assertEqual(rows(MEASURE, "fits", "--limit", "3"), every[:3])
        self.assertEqual(rows(MEASURE, "fits", "--limit", "0"), [])
        self.assertEqual(rows(MEASURE, "fits", "--limit", str(len(every) + 5)), every)
        r = run(MEASURE, "fits", "--limit", "3")
        self.assertTrue(r.stdout.endswith(f"(3 of {len(every)} rows)\n"), r.stdout[-40:])


class Formats(unittest.TestCase):
    def test_csv_numbers_are_bare(self):
        r = run(MEASURE, "all_linear", "--format", "csv")
        self.assertEqual(r.returncode, 0)
        self.assertNotIn('"', r.stdout)  # no value here needs quotes
        lines = r.stdout.splitlines()
        col = lines[0].split(",").index("delta_pct")
        total = sum(float(line.split(",")[col]) for line in lines[1:])  # what awk -F, '{s+=$N}' does
        self.assertEqual(total, sum(x["delta_pct"] for x in rows(MEASURE, "all_linear")))

    def test_csv_quotes_only_strings_that_need_it(self):
        want = rows(TRAINING, "progressive")
        self.assertTrue(any("," in x["layers"] for x in want), "the fixture has comma-separated layers")
        text = run(TRAINING, "progressive", "--format", "csv").stdout
        got = list(csv.DictReader(io.StringIO(text)))
        self.assertEqual(len(got), len(want))
        for g, w in zip(got, want):
            for k, v in w.items():
                if isinstance(v, str):
                    self.assertEqual(g[k], v)
                else:  # NaN is null in JSON, nan in CSV
                    self.assertEqual(g[k] if v is None else float(g[k]), "nan" if v is None else v)
        quoted = [x["layers"] for x in want if "," in x["layers"]][0]
        self.assertIn(f',"{quoted}",', text)
        self.assertNotIn('"ppl"', text)

    def test_tsv(self):
        want = rows(TRAINING, "progressive")
        lines = run(TRAINING, "progressive", "--format", "tsv").stdout.splitlines()
        header = lines[0].split("\t")
        self.assertEqual(header, list(want[0]))
        for line, w in zip(lines[1:], want):
            cells = dict(zip(header, line.split("\t")))
            self.assertEqual(len(cells), len(header))
            for k, v in w.items():
                if isinstance(v, str):
                    self.assertEqual(cells[k], v)
                else:
                    self.assertEqual(cells[k] if v is None else float(cells[k]), "nan" if v is None else v)

    def test_json_keys_follow_columns(self):
        cols = ["layer", "delta_pct", "model", "unit"]
        got = rows(MEASURE, "all_linear", "--columns", ",".join(cols))
        self.assertTrue(got)
        for r in got:
            self.assertEqual(list(r), cols)
        self.assertEqual(list(rows(MEASURE, "all_linear")[0])[:3], ["model", "layer", "corpus"])  # schema order
        md = run(MEASURE, "all_linear", "--format", "md", "--columns", "model,layer").stdout
        self.assertTrue(md.startswith("| model | layer |\n|---|---:|\n"), md[:60])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
