#!/usr/bin/python3
"""linsweep_store.Tokenizer decodes the ids `linsweep tokenize` (the C++ encoder) gives back to the
text, for each kind of tokenizer file a model directory may hold: GPT-2's vocab.json + merges.txt
(tests/data/models/tiny-gpt2), a byte-level tokenizer.json (tiny-neox), a SentencePiece
tokenizer.model with byte fallback trained here with python3-sentencepiece, and a Llama-2-style
tokenizer.json ("▁" pieces, <0xNN> byte fallback, Strip decoder) written from that model's pieces.

Usage: test_tokenizer.py LINSWEEP SOURCE_DIR"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import sentencepiece as spm

LINSWEEP, SRC = (os.path.abspath(a) for a in sys.argv[1:3])
del sys.argv[1:3]
sys.path.insert(0, os.path.join(SRC, "python"))
from linsweep_store import StoreError, Tokenizer  # noqa: E402

TEXT = ("Grüße, naïve café — 東京タワー 😀 Ωmega\n"
        "In 1984, 3.14159 and $12,345.67 (0x1F; 2e-9).\n"
        "  two spaces,\ttab and\r\nCRLF; def f(x): return {'k': x ** 2}\n")


def encode(model_dir, path):
    r = subprocess.run([LINSWEEP, "tokenize", "--model", model_dir, "--in", path, "--json"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise AssertionError(f"linsweep tokenize {model_dir}: exit {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


class TokenizerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.TemporaryDirectory()
        cls.text_path = os.path.join(cls.work.name, "text.txt")
        with open(cls.text_path, "w", encoding="utf-8", newline="") as f:
            f.write(TEXT)
        corpus = os.path.join(cls.work.name, "corpus.txt")
        with open(corpus, "w", encoding="utf-8") as f:
            f.write("\n".join([f"line {i}: the quick brown fox jumps over the lazy dog {i * 37}" for i in range(200)]))
        cls.spm_dir = os.path.join(cls.work.name, "spm")
        os.makedirs(cls.spm_dir)
        spm.SentencePieceTrainer.train(input=corpus, model_prefix=os.path.join(cls.spm_dir, "tokenizer"),
                                       model_type="bpe", vocab_size=400, byte_fallback=True, split_digits=True,
                                       normalization_rule_name="identity", remove_extra_whitespaces=False,
                                       allow_whitespace_only_pieces=True, hard_vocab_limit=False,
                                       character_coverage=1.0, minloglevel=2)

    @classmethod
    def tearDownClass(cls):
        cls.work.cleanup()

    def round_trip(self, model_dir):
        ids = encode(model_dir, self.text_path)
        tok = Tokenizer(model_dir)
        self.assertEqual(tok.decode(ids), TEXT, model_dir)
        pieces = tok.pieces(ids)
        self.assertEqual(len(pieces), len(ids))
        return ids, tok

    def test_gpt2_vocab_json(self):
        ids, tok = self.round_trip(os.path.join(SRC, "tests", "data", "models", "tiny-gpt2"))
        pieces = tok.pieces(encode_text(self, "The cat"))  # each token's own text, spaces kept
        self.assertEqual("".join(pieces), "The cat")
        self.assertTrue(len(pieces) > 1 and any(p.startswith(" ") for p in pieces), pieces)

    def test_byte_level_tokenizer_json(self):
        self.round_trip(os.path.join(SRC, "tests", "data", "models", "tiny-neox"))

    def test_sentencepiece_model(self):
        ids, _ = self.round_trip(self.spm_dir)
        self.assertTrue(any(Tokenizer(self.spm_dir).pieces([i])[0] == "\ufffd" for i in ids), "no byte-fallback piece")

    def test_sentencepiece_style_tokenizer_json(self):
        # The same pieces as a Llama-2-style tokenizer.json: decoding it must give what the
        # SentencePiece model's own ids spell.
        sp = spm.SentencePieceProcessor(model_file=os.path.join(self.spm_dir, "tokenizer.model"))
        d = os.path.join(self.work.name, "spm-json")
        os.makedirs(d, exist_ok=True)
        tok = {"model": {"type": "BPE", "vocab": {sp.id_to_piece(i): i for i in range(sp.get_piece_size())},
                         "merges": [], "byte_fallback": True},
               "added_tokens": [{"id": 1, "content": "<s>", "special": True}],
               "decoder": {"type": "Sequence", "decoders": [
                   {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
                   {"type": "ByteFallback"}, {"type": "Fuse"},
                   {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}}
        with open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(tok, f, ensure_ascii=False)
        ids = encode(self.spm_dir, self.text_path)
        self.assertEqual(Tokenizer(d).decode(ids), sp.decode(ids))
        self.assertEqual(Tokenizer(d).decode(ids), TEXT)

    def test_errors(self):
        with self.assertRaisesRegex(StoreError, "does not exist"):
            Tokenizer(os.path.join(self.work.name, "missing"))
        with self.assertRaisesRegex(StoreError, "no tokenizer.json, vocab.json or tokenizer.model"):
            Tokenizer(self.work.name)
        tok = Tokenizer(os.path.join(SRC, "tests", "data", "models", "tiny-gpt2"))
        with self.assertRaisesRegex(StoreError, "outside the vocabulary"):
            tok.decode([len(tok) + 5])


def encode_text(test, text):
    path = os.path.join(test.work.name, "short.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return encode(os.path.join(SRC, "tests", "data", "models", "tiny-gpt2"), path)


if __name__ == "__main__":
    unittest.main(verbosity=1)
