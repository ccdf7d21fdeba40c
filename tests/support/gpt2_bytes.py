"""GPT-2's byte-level alphabet: each of the 256 bytes as the printable character its BPE
vocabulary spells it with (the map of HF's `bytes_to_unicode`)."""


def byte_to_char():
    """Byte value -> the character GPT-2's vocabulary writes for it."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def char_to_byte():
    """The inverse of byte_to_char."""
    return {c: b for b, c in byte_to_char().items()}
