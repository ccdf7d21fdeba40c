"""Token ids back to text with a model directory's own tokenizer files, as linsweep reads them.

    from linsweep_store import Tokenizer
    tok = Tokenizer("models/gpt2")
    tok.decode([464, 3290])            # "The cat"
    tok.pieces([464, 3290])            # ["The", " cat"]: each token's own text

Reads, in this order, what the directory has: tokenizer.json (HF tokenizers: byte-level BPE as
GPT-2, GPT-NeoX, Llama 3 and Qwen2 ship, or SentencePiece-style pieces with "▁" for a space and
<0xNN> byte fallback as Llama 2, Mistral and Gemma ship), vocab.json with merges.txt (GPT-2's
files), or tokenizer.model (SentencePiece; needs the sentencepiece module, Debian's
python3-sentencepiece). Decoding needs only the vocabulary, so no merge is applied.
"""
import json
import os

from .errors import StoreError


def _byte_decoder():
    """GPT-2's printable stand-in for each byte, inverted: {character: byte}."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    chars, n = list(printable), 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(printable, chars)}


def _read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise StoreError(f"{path}: {e}") from None


def _decoders(decoder):
    """A tokenizer.json decoder's parts, flattened out of a Sequence."""
    if not decoder:
        return []
    if decoder.get("type") == "Sequence":
        return [d for part in decoder.get("decoders", []) for d in _decoders(part)]
    return [decoder]


class Tokenizer:
    """A model directory's vocabulary for decoding. Raises StoreError when the directory does not
    exist or holds none of the files above, or a file does not parse."""

    def __init__(self, model_dir):
        self.model_dir = model_dir
        self._special, self._strip_first = set(), False
        if not os.path.isdir(model_dir):
            raise StoreError(f"{model_dir}: does not exist" if not os.path.exists(model_dir)
                             else f"{model_dir}: not a directory")
        self._sp = None
        path = os.path.join(model_dir, "tokenizer.json")
        if os.path.isfile(path):
            self._from_tokenizer_json(path)
        elif os.path.isfile(os.path.join(model_dir, "vocab.json")):
            self._byte_level = True
            self._vocab = {i: t for t, i in _read_json(os.path.join(model_dir, "vocab.json")).items()}
        elif os.path.isfile(os.path.join(model_dir, "tokenizer.model")):
            try:
                import sentencepiece
            except ImportError:
                raise StoreError(f"{model_dir}/tokenizer.model: decoding it needs the sentencepiece module "
                                 "(apt-get install python3-sentencepiece)") from None
            self._sp = sentencepiece.SentencePieceProcessor(model_file=os.path.join(model_dir, "tokenizer.model"))
        else:
            raise StoreError(f"{model_dir}: no tokenizer.json, vocab.json or tokenizer.model")
        self._bytes = _byte_decoder()

    def _from_tokenizer_json(self, path):
        t = _read_json(path)
        model = t.get("model") or {}
        vocab = model.get("vocab")
        if isinstance(vocab, dict):
            self._vocab = {i: tok for tok, i in vocab.items()}
        elif isinstance(vocab, list):  # Unigram: [[piece, score], ...]
            self._vocab = {i: entry[0] for i, entry in enumerate(vocab)}
        else:
            raise StoreError(f"{path}: model.vocab is neither an object nor a list")
        for added in t.get("added_tokens") or []:
            self._vocab[added["id"]] = added["content"]
        self._special = {a["id"] for a in t.get("added_tokens") or [] if a.get("special")}
        parts = _decoders(t.get("decoder"))
        kinds = [d.get("type") for d in parts]
        pre = t.get("pre_tokenizer") or {}
        self._byte_level = "ByteLevel" in kinds or (not kinds and pre.get("type") == "ByteLevel")
        # A leading space stands for the one the encoder prepended: Strip removes it, and so does
        # a Metaspace decoder unless it never prepends.
        self._strip_first = any(d.get("type") == "Strip" and d.get("start", 0) > 0 or
                                d.get("type") == "Metaspace" and d.get("prepend_scheme", "always") != "never"
                                and d.get("add_prefix_space", True) for d in parts)

    def __len__(self):
        return self._sp.get_piece_size() if self._sp is not None else len(self._vocab)

    def _piece_bytes(self, token_id):
        tid = int(token_id)
        if self._sp is not None:
            if tid < 0 or tid >= self._sp.get_piece_size():
                raise StoreError(f"{self.model_dir}: token id {tid} is outside the vocabulary ({len(self)})")
            piece = self._sp.id_to_piece(tid)
        else:
            piece = self._vocab.get(tid)
            if piece is None:
                raise StoreError(f"{self.model_dir}: token id {tid} is outside the vocabulary ({len(self)})")
            if self._byte_level and tid not in self._special:
                return bytes(self._bytes.get(c, 0x3F) for c in piece)
        if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
            return bytes([int(piece[3:5], 16)])  # byte fallback
        return piece.replace("\u2581", " ").encode("utf-8")

    def pieces(self, ids):
        """Each token's own text (a split UTF-8 character shows as U+FFFD in each of its pieces)."""
        return [self._piece_bytes(i).decode("utf-8", errors="replace") for i in ids]

    def decode(self, ids):
        """The text of a run of token ids, bytes joined before UTF-8 decoding (so a character split
        across tokens comes out whole). SentencePiece-style vocabularies drop the space that
        stands in front of the first piece, as their decoders do."""
        if self._sp is not None:
            return self._sp.decode([int(i) for i in ids])
        text = b"".join(self._piece_bytes(i) for i in ids).decode("utf-8", errors="replace")
        if not self._byte_level and self._strip_first and text.startswith(" "):
            text = text[1:]
        return text
