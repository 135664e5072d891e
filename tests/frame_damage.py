"""Damaged frames for the link-check tests (test_wire_kernels, test_link_checks)."""
from __future__ import annotations

import struct
import zlib


def damage(frame: bytes, rng, p: float) -> bytes:
    """``frame`` damaged with probability ~p: a changed byte (bad CRC, sync, header, length or
    version; p * 0.6), cut short (p * 0.2), grown by 1-4 bytes (p * 0.12) or another version
    with the CRC made valid (p * 0.08, so only the version check refuses it)."""
    f = bytearray(frame)
    r = rng.random()
    if r < 0.6 * p:
        f[int(rng.integers(0, len(f)))] ^= int(rng.integers(1, 256))
    elif r < 0.8 * p:
        f = f[:int(rng.integers(0, len(f)))]
    elif r < 0.92 * p:
        f += bytes(int(rng.integers(1, 5)))
    elif r < p:
        f[5] = 2 + int(rng.integers(0, 3))
        f[-4:] = struct.pack("<I", zlib.crc32(bytes(f[2:-4])))
    return bytes(f)
