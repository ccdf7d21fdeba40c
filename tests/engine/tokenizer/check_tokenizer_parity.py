#!/usr/bin/python3
"""`linsweep tokenize` against independent references on text with Unicode, digits, whitespace
runs and code:

- SentencePiece tokenizer.model files (a Llama-2-like BPE with byte fallback and split digits,
  and a unigram model with SentencePiece's default normalizer) trained here with Debian's
  python3-sentencepiece, whose encoder gives the expected ids; a document starts with the BOS.
- tokenizer.json byte-level BPE with Llama 3's and Qwen2's Split patterns (and Pythia's own
  ByteLevel file, tests/data/models/tiny-neox), against the BPE written below (python3-regex for
  \\p{L}); Llama 3's ignore_merges and TemplateProcessing BOS included.

Usage: check_tokenizer_parity.py LINSWEEP WORK_DIR"""
import copy
import json
import os
import shutil
import subprocess
import sys
import unicodedata

import regex
import sentencepiece as spm

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "support"))
import gpt2_bytes  # noqa: E402

NEOX = os.path.join(HERE, "..", "..", "data", "models", "tiny-neox", "tokenizer.json")

TEXTS = {
    "unicode": "Grüße, naïve café — 東京タワー 😀 Ωmega ÷ ﬁne ｆｕｌｌ\n",
    "digits": "In 1984, 3.14159 and 1234567890 items cost $12,345.67 (0x1F; 2e-9).\n",
    "whitespace": "a  b   c\t\td\n\n\n   e \r\n  f    \n",
    "code": "def f(x):\n    return {'k': x ** 2}  # note\n\nif __name__ == \"__main__\":\n\tprint(f(3))\n",
    "contractions": "It's what they'd've said; we'll SEE, I'M sure you're right.\n",
}

LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
          r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
         r"|\s*[\r\n]+|\s+(?!\S)|\s+")
GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

failures = []


def check(name, got, want):
    if got != want:
        failures.append(name)
        print(f"FAIL {name}\n  got  {got}\n  want {want}")


def tokenize(linsweep, model_dir, text_path, *flags):
    r = subprocess.run([linsweep, "tokenize", "--model", model_dir, "--in", text_path, "--json", *flags],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"linsweep tokenize {model_dir} exited {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


# --- the BPE reference -------------------------------------------------------------------------

BYTES = gpt2_bytes.byte_to_char()


def split_isolated(pattern, text):
    """HF's Split with behavior Isolated: every match and every gap between matches."""
    words, at = [], 0
    for m in regex.finditer(pattern, text):
        if m.start() > at:
            words.append(text[at:m.start()])
        if m.end() > m.start():
            words.append(m.group())
        at = m.end()
    if at < len(text):
        words.append(text[at:])
    return words


def bpe(word, ranks):
    parts = list(word)
    while len(parts) > 1:
        pairs = [(ranks.get((a, b)), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
        pairs = [p for p in pairs if p[0] is not None]
        if not pairs:
            break
        _, i = min(pairs)
        parts[i:i + 2] = [parts[i] + parts[i + 1]]
    return parts


def reference_encode(tok, text):
    model = tok["model"]
    vocab = model["vocab"]
    ranks = {}
    for i, m in enumerate(model["merges"]):
        a, b = m.split(" ") if isinstance(m, str) else m
        ranks[(a, b)] = i
    if tok.get("normalizer") and tok["normalizer"]["type"] == "NFC":
        text = unicodedata.normalize("NFC", text)
    pre = tok["pre_tokenizer"]
    steps = pre["pretokenizers"] if pre["type"] == "Sequence" else [pre]
    words = [text]
    for step in steps:
        if step["type"] == "Split":
            words = [w for word in words for w in split_isolated(step["pattern"]["Regex"], word)]
        elif step.get("use_regex", True):
            words = [w for word in words for w in regex.findall(GPT2, word)]
    ids = []
    for word in words:
        mapped = "".join(BYTES[b] for b in word.encode("utf-8"))
        if model.get("ignore_merges") and mapped in vocab:
            ids.append(vocab[mapped])
            continue
        ids.extend(vocab[p] for p in bpe(mapped, ranks))
    return ids


def with_split(neox, pattern, normalizer=None, bos=False, ignore_merges=False):
    tok = copy.deepcopy(neox)
    tok["normalizer"] = normalizer
    tok["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
    tok["model"]["ignore_merges"] = ignore_merges
    if ignore_merges:  # a whole word in the vocabulary that merges alone would not reach
        tok["model"]["vocab"]["Ġzqx"] = len(tok["model"]["vocab"]) + 1
    if bos:
        tok["added_tokens"].append({"id": 1024, "content": "<|begin_of_text|>", "single_word": False, "lstrip": False,
                                    "rstrip": False, "normalized": False, "special": True})
        tok["model"]["vocab"]["<|begin_of_text|>"] = 1024
        tok["post_processor"] = {"type": "TemplateProcessing",
                                 "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
                                            {"Sequence": {"id": "A", "type_id": 0}}],
                                 "pair": [], "special_tokens": {"<|begin_of_text|>": {
                                     "id": "<|begin_of_text|>", "ids": [1024], "tokens": ["<|begin_of_text|>"]}}}
    return tok


def check_bpe(linsweep, work, texts):
    neox = json.load(open(NEOX, encoding="utf-8"))
    models = {
        "pythia": (neox, []),
        "llama3": (with_split(neox, LLAMA3, bos=True, ignore_merges=True), [1024]),
        "qwen2": (with_split(neox, QWEN2, normalizer={"type": "NFC"}), []),
    }
    for name, (tok, bos) in models.items():
        d = os.path.join(work, name)
        os.makedirs(d)
        with open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(tok, f, ensure_ascii=False)
        for tname, path in texts.items():
            text = open(path, encoding="utf-8", newline="").read() + (" zqx" if name == "llama3" else "")
            if name == "llama3":
                with open(path + ".zqx", "w", encoding="utf-8", newline="") as f:
                    f.write(text)
                path += ".zqx"
            want = reference_encode(tok, text)
            check(f"bpe {name} {tname}", tokenize(linsweep, d, path), want)
            check(f"bpe {name} {tname} document", tokenize(linsweep, d, path, "--document"), bos + want)


# --- SentencePiece -----------------------------------------------------------------------------

def train_corpus(path):
    lines = [t for t in TEXTS.values()] * 3
    lines += [f"line {i}: the quick brown fox jumps over the lazy dog {i * 37}" for i in range(200)]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def check_sentencepiece(linsweep, work, texts):
    corpus = os.path.join(work, "spm_corpus.txt")
    train_corpus(corpus)
    models = {
        # Llama 2's choices: BPE, identity normalizer, whitespace kept, digits split, byte fallback.
        "llama2": dict(model_type="bpe", vocab_size=600, byte_fallback=True, split_digits=True,
                       normalization_rule_name="identity", remove_extra_whitespaces=False,
                       allow_whitespace_only_pieces=True),
        "unigram": dict(model_type="unigram", vocab_size=300),
    }
    for name, opts in models.items():
        d = os.path.join(work, "spm-" + name)
        os.makedirs(d)
        spm.SentencePieceTrainer.train(input=corpus, model_prefix=os.path.join(d, "tokenizer"), hard_vocab_limit=False,
                                       character_coverage=1.0, minloglevel=2, **opts)
        sp = spm.SentencePieceProcessor(model_file=os.path.join(d, "tokenizer.model"))
        for tname, path in texts.items():
            want = sp.encode(open(path, encoding="utf-8", newline="").read())
            check(f"spm {name} {tname}", tokenize(linsweep, d, path), want)
            check(f"spm {name} {tname} document", tokenize(linsweep, d, path, "--document"), [sp.bos_id()] + want)
        if name == "llama2":
            # A character the training text lacks has no piece: its UTF-8 bytes become <0xNN> pieces.
            rare = "\U0001D11E"
            path = os.path.join(work, "rare.txt")
            with open(path, "w", encoding="utf-8") as f:
                f.write("clef " + rare + "\n")
            fallback = [sp.piece_to_id(f"<0x{b:02X}>") for b in rare.encode("utf-8")]
            check("spm llama2 byte fallback (python)", all(i in sp.encode("clef " + rare + "\n") for i in fallback), True)
            check("spm llama2 byte fallback", all(i in tokenize(linsweep, d, path) for i in fallback), True)


def main():
    linsweep, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    texts = {}
    for name, text in TEXTS.items():
        texts[name] = os.path.join(work, name + ".txt")
        with open(texts[name], "w", encoding="utf-8", newline="") as f:
            f.write(text)
    check_bpe(linsweep, work, texts)
    check_sentencepiece(linsweep, work, texts)
    if failures:
        raise SystemExit(f"{len(failures)} mismatches: {', '.join(failures)}")
    print("tokenizer parity: all ids match")


if __name__ == "__main__":
    main()
