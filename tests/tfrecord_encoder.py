"""An independent TFRecord writer for the tests (tests/test_tfrecord.py, the zoo's BERT data in
tests/test_zoo_bert.py): CRC-32C bit by bit and the tf.train.Example protobuf by hand, so the reader
(opforge/dataset/tfrecord.py) is checked against code that shares nothing with it."""

from __future__ import annotations

import gzip
import struct
import zlib


def crc32c_bits(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def masked(data: bytes) -> int:
    crc = crc32c_bits(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64: ten bytes of two's complement
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def key(field: int, wire: int) -> bytes:
    return varint(field << 3 | wire)


def delimited(field: int, payload: bytes) -> bytes:
    return key(field, 2) + varint(len(payload)) + payload


def feature(kind: str, values, packed: bool) -> bytes:
    if kind == "bytes":
        return delimited(1, b"".join(delimited(1, v) for v in values))
    if kind == "float":
        if packed:
            inner = delimited(1, struct.pack(f"<{len(values)}f", *values))
        else:
            inner = b"".join(key(1, 5) + struct.pack("<f", v) for v in values)
        return delimited(2, inner)
    if packed:
        inner = delimited(1, b"".join(varint(int(v)) for v in values))
    else:
        inner = b"".join(key(1, 0) + varint(int(v)) for v in values)
    return delimited(3, inner)


def example(features: dict, packed: bool = True) -> bytes:
    """A serialized tf.train.Example of {name: (kind, values)}, with an unknown field a reader must skip."""
    entries = b"".join(
        delimited(1, delimited(1, name.encode()) + delimited(2, feature(kind, values, packed)))
        for name, (kind, values) in features.items()
    )
    return delimited(1, entries) + key(9, 0) + varint(12345)


def record(data: bytes) -> bytes:
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked(length)) + data + struct.pack("<I", masked(data))


def write(path, examples, packed=True, compress=None):
    blob = b"".join(record(example(e, packed)) for e in examples)
    if compress == "GZIP":
        blob = gzip.compress(blob)
    elif compress == "ZLIB":
        blob = zlib.compress(blob)
    path.write_bytes(blob)
    return path
