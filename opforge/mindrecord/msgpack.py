"""The MessagePack subset MindRecord stores a row's scalar fields in (MindSpore writes them with nlohmann's
``json::to_msgpack``): maps (keys sorted, as a JSON object), strings, integers in their smallest
encoding, floats as float64, booleans, nil, arrays and binary; ``unpack`` also reads float32."""

from __future__ import annotations

import struct

__all__ = ["pack", "unpack", "MsgpackError"]


class MsgpackError(ValueError):
    """Bytes that are not one well-formed MessagePack value."""


def _pack_int(v: int, out: bytearray) -> None:
    if v >= 0:
        if v < 0x80:
            out.append(v)
        elif v <= 0xFF:
            out += b"\xcc" + struct.pack(">B", v)
        elif v <= 0xFFFF:
            out += b"\xcd" + struct.pack(">H", v)
        elif v <= 0xFFFFFFFF:
            out += b"\xce" + struct.pack(">I", v)
        elif v < 1 << 64:
            out += b"\xcf" + struct.pack(">Q", v)
        else:
            raise OverflowError(f"the int {v} does not fit 64 bits")
    elif v >= -32:
        out.append(v & 0xFF)
    elif v >= -0x80:
        out += b"\xd0" + struct.pack(">b", v)
    elif v >= -0x8000:
        out += b"\xd1" + struct.pack(">h", v)
    elif v >= -0x80000000:
        out += b"\xd2" + struct.pack(">i", v)
    elif v >= -(1 << 63):
        out += b"\xd3" + struct.pack(">q", v)
    else:
        raise OverflowError(f"the int {v} does not fit 64 bits")


def _pack_len(n: int, fix: int, fix_limit: int, codes: tuple, out: bytearray) -> None:
    """A length header: the fix form below ``fix_limit``, else the 8/16/32-bit form (codes[0] may be None)."""
    if n < fix_limit:
        out.append(fix | n)
    elif codes[0] is not None and n <= 0xFF:
        out += bytes([codes[0]]) + struct.pack(">B", n)
    elif n <= 0xFFFF:
        out += bytes([codes[1]]) + struct.pack(">H", n)
    else:
        out += bytes([codes[2]]) + struct.pack(">I", n)


def _pack(value, out: bytearray) -> None:
    if value is None:
        out.append(0xC0)
    elif value is True or value is False:
        out.append(0xC3 if value else 0xC2)
    elif isinstance(value, int):
        _pack_int(int(value), out)
    elif isinstance(value, float):
        out += b"\xcb" + struct.pack(">d", value)
    elif isinstance(value, str):
        data = value.encode("utf-8")
        _pack_len(len(data), 0xA0, 32, (0xD9, 0xDA, 0xDB), out)
        out += data
    elif isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        _pack_len(len(data), 0, 0, (0xC4, 0xC5, 0xC6), out)
        out += data
    elif isinstance(value, (list, tuple)):
        _pack_len(len(value), 0x90, 16, (None, 0xDC, 0xDD), out)
        for item in value:
            _pack(item, out)
    elif isinstance(value, dict):
        _pack_len(len(value), 0x80, 16, (None, 0xDE, 0xDF), out)
        for key in sorted(value):
            _pack(str(key), out)
            _pack(value[key], out)
    else:
        raise TypeError(f"MessagePack cannot hold a {type(value).__name__}")


def pack(value) -> bytes:
    """``value`` (None, bool, int, float, str, bytes, list, dict) as MessagePack bytes."""
    out = bytearray()
    _pack(value, out)
    return bytes(out)


_FIXED = {  # code: (struct format, size) of the fixed-size scalars
    0xCA: (">f", 4), 0xCB: (">d", 8), 0xCC: (">B", 1), 0xCD: (">H", 2), 0xCE: (">I", 4), 0xCF: (">Q", 8),
    0xD0: (">b", 1), 0xD1: (">h", 2), 0xD2: (">i", 4), 0xD3: (">q", 8),
}  # fmt: skip
_LENGTHS = {0xC4: 1, 0xC5: 2, 0xC6: 4, 0xD9: 1, 0xDA: 2, 0xDB: 4, 0xDC: 2, 0xDD: 4, 0xDE: 2, 0xDF: 4}
_LEN_FORMAT = {1: ">B", 2: ">H", 4: ">I"}


def _take(buf: bytes, pos: int, n: int) -> tuple:
    if pos + n > len(buf):
        raise MsgpackError(f"the data ends at byte {len(buf)}, inside a value that needs byte {pos + n}")
    return buf[pos : pos + n], pos + n


def _unpack(buf: bytes, pos: int) -> tuple:
    code_bytes, pos = _take(buf, pos, 1)
    code = code_bytes[0]
    if code < 0x80:
        return code, pos
    if code >= 0xE0:
        return code - 0x100, pos
    if 0xA0 <= code <= 0xBF:
        data, pos = _take(buf, pos, code & 0x1F)
        return data.decode("utf-8"), pos
    if 0x90 <= code <= 0x9F:
        return _unpack_array(buf, pos, code & 0x0F)
    if 0x80 <= code <= 0x8F:
        return _unpack_map(buf, pos, code & 0x0F)
    if code in (0xC0, 0xC2, 0xC3):
        return {0xC0: None, 0xC2: False, 0xC3: True}[code], pos
    if code in _FIXED:
        fmt, size = _FIXED[code]
        data, pos = _take(buf, pos, size)
        return struct.unpack(fmt, data)[0], pos
    if code in _LENGTHS:
        size = _LENGTHS[code]
        data, pos = _take(buf, pos, size)
        n = struct.unpack(_LEN_FORMAT[size], data)[0]
        if code in (0xDC, 0xDD):
            return _unpack_array(buf, pos, n)
        if code in (0xDE, 0xDF):
            return _unpack_map(buf, pos, n)
        data, pos = _take(buf, pos, n)
        return (bytes(data) if code <= 0xC6 else data.decode("utf-8")), pos
    raise MsgpackError(f"the byte 0x{code:02x} at {pos - 1} starts no value MindRecord writes")


def _unpack_array(buf: bytes, pos: int, n: int) -> tuple:
    items = []
    for _ in range(n):
        item, pos = _unpack(buf, pos)
        items.append(item)
    return items, pos


def _unpack_map(buf: bytes, pos: int, n: int) -> tuple:
    out = {}
    for _ in range(n):
        key, pos = _unpack(buf, pos)
        out[key], pos = _unpack(buf, pos)
    return out, pos


def unpack(buf) -> object:
    """The one MessagePack value of ``buf``; MsgpackError if it is malformed or followed by more bytes."""
    buf = bytes(buf)
    try:
        value, pos = _unpack(buf, 0)
    except UnicodeDecodeError as e:
        raise MsgpackError(f"a string is not UTF-8: {e}") from e
    if pos != len(buf):
        raise MsgpackError(f"{len(buf) - pos} bytes follow the value")
    return value
