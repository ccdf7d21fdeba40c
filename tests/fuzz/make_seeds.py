#!/usr/bin/python3
"""Writes the fuzzers' seed corpora, tests/fuzz/seeds/<target>/, from the repository's fixtures
(tests/data, examples/) and small hand-made inputs that reach the branches the fixtures do not
(other dtypes, byte orders, formats, parameters). Deterministic; rerun after changing it.

Usage: make_seeds.py [--units STORE]   STORE: a store whose units/ hold unit files written by
this build (the regular build's `storage.sample` test makes one in build/sample-store/store);
two of them become the unit_file seeds. Without it the unit_file seeds are left as they are.
"""
import argparse
import glob
import json
import os
import shutil
import struct
import sys

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(ROOT, "tests", "data")
OUT = os.path.join(ROOT, "tests", "fuzz", "seeds")
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
import gpt2_bytes  # noqa: E402


def put(target, name, data):
    os.makedirs(os.path.join(OUT, target), exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(OUT, target, name), "wb") as f:
        f.write(data)


def read(*parts):
    with open(os.path.join(*parts), "rb") as f:
        return f.read()


def safetensors(tensors, metadata=None, pad=True):
    """tensors: list of (name, dtype, shape, raw bytes)."""
    header, offset = {}, 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    text = json.dumps(header).encode()
    while pad and len(text) % 8:
        text += b" "
    return struct.pack("<Q", len(text)) + text + b"".join(t[3] for t in tensors)


def small_bpe():
    """A byte-level vocab (256 bytes + a few merges + <|endoftext|>) and its merges."""
    chars = gpt2_bytes.byte_to_char()
    vocab = {chars[b]: b for b in range(256)}
    merges = [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("i", "n"), ("in", "g"), ("Ġ", "w")]
    for a, b in merges:
        vocab[a + b] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    return vocab, merges


