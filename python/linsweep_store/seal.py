"""The unit-file seal (docs/store.md, "Unit-file seal"), checked before h5py opens a file.

libhdf5 is not safe on damaged files, so linsweep checks every unit file's length, CRC-32 and
Adler-32 before handing it to the library; this reader does the same.
"""
import struct
import zlib

from .errors import StoreError

SEAL_BYTES = 512
MAGIC = b"LINSWEEP UNIT v1"
_CHUNK = 1 << 22


def verify_seal(path):
    """Returns normally when the file's bytes match its seal; raises StoreError otherwise."""
    with open(path, "rb") as f:
        head = f.read(SEAL_BYTES)
        if len(head) < SEAL_BYTES or head[: len(MAGIC)] != MAGIC:
            raise StoreError(f"{path}: not a linsweep unit file (no seal; truncated or not written by linsweep)")
        length, crc, adler = struct.unpack_from("<QII", head, len(MAGIC))
        got_crc, got_adler, size = 0, 1, SEAL_BYTES
        while True:
            block = f.read(_CHUNK)
            if not block:
                break
            got_crc = zlib.crc32(block, got_crc)
            got_adler = zlib.adler32(block, got_adler)
            size += len(block)
    if size != length:
        raise StoreError(f"{path}: damaged after it was written ({size} bytes, the seal says {length})")
    if (got_crc, got_adler) != (crc, adler):
        raise StoreError(f"{path}: damaged after it was written (checksum mismatch)")
