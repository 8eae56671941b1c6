"""The safetensors checkpoint file (``.safetensors``), as MindSpore writes it with ``format="safetensors"``.

The file is Hugging Face's: an 8-byte little-endian header length, a JSON header naming each tensor's dtype,
shape and byte range, then the raw bytes; it is read and written by the ``safetensors`` package (which MindSpore
uses too), never unpickled. MindSpore's conventions on top of it: the header's ``__metadata__`` holds
``{"format": "ms"}``, and with ``crc_check`` a ``"crc_num"``: the CRC-32 over each name's UTF-8 bytes then its
data bytes, names in sorted order. The format has no str values (``append_dict={"note": "..."}`` cannot be saved
in it), and of opforge's dtypes no complex128.
"""

from __future__ import annotations

import binascii

import numpy as np
from safetensors import SafetensorError, safe_open
from safetensors.numpy import save_file

__all__ = ["read_values", "write_values", "SUFFIX"]

SUFFIX = ".safetensors"
_METADATA = {"format": "ms"}


def _crc(pairs) -> int:
    crc = 0
    for name, array in sorted(pairs, key=lambda pair: pair[0]):
        crc = binascii.crc32(name.encode(), crc)
        crc = binascii.crc32(array.reshape(-1).view(np.uint8).data, crc)
    return crc


def write_values(path: str, pairs, crc_check: bool = False) -> None:
    """Write ``(name, value)`` pairs (a value: an opforge Tensor) to ``path``; ``crc_check`` records MindSpore's
    ``crc_num`` in the metadata."""
    arrays = []
    for name, value in pairs:
        if isinstance(value, str):
            raise ValueError(
                f"For 'save_checkpoint', the safetensors format holds tensors only, but {name!r} is the str "
                f"{value!r}; save it with format='ckpt', or leave it out of 'append_dict'."
            )
        # C-contiguous: safetensors.numpy reads the buffer from the data pointer, whatever the strides
        # (np.ascontiguousarray would make a scalar 1-d)
        arrays.append((name, np.require(np.asarray(value), requirements="C")))
    metadata = dict(_METADATA)
    if crc_check:
        metadata["crc_num"] = str(_crc(arrays))
    try:
        save_file(dict(arrays), path, metadata=metadata)
    except SafetensorError as e:
        raise ValueError(f"For 'save_checkpoint', the safetensors format cannot hold this checkpoint: {e}") from None


def read_values(path: str, crc_check: bool = False) -> list:
    """``[(name, NumPy array)]`` from a safetensors file, by name (bfloat16 as ``ml_dtypes.bfloat16``); a
    ``crc_num`` in the metadata is checked when ``crc_check``, and must then be there."""
    try:
        with safe_open(path, framework="np") as f:
            metadata = f.metadata() or {}
            pairs = [(name, f.get_tensor(name)) for name in sorted(f.keys())]
    except (SafetensorError, OSError) as e:
        raise ValueError(f"For 'load_checkpoint', {path!r} is not a readable safetensors file: {e}") from None
    if crc_check:
        if "crc_num" not in metadata:
            raise ValueError(f"For 'load_checkpoint', the checkpoint file {path!r} has no CRC code to check.")
        if str(_crc(pairs)) != metadata["crc_num"]:
            raise ValueError(f"For 'load_checkpoint', the CRC check of {path!r} failed: the file is damaged.")
    return pairs
