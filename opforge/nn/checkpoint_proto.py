"""MindSpore's checkpoint file (``.ckpt``): the protobuf message ``Checkpoint``, read and written with the
``protobuf`` runtime, so that a checkpoint trained by MindSpore loads into opforge and back.

The schema (MindSpore's ``checkpoint.proto``, proto2)::

    message Checkpoint { message Value { required string tag = 1; required TensorProto tensor = 2; }
                         repeated Value value = 1; }
    message TensorProto { repeated int64 dims = 1; required string tensor_type = 2;
                          required bytes tensor_content = 3; }

A file is a sequence of serialized ``Checkpoint`` messages, one per parameter or per chunk of a large one
(MindSpore writes 512 MiB chunks, each tagged with the parameter's name); concatenated protobuf messages parse
as one whose ``value`` lists them all, and consecutive values of one tag are joined. ``tensor_type`` is the
dtype's MindSpore name ("Float32", "BFloat16", "Int64", ..., "str" for a string), ``tensor_content`` the raw
little-endian C-order bytes; a scalar has ``dims == [0]``. Read and left out: the random operators' states
("random_op") and map parameters (a ``maptensor`` in place of the tensor), which opforge does not have. Files
of newer MindSpore may end with ``b"crc_num"`` and a 10-byte big-endian CRC-32 of what precedes it, checked when
present.
"""

from __future__ import annotations

import binascii
import os

import numpy as np
from google.protobuf.message import DecodeError

from opforge import dtype as mstype
from opforge.utils.protobuf_schema import message_classes

__all__ = ["read_values", "write_values", "is_mindspore_checkpoint"]

_CHUNK_BYTES = 512 * 1024 * 1024  # MindSpore's SLICE_SIZE: one Value per chunk of a larger parameter
_CRC_MARK = b"crc_num"
_STR = "str"
# values MindSpore may write that hold no parameter opforge can load: its random operators' states
_SKIPPED = ("random_op",)


Checkpoint = message_classes(
    "opforge_mindspore_checkpoint.proto",
    "",
    {
        "TensorProto": [
            ("dims", 1, "repeated", "int64"),
            ("tensor_type", 2, "required", "string"),
            ("tensor_content", 3, "required", "bytes"),
        ],
        "Checkpoint": [("value", 1, "repeated", "Checkpoint.Value")],
        # tensor: required in older MindSpore, absent from a map parameter's value (a maptensor, field 3) in newer
        "Checkpoint.Value": [("tag", 1, "required", "string"), ("tensor", 2, "optional", "TensorProto")],
    },
)["Checkpoint"]


def is_mindspore_checkpoint(path: str) -> bool:
    """Whether ``path`` holds a protobuf checkpoint rather than opforge's NumPy archive (a zip file)."""
    with open(path, "rb") as f:
        return f.read(4) != b"PK\x03\x04"


def write_values(path: str, pairs, crc_check: bool = False) -> None:
    """Write ``(name, value)`` pairs (a value: an opforge Tensor or a str) to ``path`` in MindSpore's format;
    ``crc_check`` appends MindSpore's CRC-32 trailer."""
    crc = 0
    with open(path, "wb") as f:
        for name, value in pairs:
            if isinstance(value, str):
                array, tensor_type, dims = np.array(value), _STR, [0]
            else:
                array = np.asarray(value)
                tensor_type = value.dtype.name
                dims = list(array.shape) if array.ndim else [0]
            content = array.tobytes()  # C order, whatever the strides
            for start in range(0, max(len(content), 1), _CHUNK_BYTES):
                message = Checkpoint()
                entry = message.value.add(tag=name)
                entry.tensor.dims.extend(dims)
                entry.tensor.tensor_type = tensor_type
                entry.tensor.tensor_content = content[start : start + _CHUNK_BYTES]
                data = message.SerializeToString()
                crc = binascii.crc32(data, crc)
                f.write(data)
        if crc_check:
            f.write(_CRC_MARK + crc.to_bytes(10, "big"))


def _strip_crc(content: bytes, path: str, crc_check: bool) -> bytes:
    if content[-17:-10] != _CRC_MARK:
        if crc_check:
            raise ValueError(f"For 'load_checkpoint', the checkpoint file {path!r} has no CRC code to check.")
        return content
    body, expected = content[:-17], int.from_bytes(content[-10:], "big")
    if binascii.crc32(body) != expected:
        raise ValueError(f"For 'load_checkpoint', the CRC check of {path!r} failed: the file is damaged.")
    return body


def _decode(tag: str, tensor_type: str, dims: list, content: bytes):
    """A value's NumPy array (or str) from its joined ``tensor_content``."""
    if tensor_type == _STR:
        text = np.frombuffer(content, f"<U{len(content) // 4}") if content else np.array([""])
        return str(text.reshape(-1)[0]) if dims in ([], [0]) else text
    try:
        dtype = mstype.to_dtype(tensor_type)
    except (TypeError, ValueError, KeyError):
        raise ValueError(f"For 'load_checkpoint', the parameter {tag!r} has an unknown type {tensor_type!r}.") from None
    array = np.frombuffer(content, dtype.np_dtype)
    if dims == [0] and array.size == 1:  # MindSpore's scalar
        return array.reshape(()).copy()
    expected = int(np.prod(dims)) if dims else 1
    if array.size != expected:
        raise ValueError(
            f"For 'load_checkpoint', the parameter {tag!r} holds {array.size} {tensor_type} values but its "
            f"shape {dims} needs {expected}: the file is damaged."
        )
    return array.reshape(dims).copy()


def read_values(path: str, crc_check: bool = False) -> list:
    """``[(name, value)]`` from a MindSpore checkpoint file, in the file's order: a value is a NumPy array
    (its dtype the stored type's; bfloat16 as ``ml_dtypes.bfloat16``) or a str."""
    with open(path, "rb") as f:
        content = _strip_crc(f.read(), path, crc_check)
    message = Checkpoint()
    try:
        message.ParseFromString(content)
    except DecodeError as e:
        raise ValueError(
            f"For 'load_checkpoint', {os.fspath(path)!r} is neither an opforge nor a MindSpore checkpoint "
            f"(the protobuf content cannot be parsed: {e})."
        ) from None
    out, chunks = [], []
    values = [v for v in message.value if v.HasField("tensor") and v.tensor.tensor_type not in _SKIPPED]
    for i, entry in enumerate(values):
        chunks.append(entry.tensor.tensor_content)
        if i + 1 < len(values) and values[i + 1].tag == entry.tag:
            continue
        tensor = entry.tensor
        out.append((entry.tag, _decode(entry.tag, tensor.tensor_type, list(tensor.dims), b"".join(chunks))))
        chunks = []
    return out
