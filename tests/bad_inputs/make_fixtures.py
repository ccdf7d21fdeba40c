#!/usr/bin/python3
"""Writes the good_* and bad_* inputs of the bad-input catalogue (cases.tsv) into a directory.

Usage: make_fixtures.py LINSWEEP_BINARY SOURCE_DIR FIXTURE_DIR

Every bad_* input is a small, single-fault derivation of a good one, so that a case's error
can only come from the fault it is named after. Model directories share the fixture weights
through symlinks and own only the file they break. Stores are made by running the real binary
once on good_store.yaml and then corrupting one file per copy.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib

import numpy as np


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    mode = "wb" if isinstance(data, (bytes, bytearray)) else "w"
    with open(path, mode) as f:
        f.write(data)


def model_dir(fx, name, src, replace=None, drop=()):
    """A model directory: symlinks to src's files, except those replaced or dropped."""
    d = os.path.join(fx, "models", name)
    os.makedirs(d, exist_ok=True)
    replace = replace or {}
    for f in sorted(os.listdir(src)):
        if f in replace or f in drop:
            continue
        os.symlink(os.path.join(src, f), os.path.join(d, f))
    for f, data in replace.items():
        write(os.path.join(d, f), data)
    return d


def changed(value, changes):
    """A deep copy of the JSON object value with changes made: a key given None is removed."""
    c = json.loads(json.dumps(value))
    for k, v in changes.items():
        if v is None:
            c.pop(k, None)
        else:
            c[k] = v
    return c


def read_safetensors(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8:8 + n]), raw[8 + n:]


def safetensors_bytes(header, data, raw_header=None):
    text = raw_header if raw_header is not None else json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


