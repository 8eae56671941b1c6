"""CRC-32C (Castagnoli), the checksum of TFRecord files, in NumPy: no extension or package needed.

``crc32c(data)`` is the standard CRC-32C (reflected polynomial 0x82F63B78, initial register and final xor
0xFFFFFFFF; ``crc32c(b"123456789") == 0xE3069283``); ``masked_crc32c`` is TFRecord's masked form,
``((crc >> 15 | crc << 17) + 0xA282EAD8) mod 2**32``.

A byte-at-a-time loop in Python runs at a few MB/s, so long inputs are cut into K lanes of L bytes that
NumPy advances together (L steps over arrays of K registers), then folded in order: the register update
is linear over GF(2), so the register after lane k is ``Z_L(register before) ^ crc_k``, where ``crc_k``
is lane k's CRC from a zero register and ``Z_L`` is the (linear) effect of L zero bytes, applied with
four 256-entry tables.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["crc32c", "masked_crc32c"]

_POLY = 0x82F63B78


def _byte_table() -> np.ndarray:
    table = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        table = np.where(table & 1, (table >> 1) ^ np.uint32(_POLY), table >> 1).astype(np.uint32)
    return table


_TABLE = _byte_table()
_TABLE_LIST = [int(v) for v in _TABLE]
_SHORT = 512  # below this many bytes the plain loop is faster than NumPy's lanes


def _update_bytes(register: int, data) -> int:
    table = _TABLE_LIST
    for b in data:
        register = table[(register ^ b) & 0xFF] ^ (register >> 8)
    return register


@functools.lru_cache(maxsize=64)
def _zeros_operator(length: int) -> tuple:
    """Four tables whose lookups by the register's bytes, xored, give the register after ``length`` zero
    bytes (a linear map, found from its action on the 32 basis registers)."""
    basis = np.left_shift(np.uint32(1), np.arange(32, dtype=np.uint32))
    for _ in range(length):
        basis = _TABLE[basis & 0xFF] ^ (basis >> 8)
    tables = []
    for k in range(4):
        table = np.zeros(256, np.uint32)
        for bit in range(8):
            table[(np.arange(256) >> bit) & 1 == 1] ^= basis[8 * k + bit]
        tables.append([int(v) for v in table])
    return tuple(tables)


def _update_lanes(register: int, data: np.ndarray) -> int:
    n = len(data)
    lane = 1 << max(5, int(np.log2(max(n, 1)) / 2))  # about sqrt(n) bytes a lane, a power of two
    lanes = n // lane
    block = data[: lanes * lane].reshape(lanes, lane)
    crcs = np.zeros(lanes, np.uint32)
    for j in range(lane):
        crcs = _TABLE[(crcs ^ block[:, j]) & 0xFF] ^ (crcs >> 8)
    t0, t1, t2, t3 = _zeros_operator(lane)
    for c in crcs.tolist():
        register = t0[register & 0xFF] ^ t1[(register >> 8) & 0xFF] ^ t2[(register >> 16) & 0xFF] ^ t3[register >> 24]
        register ^= c
    return _update_bytes(register, data[lanes * lane :].tobytes())


def crc32c(data) -> int:
    """The CRC-32C of ``data`` (bytes, bytearray, memoryview or a uint8 array) as an int in [0, 2**32)."""
    if isinstance(data, np.ndarray):
        array = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
    else:
        array = np.frombuffer(memoryview(data).cast("B"), np.uint8)
    if len(array) < _SHORT:
        register = _update_bytes(0xFFFFFFFF, array.tobytes())
    else:
        register = _update_lanes(0xFFFFFFFF, array)
    return register ^ 0xFFFFFFFF


def masked_crc32c(data) -> int:
    """TFRecord's masked CRC-32C of ``data``: the CRC rotated right by 15 bits plus 0xA282EAD8."""
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF
