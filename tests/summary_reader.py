"""An independent reader of MindSpore summary files for the tests (tests/test_zoo_compat_8.py,
tests/test_zoo_efficientnet.py): TFRecord framing checked with a bitwise CRC-32C, and the protobuf fields of
summary.proto's ``Event`` decoded by hand, so a test does not read opforge's output with opforge's code."""

from __future__ import annotations

import struct


def _crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def _masked(data: bytes) -> int:
    crc = _crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(buf: bytes, pos: int):
    value = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def fields(buf: bytes) -> list:
    """[(field number, value)]: varints as ints, fixed64 as doubles, fixed32 as floats, the rest as bytes."""
    out, pos = [], 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = struct.unpack("<d", buf[pos : pos + 8])[0], pos + 8
        elif wire == 5:
            value, pos = struct.unpack("<f", buf[pos : pos + 4])[0], pos + 4
        elif wire == 2:
            length, pos = _varint(buf, pos)
            value, pos = buf[pos : pos + length], pos + length
        else:
            raise ValueError(f"wire type {wire}")
        out.append((number, value))
    return out


def records(path: str) -> list:
    """The file's records, their CRCs checked."""
    data = open(path, "rb").read()
    out, pos = [], 0
    while pos < len(data):
        header = data[pos : pos + 8]
        (length,) = struct.unpack("<Q", header)
        assert struct.unpack("<I", data[pos + 8 : pos + 12])[0] == _masked(header), "length CRC"
        body = data[pos + 12 : pos + 12 + length]
        assert struct.unpack("<I", data[pos + 12 + length : pos + 16 + length])[0] == _masked(body), "data CRC"
        out.append(body)
        pos += 16 + length
    return out


def events(path: str) -> list:
    """Each Event as a dict: wall_time, step, and version or values ([(tag, kind, decoded value)]); a scalar's
    value is the float, a histogram's a dict of its fields (buckets as (left, width, count)), an image's
    (height, width, colorspace, PNG bytes)."""
    out = []
    for body in records(path):
        event = {"step": 0, "values": []}
        for number, value in fields(body):
            if number == 1:
                event["wall_time"] = value
            elif number == 2:
                event["step"] = value
            elif number == 3:
                event["version"] = value.decode()
            elif number == 5:
                for _, entry in fields(value):
                    event["values"].append(_value(entry))
        out.append(event)
    return out


def _value(entry: bytes) -> tuple:
    tag, kind, decoded = None, None, None
    for number, value in fields(entry):
        if number == 1:
            tag = value.decode()
        elif number == 3:
            kind, decoded = "scalar", value
        elif number == 4:
            image = dict(fields(value))
            kind, decoded = "image", (image[1], image[2], image[3], image[4])
        elif number == 9:
            histogram = {"buckets": [], "nan_count": 0, "pos_inf_count": 0, "neg_inf_count": 0}
            names = {2: "nan_count", 3: "pos_inf_count", 4: "neg_inf_count", 5: "max", 6: "min", 7: "sum", 8: "count"}
            for n, v in fields(value):
                if n == 1:
                    bucket = dict(fields(v))
                    histogram["buckets"].append((bucket[1], bucket[2], bucket.get(3, 0)))
                else:
                    histogram[names[n]] = v
            kind, decoded = "histogram", histogram
    return tag, kind, decoded