def npy_bytes(descr, shape, payload, header=None):
    if header is None:
        header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    h = header.encode()
    h += b" " * ((64 - (10 + len(h) + 1) % 64) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + payload


def decoder_models(fx, src):
    """The pre-norm decoders' faults: tests/support/make_decoder_fixtures.py's models, each with
    one key or tensor broken."""
    sys.path.insert(0, os.path.join(src, "tests", "support"))
    import make_decoder_fixtures
    decoders = os.path.join(fx, "decoders")
    make_decoder_fixtures.main(decoders)

    def base(name):
        d = os.path.join(decoders, name)
        return d, json.load(open(os.path.join(d, "config.json")))

    llama, lc = base("tiny-llama-f32")
    gemma, gc = base("tiny-gemma-f32")
    mistral, mc = base("tiny-mistral-f32")
    cfg = lambda c, **changes: json.dumps(changed(c, changes))  # noqa: E731
    model_dir(fx, "bad_llama_rope_type", llama,
              {"config.json": cfg(lc, rope_parameters={"rope_type": "yarn", "rope_theta": 1e4, "factor": 4.0})})
    model_dir(fx, "bad_llama_llama3_fields", llama,
              {"config.json": cfg(lc, rope_parameters={"rope_type": "llama3", "rope_theta": 5e5, "factor": 8.0})})
    model_dir(fx, "bad_llama_kv_heads", llama, {"config.json": cfg(lc, num_key_value_heads=3)})
    model_dir(fx, "good_llama", llama)  # a good model whose MLP has no biases
    model_dir(fx, "bad_gemma_softcap", gemma, {"config.json": cfg(gc, final_logit_softcapping=30.0)})
    model_dir(fx, "bad_gemma_attn_softcap", gemma, {"config.json": cfg(gc, attn_logit_softcapping=50.0)})
    # transformers 4.x's form: rope_theta beside rope_scaling, whose kind is under "type".
    v4 = cfg(lc, rope_parameters=None, rope_theta=1e4, rope_scaling={"type": "yarn", "factor": 4.0})
    model_dir(fx, "bad_llama_rope_scaling_v4", llama, {"config.json": v4})
    model_dir(fx, "bad_mistral_window", mistral, {"config.json": cfg(mc, sliding_window=-16)})
    model_dir(fx, "bad_llama_softcap", llama, {"config.json": cfg(lc, final_logit_softcapping=30.0)})
    # One norm weight gone; an ignored buffer of the same size keeps the parameter count, so
    # that the loader reports the missing tensor by name.
    header, payload = read_safetensors(os.path.join(llama, "model.safetensors"))
    gone = "model.layers.1.post_attention_layernorm.weight"
    header["model.layers.0.self_attn.rotary_emb.inv_freq"] = dict(header.pop(gone))
    model_dir(fx, "bad_llama_missing_tensor", llama, {"model.safetensors": safetensors_bytes(header, payload)})


def without_tensor(path, gone, decoy):
    """model.safetensors bytes of `path` with tensor `gone` renamed to the ignored buffer `decoy`,
    so that the parameter count holds and the loader reports the missing tensor by name."""
    header, payload = read_safetensors(path)
    header[decoy] = dict(header.pop(gone))
    return safetensors_bytes(header, payload)


def zoo_models(fx, src):
    """The hf_zoo families' faults (tests/data/models/hf_zoo), each with one key or tensor broken."""
    zoo = os.path.join(src, "tests", "data", "models", "hf_zoo")

    def base(name):
        d = os.path.join(zoo, name)
        return d, json.load(open(os.path.join(d, "config.json")))

    cfg = lambda c, **changes: json.dumps(changed(c, changes))  # noqa: E731
    mixtral, xc = base("mixtral-bf16")
    olmoe, oc = base("olmoe-f32")
    qwen_moe, qc = base("qwen2-moe-f32")
    qwen3, q3 = base("qwen3-f32")
    phi3, pc = base("phi3-f32")
    gemma2, g2 = base("gemma2-bf16")
    model_dir(fx, "bad_qwen3_rope_type", qwen3, {"config.json": cfg(q3, rope_scaling={"rope_type": "yarn", "factor": 4.0})})
    model_dir(fx, "bad_qwen3_softcap", qwen3, {"config.json": cfg(q3, attn_logit_softcapping=50.0)})
    model_dir(fx, "bad_mixtral_kv_heads", mixtral, {"config.json": cfg(xc, num_key_value_heads=3)})
    model_dir(fx, "bad_mixtral_top_k", mixtral, {"config.json": cfg(xc, num_experts_per_tok=5)})
    model_dir(fx, "bad_olmoe_top_k", olmoe, {"config.json": cfg(oc, num_experts_per_tok=9)})
    model_dir(fx, "bad_qwen2_moe_dense_layer", qwen_moe, {"config.json": cfg(qc, mlp_only_layers=[0, 3])})
    decoy = "model.layers.0.self_attn.rotary_emb.inv_freq"
    gone = "model.layers.1.block_sparse_moe.experts.3.w2.weight"
    model_dir(fx, "bad_mixtral_missing_expert", mixtral,
              {"model.safetensors": without_tensor(os.path.join(mixtral, "model.safetensors"), gone, decoy)})
    gone = "model.layers.2.mlp.shared_expert_gate.weight"
    model_dir(fx, "bad_qwen2_moe_missing_shared_gate", qwen_moe,
              {"model.safetensors": without_tensor(os.path.join(qwen_moe, "model.safetensors"), gone, decoy)})
    longrope = {"type": "longrope", "short_factor": [1.0] * 9, "long_factor": [2.0] * 9}
    model_dir(fx, "bad_phi3_longrope", phi3, {"config.json": cfg(pc, rope_scaling=longrope)})
    model_dir(fx, "bad_phi3_su", phi3, {"config.json": cfg(pc, rope_scaling=dict(longrope, type="su"))})
    v5 = cfg(pc, rope_theta=None, rope_scaling=None,
             rope_parameters={"rope_type": "longrope", "rope_theta": 1e4, "short_factor": [1.0] * 9})
    model_dir(fx, "bad_phi3_longrope_v5", phi3, {"config.json": v5})
    model_dir(fx, "bad_gemma2_layer_types", gemma2,
              {"config.json": cfg(g2, layer_types=["sliding_attention", "chunked_attention", "sliding_attention"])})
    model_dir(fx, "bad_gemma2_softcap", gemma2, {"config.json": cfg(g2, final_logit_softcapping=-30.0)})


def hub_cache(fx, gpt2):
    """A Hugging Face hub cache, fx/hub: models--org--tiny as huggingface_hub lays it out (refs/main
    naming a commit, snapshots/<commit>/ linking into blobs/), and models--org--partial, a download
    that never wrote snapshots/ (blobs/ only)."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    folder = os.path.join(fx, "hub", "models--org--tiny")
    write(os.path.join(folder, "refs", "main"), commit)
    snapshot = os.path.join(folder, "snapshots", commit)
    os.makedirs(snapshot)
    for f in sorted(os.listdir(gpt2)):
        blob = os.path.join(folder, "blobs", f + ".blob")
        write(blob, open(os.path.join(gpt2, f), "rb").read())
        os.symlink(os.path.join("..", "..", "blobs", f + ".blob"), os.path.join(snapshot, f))
    write(os.path.join(fx, "hub", "models--org--partial", "blobs", "0badc0de"), b"")


def main():
    binary, src, fx = sys.argv[1], sys.argv[2], sys.argv[3]
    data = os.path.join(src, "tests", "data")
    gpt2 = os.path.join(data, "models", "tiny-gpt2")
    neox = os.path.join(data, "models", "tiny-neox")
    shutil.rmtree(fx, ignore_errors=True)
    os.makedirs(fx)

    # ---- model directories -------------------------------------------------------------
    config = json.load(open(os.path.join(gpt2, "config.json")))

    def cfg(**changes):
        return json.dumps(changed(config, changes))

    model_dir(fx, "good_gpt2", gpt2)
    model_dir(fx, "bad_config_not_json", gpt2, {"config.json": '{"model_type": "gpt2", "n_embd": 64,'})
    model_dir(fx, "bad_config_missing_field", gpt2, {"config.json": cfg(n_layer=None)})
    model_dir(fx, "bad_config_wrong_type", gpt2, {"config.json": cfg(n_head="four")})
    model_dir(fx, "bad_config_negative", gpt2, {"config.json": cfg(n_embd=-64)})
    model_dir(fx, "bad_config_huge", gpt2, {"config.json": cfg(n_embd=1 << 40, n_head=1)})
    model_dir(fx, "bad_config_unknown_type", gpt2, {"config.json": cfg(model_type="mamba")})
    model_dir(fx, "bad_config_missing", gpt2, drop=("config.json",))
    model_dir(fx, "bad_pickle_only", gpt2, {"pytorch_model.bin": b"\x80\x02}q\x00."}, drop=("model.safetensors",))

    decoder_models(fx, src)
    zoo_models(fx, src)
    hub_cache(fx, gpt2)

    header, payload = read_safetensors(os.path.join(gpt2, "model.safetensors"))
    good_st = open(os.path.join(gpt2, "model.safetensors"), "rb").read()
    names = [k for k in header if k != "__metadata__"]
    first = sorted(names, key=lambda k: header[k]["data_offsets"][0])
    a, b = first[0], first[1]

    def st_with(**entries):
        return safetensors_bytes(changed(header, entries), payload)

    def entry(name, **changes):
        e = dict(header[name])
        e.update(changes)
        return e

    model_dir(fx, "bad_st_truncated", gpt2, {"model.safetensors": good_st[: len(good_st) // 2]})
    model_dir(fx, "bad_st_header_len", gpt2, {"model.safetensors": struct.pack("<Q", len(good_st)) + good_st[8:]})
    model_dir(fx, "bad_st_header_not_json", gpt2,
              {"model.safetensors": safetensors_bytes(None, payload, raw_header=b"{not json at all}   ")})
    end = header[a]["data_offsets"][1]
    model_dir(fx, "bad_st_offsets_out", gpt2,
              {"model.safetensors": st_with(**{a: entry(a, data_offsets=[len(payload) - 4, len(payload) - 4 + end])})})
    blen = header[b]["data_offsets"][1] - header[b]["data_offsets"][0]
    model_dir(fx, "bad_st_overlap", gpt2,
              {"model.safetensors": st_with(**{b: entry(b, data_offsets=[0, blen])})})
    model_dir(fx, "bad_st_dtype", gpt2, {"model.safetensors": st_with(**{a: entry(a, dtype="F8_E4M3X")})})
    shape = list(header[a]["shape"])
    model_dir(fx, "bad_st_shape_bytes", gpt2,
              {"model.safetensors": st_with(**{a: entry(a, shape=[shape[0] + 1] + shape[1:])})})
    model_dir(fx, "bad_st_missing_tensor", gpt2, {"model.safetensors": st_with(**{a: None})})
    # Same bytes, but the shape disagrees with config.json (a transposed Conv1D weight).
    conv = next(k for k in names if k.endswith("mlp.c_fc.weight"))
    cs = header[conv]["shape"]
    model_dir(fx, "bad_st_wrong_shape", gpt2, {"model.safetensors": st_with(**{conv: entry(conv, shape=[cs[1], cs[0]])})})

    # Sharded checkpoints: model.safetensors.index.json
    index = {"metadata": {}, "weight_map": {k: "model-00001-of-00001.safetensors" for k in names}}
    shard_files = {"model-00001-of-00001.safetensors": good_st}
    model_dir(fx, "bad_index_not_json", gpt2, dict(shard_files, **{"model.safetensors.index.json": "{weight_map: }"}),
              drop=("model.safetensors",))
    missing = dict(index, weight_map=dict(index["weight_map"], **{a: "model-00002-of-00002.safetensors"}))
    model_dir(fx, "bad_index_missing_shard", gpt2, dict(shard_files, **{"model.safetensors.index.json": json.dumps(missing)}),
              drop=("model.safetensors",))
    escape = dict(index, weight_map=dict(index["weight_map"], **{a: "../good_gpt2/model.safetensors"}))
    model_dir(fx, "bad_index_path_escape", gpt2, dict(shard_files, **{"model.safetensors.index.json": json.dumps(escape)}),
              drop=("model.safetensors",))

    # Tokenizers (gpt2: vocab.json + merges.txt; neox: tokenizer.json)
    vocab = json.load(open(os.path.join(gpt2, "vocab.json")))
    merges = open(os.path.join(gpt2, "merges.txt"), encoding="utf-8").read().splitlines()
    model_dir(fx, "bad_vocab_not_json", gpt2, {"vocab.json": '{"a": 1, '})
    model_dir(fx, "bad_vocab_id_type", gpt2, {"vocab.json": json.dumps(dict(vocab, **{"Ġthe": "7"}))})
    model_dir(fx, "bad_vocab_missing_byte", gpt2, {"vocab.json": json.dumps({k: v for k, v in vocab.items() if k != "!"})})
    model_dir(fx, "bad_merges_one_symbol", gpt2, {"merges.txt": "\n".join(merges[:5] + ["Ġt"] + merges[5:]) + "\n"})
    model_dir(fx, "bad_tokenizer_none", gpt2, drop=("vocab.json", "merges.txt"))
    tok = json.load(open(os.path.join(neox, "tokenizer.json")))

    def tok_with(**changes):
        t = json.loads(json.dumps(tok))
        for k, v in changes.items():
            t["model"][k] = v
        return json.dumps(t)

    model_dir(fx, "bad_tokjson_not_json", neox, {"tokenizer.json": '{"model": {"vocab": '})
    model_dir(fx, "bad_tokjson_merges_type", neox, {"tokenizer.json": tok_with(merges={"a": "b"})})
    whitespace = dict(json.loads(tok_with()), pre_tokenizer={"type": "Whitespace"})
    model_dir(fx, "bad_tokjson_pre_tokenizer", neox, {"tokenizer.json": json.dumps(whitespace)})
    model_dir(fx, "bad_tokconfig_bos_missing", neox, {"tokenizer_config.json": json.dumps(
        {"add_bos_token": True, "bos_token": {"content": "<s>"}})})
    model_dir(fx, "bad_tokconfig_bool", neox, {"tokenizer_config.json": '{"add_bos_token": "yes"}'})
    # A SentencePiece directory (Llama 2's layout) whose tokenizer.model is not a model.
    model_dir(fx, "bad_spm_garbage", gpt2, {"tokenizer.model": b"\x0a\xff\xff not a protobuf"},
              drop=("vocab.json", "merges.txt"))

    # ---- corpora -------------------------------------------------------------------------
    c = os.path.join(fx, "corpora")
    stream = np.load(os.path.join(data, "models", "tiny-gpt2.tokens.npy"))
    good = np.ascontiguousarray(stream[:2048].astype("<i4"))
    os.makedirs(c, exist_ok=True)
    np.save(os.path.join(c, "good.npy"), good)
    raw = open(os.path.join(c, "good.npy"), "rb").read()
    write(os.path.join(c, "bad_magic.npy"), b"\x93NUMPZ" + raw[6:])
    write(os.path.join(c, "bad_header.npy"), npy_bytes(None, None, good.tobytes(), header="{'shape': 'oops'}"))
    write(os.path.join(c, "bad_dtype.npy"), npy_bytes("<f4", (2048,), good.astype("<f4").tobytes()))
    write(os.path.join(c, "bad_truncated.npy"), raw[: len(raw) - 100])
    ids = good.copy()
    ids[100] = 5000  # past tiny-gpt2's 1024-token vocabulary
    np.save(os.path.join(c, "bad_id_range.npy"), ids)
    text = open(os.path.join(data, "tokenizer", "brown_fiction.txt"), encoding="utf-8").read()[:4000]
    write(os.path.join(c, "good.txt"), text)
    write(os.path.join(c, "bad_utf8.txt"), text[:500].encode() + b"\xc3\x28 broken" + text[500:800].encode())
    write(os.path.join(c, "wiki.test.raw"), (" \n = Title = \n \n" + text[:1000] + "\n").encode() + b"\xed\xa0\x80\n")
    write(os.path.join(c, "bad_lambada.jsonl"), '{"text": "a fine line"}\n{"text": "unterminated\n')
    write(os.path.join(c, "brown_empty", "README"), "no Brown files here\n")
    write(os.path.join(c, "brown_bad", "ca01"), b"The/at Fulton/np-tl \xff\xfeCounty/nn-tl\n")
    write(os.path.join(c, "brown_blank", "ca01"), "\n   \n\t\n")

    # ---- specs ---------------------------------------------------------------------------
    s = os.path.join(fx, "specs")
    os.makedirs(s)
    base = {
        "store": "../stores/never",
        "context": 16,
        "models": [{"name": "tiny-gpt2", "path": "../models/good_gpt2"}],
        "corpora": [{"name": "stream", "path": "../corpora/good.npy", "format": "npy"}],
        "splits": {"fit": {"start": 0, "tokens": 256}, "eval": {"start": 256, "tokens": 256}},
        "layers": [0],
        "experiments": {"fit": {"lambda": [0.1]}, "all_linear": {"bootstrap": 20}},
        "runtime": {"device": "cpu", "retries": 0},
        "resources": {"nodes": 1, "tasks_per_node": 1, "time": "00:10:00"},
    }

    def spec(name, text=None, **changes):
        if text is None:
            # JSON is YAML; one key per line keeps line numbers useful
            text = json.dumps(changed(base, changes), indent=1)
        write(os.path.join(s, name + ".yaml"), text)

    spec("good_store", store="../stores/good")
    spec("good")
    spec("bad_syntax", text="store: x\nmodels: [{name: a, path: b}\ncorpora: [\n")
    spec("bad_unknown_key", modelz=[])
    spec("bad_layers_range", layers=[0, 7])
    spec("bad_unknown_experiment", experiments={"fit": {}, "linearize_everything": {}})
    spec("bad_unknown_param", experiments={"fit": {"lambda": [0.1], "lamda": 2}})
    spec("bad_speed_without_compound", experiments={"fit": {"lambda": [0.1]}, "speed": {}})
    spec("bad_model_arch", models=[{"name": "m", "path": "../models/bad_config_unknown_type"}])
    # Exporting linearized weights a Llama MLP cannot hold: refused before any training.
    spec("bad_save_model_no_mlp_bias", models=[{"name": "llama", "path": "../models/good_llama"}],
         splits=dict(base["splits"], train={"start": 512, "tokens": 256}),
         experiments={"progressive": {"steps_per_layer": 1, "final_steps": 0}})
    spec("bad_model_missing", models=[{"name": "m", "path": "../models/nowhere"}])
    # Hub ids resolve from the cache HF_HUB_CACHE names (cases.tsv sets it to fx/hub).
    spec("bad_model_hub_miss", models=[{"name": "m", "path": "nobody/absent"}])
    spec("bad_model_hub_revision", models=[{"name": "m", "path": "org/tiny", "revision": "v9"}])
    spec("bad_model_hub_no_snapshots", models=[{"name": "m", "path": "../hub/models--org--partial"}])
    spec("bad_model_revision_of_dir", models=[{"name": "m", "path": "../models/good_gpt2", "revision": "main"}])
    spec("bad_corpus_format", corpora=[{"name": "c", "path": "../corpora/good.npy", "format": "parquet"}])
    spec("bad_splits_overlap", splits={"fit": {"start": 0, "tokens": 256}, "eval": {"start": 128, "tokens": 256}})
    spec("bad_resources_partition", resources={"nodes": 1, "partition": "gpu\n#SBATCH --uid=0"})
    spec("bad_resources_account", resources={"nodes": 1, "account": "proj; rm -rf ~"})
    spec("bad_resources_time", resources={"nodes": 1, "time": "forever"})
    spec("bad_resources_launcher_args", resources={"nodes": 2, "launcher_args": ["--bind-to", "none\n--mca x y"]})
    spec("bad_runtime_groups_span", runtime={"groups_span_nodes": "sometimes"})
    write(os.path.join(s, "bad_invalid_utf8.yaml"), b"store: x\ncontext: 16 # \xff\xfe\n")
    spec("bad_key_newline", text=json.dumps(dict(base, **{"mod\nels": []}), indent=1))
    spec("bad_corpus_format_newline", corpora=[{"name": "c", "path": "../corpora/good.npy", "format": "npy\n#SBATCH x"}])
    spec("bad_corpus_npy", corpora=[{"name": "c", "path": "../corpora/bad_magic.npy", "format": "npy"}])
    # Names become file names (STORE/models/<model>.<variant>/, HDF5 groups): no way out of the store.
    spec("bad_model_name_dotdot", models=[{"name": "../../evil", "path": "../models/good_gpt2"}])
    spec("bad_model_name_slash", models=[{"name": "tiny/../../../evil", "path": "../models/good_gpt2"}])
    spec("bad_corpus_name_dotdot", corpora=[{"name": "..", "path": "../corpora/good.npy", "format": "npy"}])
    spec("bad_corpus_name_newline", corpora=[{"name": "c\nx", "path": "../corpora/good.npy", "format": "npy"}])

    # Every number outside the experiments has a range too.
    spec("bad_context_short", context=1)
    spec("bad_split_start", splits={"fit": {"start": -1, "tokens": 256}, "eval": {"start": 256, "tokens": 256}})
    spec("bad_split_tokens", splits={"fit": {"start": 0, "tokens": 0}, "eval": {"start": 256, "tokens": 256}})
    # A split past the end of a corpus's stream: refused by `plan` and before `run` creates a store.
    spec("bad_split_past_end_npy", splits={"fit": {"start": 0, "tokens": 256}, "eval": {"start": 256, "tokens": 99744}})
    spec("bad_split_past_end_text", corpora=[{"name": "prose", "path": "../corpora/good.txt", "format": "text"}],
         splits={"fit": {"start": 0, "tokens": 256}, "eval": {"start": 256, "tokens": 99744}})

    # One spec per bounded parameter of an experiment or of the runtime and resources sections,
    # with a value just outside its range, from the binary's own list of parameters (`linsweep
    # experiments --json`): every range is exercised, also those of experiments added later. The
    # cases go to generated_cases.tsv.
    listed = json.loads(subprocess.run([binary, "experiments", "--json"], check=True, stdout=subprocess.PIPE,
                                       text=True).stdout)
    generated = []
    for e in listed["experiments"] + listed["sections"]:
        section = e in listed["sections"]
        path = [e["name"]] if section else ["experiments", e["name"]]
        for p in e["params"]:
            r = p["range"]
            if "min" not in r and "max" not in r:
                continue
            integer = "integer" in p["type"]
            if "min" in r:
                bad = r["min"]["value"] if r["min"]["open"] else r["min"]["value"] - (1 if integer else 0.5)
            else:
                bad = r["max"]["value"] if r["max"]["open"] else r["max"]["value"] + (1 if integer else 0.5)
            bad = int(bad) if integer else bad
            value = [bad] if "list" in p["type"] else bad
            name = f"range_{e['name']}_{p['key']}"
            change = {p["key"]: value}
            for key in reversed(path):
                change = {key: change}
            text = json.dumps(changed(base, change), indent=1)
            lines = text.split("\n")
            start = next(i for i, l in enumerate(lines, 1) if l.strip().startswith(f'"{e["name"]}"'))
            line = next(i for i, l in enumerate(lines, 1) if i > start and l.strip().startswith(f'"{p["key"]}"'))
            line += "list" in p["type"]  # a list's element is named, on the line after its key
            spec(name, text=text)
            generated.append(f"{name}\t{{bin}} plan {{fx}}/specs/{name}.yaml\t{name}.yaml:{line}: "
                             f"{'.'.join(path)}.{p['key']}: \tis out of range (expected {r['text']})")
    write(os.path.join(fx, "generated_cases.tsv"), "\n".join(generated) + "\n")

    # ---- stores --------------------------------------------------------------------------
    env = dict(os.environ, LINSWEEP_THREADS="1")
    r = subprocess.run([binary, "run", os.path.join(s, "good_store.yaml"), "--quiet"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit("make_fixtures: the good store did not build: " + r.stderr)
    stores = os.path.join(fx, "stores")
    good_store = os.path.join(stores, "good")
    units = sorted(n for n in os.listdir(os.path.join(good_store, "units")) if not n.endswith(".arrays.h5"))
    assert units, "the good store has no unit files"

    def store(name, mutate):
        d = os.path.join(stores, name)
        shutil.copytree(good_store, d, symlinks=True)
        mutate(d)

    def unit_path(d):
        return os.path.join(d, "units", units[-1])

    def truncate_unit(d):
        p = unit_path(d)
        b = open(p, "rb").read()
        write(p, b[: len(b) // 3])

    store("bad_unit_truncated", truncate_unit)
    store("bad_unit_not_h5", lambda d: write(unit_path(d), "this is not HDF5\n" * 20))

    def flip_unit_byte(d):  # one bit of rot in the middle of a sealed unit file
        p = unit_path(d)
        b = bytearray(open(p, "rb").read())
        b[len(b) // 2] ^= 0x10
        write(p, bytes(b))

    store("bad_unit_bitflip", flip_unit_byte)
    store("bad_store_json", lambda d: write(os.path.join(d, "store.json"), '{"format": "linsweep-store", '))
    store("bad_run_json", lambda d: write(os.path.join(d, "run.json"), "{\"spec\": "))
    store("bad_run_json_gone", lambda d: write(os.path.join(d, "run.json"), json.dumps({"spec": "/nonexistent/spec.yaml"})))
    store("bad_store_h5", lambda d: write(os.path.join(d, "store.h5"), b"\x89HDF\r\n\x1a\n" + b"\0" * 40))
    # A well-formed JSON line with a mistyped field is not crash residue (a torn line is skipped).
    store("bad_journal_types", lambda d: open(os.path.join(d, "journal.jsonl"), "a").write(
        json.dumps({"event": "failed", "unit": units[0][:-3], "host": "h", "rank": "zero", "time": 1.0, "error": "x"}) + "\n"))
    store("bad_unit_newer", lambda d: newer_unit(unit_path(d)))
    store("bad_unit_stray_name", lambda d: shutil.copy(unit_path(d), os.path.join(d, "units", "evil name;.h5")))
    # Entries of a store that lead outside it: a writer refuses the store (the targets live in
    # fx/outside, so that a write through a link would change the fixtures).
    outside = os.path.join(fx, "outside")
    shutil.copytree(os.path.join(good_store, "units"), os.path.join(outside, "units"))
    write(os.path.join(outside, "journal.jsonl"), "")
    write(os.path.join(outside, "lock"), "")
    os.makedirs(os.path.join(outside, "logs"))

    def link(entry):
        def mutate(d):
            target = os.path.join(d, entry)
            shutil.rmtree(target) if os.path.isdir(target) and not os.path.islink(target) else os.remove(target)
            os.symlink(os.path.join(outside, entry), target)
        return mutate

    store("bad_link_units", link("units"))
    store("bad_link_journal", link("journal.jsonl"))
    store("bad_link_lock", link("lock"))
    store("bad_link_logs", link("logs"))
    store("bad_link_report", lambda d: os.symlink(os.path.join(outside, "logs"), os.path.join(d, "report")))
    store("bad_link_slurm", lambda d: os.symlink(os.path.join(outside, "logs"), os.path.join(d, "slurm")))
    # Sizes that a reader must check before allocating: a journal line without end, a unit
    # attribute with many values (read into a one-value buffer), a table whose
    # extents claim far more than the file holds (chunked, nothing written).
    store("bad_journal_long_line", lambda d: open(os.path.join(d, "journal.jsonl"), "a").write("x" * (2 << 20)))
    store("bad_unit_attr_array", lambda d: unit_attr_array(unit_path(d)))
    store("bad_unit_table_rows", lambda d: unit_huge_table(os.path.join(d, "units", units[0])))  # all_linear: has rows

    # ---- units files (run --units) ---------------------------------------------------------
    write(os.path.join(fx, "units", "unknown.txt"), "fit-000000000000000000000000\n")
    write(os.path.join(fx, "units", "binary.txt"), b"\x00\xff\xfe\x01garbage\n")
    write(os.path.join(fx, "units", "path.txt"), "../../etc/passwd\n")

    # ---- misc ----------------------------------------------------------------------------
    write(os.path.join(fx, "text", "bad_utf8.txt"), b"hello \xe2\x82 world\n")
    write(os.path.join(fx, "text", "good.txt"), "hello world\n")


def reseal(path):
    """Rewrites a unit file's seal (storage/unit_seal.hpp) after an edit, as a linsweep writer
    with that bug would have sealed it: the case then tests the checks behind the seal."""
    b = bytearray(open(path, "rb").read())
    assert b[:16] == b"LINSWEEP UNIT v1", path
    payload = bytes(b[512:])
    b[16:32] = struct.pack("<QII", len(b), zlib.crc32(payload), zlib.adler32(payload))
    open(path, "wb").write(bytes(b))


def unit_attr_array(path):
    import h5py
    with h5py.File(path, "r+") as f:
        uid = f.attrs["unit_id"]
        del f.attrs["unit_id"]
        f.attrs.create("unit_id", np.array([uid] * 64))
    reseal(path)


def unit_huge_table(path):
    import h5py
    with h5py.File(path, "r+") as f:
        name = next(iter(f["tables"]))
        dt = f["tables"][name].dtype
        del f["tables"][name]
        f["tables"].create_dataset(name, shape=(1 << 25,), dtype=dt, chunks=(1024,))
    reseal(path)


def newer_unit(path):
    import h5py
    with h5py.File(path, "r+") as f:
        f.attrs["schema_version"] = np.int64(99)
    reseal(path)


if __name__ == "__main__":
    main()