def npy(array, version=1):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (array.dtype.str, repr(tuple(array.shape)))
    lead = 10 if version == 1 else 12
    header += " " * ((64 - (lead + len(header) + 1) % 64) % 64) + "\n"
    size = struct.pack("<H", len(header)) if version == 1 else struct.pack("<I", len(header))
    return b"\x93NUMPY" + bytes([version, 0]) + size + header.encode("latin1") + array.tobytes()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--units", help="a store whose units/*.h5 give the unit_file seeds")
    args = ap.parse_args()
    for target in os.listdir(OUT) if os.path.isdir(OUT) else []:
        if target != "unit_file" or args.units:
            shutil.rmtree(os.path.join(OUT, target))

    # safetensors: small complete files, every dtype, empty and scalar shapes, and the fixtures'
    # real headers (their data cut off: the header parser is what is fuzzed).
    f32 = lambda n: np.arange(n, dtype="<f4").tobytes()
    put("safetensors", "two_f32.safetensors",
        safetensors([("wte.weight", "F32", [4, 2], f32(8)), ("ln_f.bias", "F32", [2], f32(2))], {"format": "pt"}))
    put("safetensors", "dtypes.safetensors", safetensors([
        ("f64", "F64", [2], b"\0" * 16), ("f16", "F16", [3], b"\0" * 6), ("bf16", "BF16", [1, 2], b"\0" * 4),
        ("i64", "I64", [1], b"\1" * 8), ("i32", "I32", [2], b"\2" * 8), ("i16", "I16", [2], b"\3" * 4),
        ("i8", "I8", [3], b"\4" * 3), ("u8", "U8", [2, 2], b"\5" * 4), ("bool", "BOOL", [1], b"\1")]))
    put("safetensors", "empty_and_scalar.safetensors",
        safetensors([("empty", "F32", [0, 3], b""), ("scalar", "F32", [], f32(1))], {}))
    put("safetensors", "unpadded.safetensors", safetensors([("x", "F16", [2, 2], b"\0" * 8)], pad=False))
    for model in ("tiny-gpt2", "tiny-neox"):
        raw = read(DATA, "models", model, "model.safetensors")
        n = struct.unpack("<Q", raw[:8])[0]
        put("safetensors", model + ".header.safetensors", raw[: 8 + n + 64])

    # safetensors_index: weight maps over the two shards fuzz_safetensors_index writes.
    s1, s2 = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"
    full = {"wte.weight": s1, "wpe.weight": s1, "h.0.mlp.c_fc.weight": s2, "ln_f.weight": s2, "h.0.attn.bias": s2}
    put("safetensors_index", "full.json", json.dumps({"metadata": {"total_size": 580}, "weight_map": full}, indent=2))
    put("safetensors_index", "one_shard.json", json.dumps({"weight_map": {"wte.weight": s1}}))
    put("safetensors_index", "missing_tensor.json", json.dumps({"weight_map": {"nope.weight": s2}}))
    put("safetensors_index", "escape.json", json.dumps({"weight_map": {"wte.weight": "../" + s1}}))

    # model_config: the fixtures' config.json files and variants of their optional fields.
    for model in ("tiny-gpt2", "tiny-neox", "tiny-neox-seq"):
        put("model_config", model + ".json", read(DATA, "models", model, "config.json"))
    put("model_config", "gpt2_minimal.json", json.dumps(
        {"model_type": "gpt2", "vocab_size": 50257, "n_embd": 768, "n_layer": 12, "n_head": 12}))
    put("model_config", "gpt2_options.json", json.dumps(
        {"model_type": "gpt2", "vocab_size": 64, "n_embd": 16, "n_layer": 1, "n_head": 2, "n_inner": 32,
         "n_positions": 32, "activation_function": "gelu", "layer_norm_epsilon": 1e-6, "tie_word_embeddings": False,
         "scale_attn_weights": False, "scale_attn_by_inverse_layer_idx": True, "eos_token_id": 3}))
    put("model_config", "neox_options.json", json.dumps(
        {"model_type": "gpt_neox", "vocab_size": 64, "hidden_size": 32, "num_hidden_layers": 2,
         "num_attention_heads": 4, "hidden_act": "gelu_new", "rotary_pct": 0.5, "rope_theta": 500.0,
         "use_parallel_residual": True, "tie_word_embeddings": True, "attention_bias": False}))
    hf5 = os.path.join(DATA, "models", "hf_transformers5")
    for model in sorted(os.listdir(hf5)):
        if os.path.isdir(os.path.join(hf5, model)):
            put("model_config", model + ".json", read(hf5, model, "config.json"))
            put("model_config", model + "-legacy.json", read(hf5, model, "config.legacy.json"))
    # The hub-layout families (4.x configs) and their 5.x forms, as make_zoo_fixtures.py writes them.
    import make_zoo_fixtures
    zoo = os.path.join(DATA, "models", "hf_zoo")
    for model in sorted(os.listdir(zoo)):
        if os.path.isdir(os.path.join(zoo, model)):
            put("model_config", "zoo-" + model + ".json", read(zoo, model, "config.json"))
            v5 = make_zoo_fixtures.to_v5(json.loads(read(zoo, model, "config.json")))
            put("model_config", "zoo-" + model + "-v5.json", json.dumps(v5, indent=2, sort_keys=True))
    put("model_config", "llama_rope_kinds.json", json.dumps(
        {"model_type": "llama", "vocab_size": 64, "hidden_size": 32, "num_hidden_layers": 1,
         "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 48, "head_dim": 16,
         "rope_scaling": {"type": "dynamic", "factor": 2.0}, "partial_rotary_factor": 0.5,
         "attention_bias": True, "mlp_bias": True, "sliding_window": 16, "layer_types": ["full_attention"]}))
    put("model_config", "unknown_type.json", json.dumps({"model_type": "mamba", "vocab_size": 1}))

    # vocab_merges: vocab.json, a NUL, merges.txt.
    put("vocab_merges", "tiny-gpt2", read(DATA, "models", "tiny-gpt2", "vocab.json") + b"\0" +
        read(DATA, "models", "tiny-gpt2", "merges.txt"))
    vocab, merges = small_bpe()
    merges_txt = "#version: 0.2\n" + "".join("%s %s\n" % m for m in merges)
    put("vocab_merges", "small", json.dumps(vocab, ensure_ascii=False) + "\0" + merges_txt)
    put("vocab_merges", "small_crlf", json.dumps(vocab) + "\0" + merges_txt.replace("\n", "\r\n"))

    # tokenizer_json: the fixtures' files and a small one with every option the loader reads.
    for model in ("tiny-neox", "tiny-neox-seq"):
        put("tokenizer_json", model + ".json", read(DATA, "models", model, "tokenizer.json"))
    small = {"version": "1.0", "normalizer": {"type": "NFC"},
             "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "ByteLevel", "add_prefix_space": True}]},
             "added_tokens": [{"id": vocab["<|endoftext|>"], "content": "<|endoftext|>", "special": True},
                              {"id": len(vocab), "content": "<pad>", "special": True}],
             "model": {"type": "BPE", "vocab": vocab, "merges": [list(m) for m in merges[:3]] + ["%s %s" % m for m in merges[3:]]}}
    put("tokenizer_json", "small_options.json", json.dumps(small, ensure_ascii=False))
    llama3 = dict(small, normalizer=None, pre_tokenizer={"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
                                               r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"},
         "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False}]},
        post_processor={"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<pad>", "type_id": 0}},
                                                                 {"Sequence": {"id": "A", "type_id": 0}}],
                        "special_tokens": {"<pad>": {"id": "<pad>", "ids": [len(vocab)], "tokens": ["<pad>"]}}},
        model=dict(small["model"], ignore_merges=True))
    put("tokenizer_json", "llama3_split.json", json.dumps(llama3, ensure_ascii=False))
    metaspace = dict(small, pre_tokenizer={"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first"},
                     model=dict(small["model"], byte_fallback=True))
    put("tokenizer_json", "metaspace.json", json.dumps(metaspace, ensure_ascii=False))

    # tokenizer_model: SentencePiece models trained on the fixture text (BPE with byte fallback as
    # Llama 2's, and unigram; no normalizer, as Llama 2 has), by Debian's python3-sentencepiece.
    import sentencepiece as spm
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, "corpus.txt")
        with open(corpus, "wb") as f:
            f.write(read(DATA, "tokenizer", "brown_fiction.txt") + read(DATA, "tokenizer", "edge.txt"))
        for name, opts in (("bpe_byte_fallback", dict(model_type="bpe", byte_fallback=True, vocab_size=400)),
                           ("unigram", dict(model_type="unigram", vocab_size=200))):
            spm.SentencePieceTrainer.train(input=corpus, model_prefix=os.path.join(tmp, name), hard_vocab_limit=False,
                                           normalization_rule_name="identity", num_threads=1, minloglevel=2, **opts)
            put("tokenizer_model", name + ".model", read(tmp, name + ".model"))

    # tokenizer_config: what transformers writes (AddedToken objects, booleans) and plain strings.
    put("tokenizer_config", "added_token_objects.json", json.dumps({
        "add_bos_token": True, "add_eos_token": False, "bos_token": {"content": "<|endoftext|>", "lstrip": False},
        "eos_token": {"content": "<|endoftext|>", "special": True}, "model_max_length": 2048}))
    put("tokenizer_config", "strings.json", json.dumps({"add_bos_token": False, "bos_token": "<|endoftext|>",
                                                        "eos_token": None, "add_eos_token": True}))

    # spec: the examples (their ../tests paths resolve inside the fuzzer's scratch directory),
    # and one with the less common fields.
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "*.yaml"))):
        put("spec", os.path.basename(path), read(path))
    put("spec", "options.yaml", """store: ../runs/x
models:
  - {name: g, path: ../tests/data/models/tiny-gpt2, dtype: bfloat16}
corpora:
  - {name: a, path: ../tests/data/models/tiny-gpt2.tokens.npy}
  - {name: b, path: ../tests/data/tokenizer/edge.txt, format: text}
splits:
  fit: {start: 0, tokens: 64}
  train: {start: 64, tokens: 64}
layers: ["0-1", 2]
experiments:
  gate: {variants: [linear, "pca:4"], holdout: 0.25}
  token_context: {layers: [1]}
  progressive: {model: g, corpus: a, eval_corpora: [b], order: [2, 1, 0], trainable: [mlp, head]}
  finetune: {model: g, corpus: a, layers: [1], variants: [linearized, two_phase], phase1_fraction: 0.3}
  noop:
runtime: {device: "cuda:1", threads: 2, activation_dtype: bfloat16}
resources:
  nodes: 2
  mem: 8G
  partition: gpu
  extra_sbatch: ["--exclusive"]
  launcher: srun
""")

    # wikitext: articles and sections; brown_fiction.txt as text with headings added.
    put("wikitext", "articles.raw", " \n = Alpha = \n \n Alpha is a letter . \n \n = = History = = \n"
        " It came from Phoenician . \n = Beta = \n \n Beta follows @-@ alpha , 2 @,@ 000 times . \n")
    fiction = read(DATA, "tokenizer", "brown_fiction.txt").decode()
    put("wikitext", "fiction.raw", " = Fiction = \n" + fiction[:4000] + "\n = More = \n" + fiction[4000:8000])

    # lambada: JSON lines.
    put("lambada", "lines.jsonl", "".join(json.dumps({"text": t}) + "\n" for t in
        ["He picked up the ball and threw it to his dog", "“Quoted” text, unicode é and\na newline", ""]) + "\n  \n")
    put("lambada", "crlf.jsonl", '{"text": "one"}\r\n{"text": "two", "domain": null}\r\n')

    # brown: tagged text in the Brown Corpus's layout (the corpus itself is fetched at test time,
    # not kept in the repository): paragraphs, quotes both ways, brackets, contractions.
    put("brown", "small", "\n\n\tThe/at Fulton/np-tl County/nn-tl ``/`` said/vbd ''/'' ./.\n\n"
        "\t(/( It/pps was/bedz n't/* done/vbn )/) ,/, he/pps said/vbd ;/. '/' the/at man's/nn$ \"/\" ok/uh \"/\" !/.\n")
    put("brown", "paragraphs", "".join(
        "\n\n\t%s/np said/vbd the/at jury/nn had/hvd [/[ %d/cd ]/] votes/nns :/: ``/`` yes/rb ''/'' ,/, ?/. "
        "it's/pps+bez a/at/ /x ///, end/nn ./.\n" % (w, i) for i, w in enumerate(["Ivan", "Mary", "Dr./np"])))

    # npy: the fixture stream and every dtype, byte order, version and shape the reader accepts.
    put("npy", "tiny-gpt2.tokens.npy", read(DATA, "models", "tiny-gpt2.tokens.npy"))
    tokens = np.array([3, 1, 4, 1, 5, 9, 2, 6], dtype="<i4")
    put("npy", "i4.npy", npy(tokens))
    put("npy", "be_i8_2d.npy", npy(tokens.astype(">i8").reshape(2, 4)))
    put("npy", "u2_v2.npy", npy(tokens.astype("<u2"), version=2))
    put("npy", "i4_v3_3d.npy", npy(tokens.reshape(2, 2, 2), version=3))

    # unit_file: unit files of a store written by this build.
    if args.units:
        units = sorted(glob.glob(os.path.join(args.units, "units", "**", "*.h5"), recursive=True))
        if not units:
            raise SystemExit("make_seeds.py: no units/*.h5 under " + args.units)
        by_size = sorted(units, key=os.path.getsize)
        for path in (by_size[0], by_size[-1]):
            put("unit_file", os.path.basename(path), read(path))


if __name__ == "__main__":
    main()
