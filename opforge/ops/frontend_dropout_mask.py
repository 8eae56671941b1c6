"""MindSpore's two-step dropout: ``DropoutGenMask(Seed0, Seed1)(shape, keep_prob)`` draws a bit-packed uint8 mask,
``DropoutDoMask()(input_x, mask, keep_prob)`` applies it. Both are built from other primitives:

- GenMask draws ``ceil(n / 128) * 128`` uniform values in [0, 1) with the RandExt kernel (n = the shape's
  size), keeps element i where value i < ``keep_prob``, and packs each 8 elements into a byte, element
  ``8 * j + b`` being bit b (from the least significant) of byte j: ``ceil(n / 128) * 16`` bytes, MindSpore's
  length. Its generator is seeded as ``UniformReal``'s (opforge/ops/frontend_random.py): from (Seed0, Seed1) and
  the global seed, or from the global generator when both are 0 (MindSpore's rule); each call draws a new mask,
  under ``jit`` too.
- DoMask unpacks the first n bits (FloorDiv and FloorMod by the bit weights) and returns
  ``input_x * bit / keep_prob``, so it differentiates in ``input_x``.

``keep_prob`` is a Tensor read on the device (a jitted step follows a new value)."""

from __future__ import annotations

import math

import numpy as np

from opforge import dtype as mstype
from opforge.ops import functional as F
from opforge.ops.frontend_random import _SeededOperator
from opforge.primitives import random_ops
from opforge.primitives.validator import Validator as validator
from opforge.tensor import Tensor

__all__ = ["DropoutGenMask", "DropoutDoMask"]

_BITS = np.array([1 << b for b in range(8)], np.int32)  # bit b of a byte: element 8 * j + b
_rand = random_ops.RandExt()


def _mask_bytes(n: int) -> int:
    """MindSpore's mask length for n elements: ceil(n / 128) * 16 bytes."""
    return -(-n // 128) * 16


def _keep_prob(op: str, keep_prob, dtype) -> Tensor:
    if not isinstance(keep_prob, Tensor):
        raise TypeError(f"For '{op}', the 'keep_prob' must be a Tensor, but got {type(keep_prob).__name__}.")
    if keep_prob.size != 1:
        raise ValueError(f"For '{op}', the 'keep_prob' must hold one value, but got shape {list(keep_prob.shape)}.")
    validator.check_tensor_dtype_valid("keep_prob", keep_prob.dtype, (mstype.float16, mstype.float32), op)
    return F.cast(F.reshape(keep_prob, ()), dtype)


class DropoutGenMask(_SeededOperator):
    """``DropoutGenMask(Seed0=0, Seed1=0)(shape, keep_prob)`` (MindSpore's ``ops.DropoutGenMask``): a 1-D uint8 mask
    of ``ceil(prod(shape) / 128) * 16`` bytes whose first ``prod(shape)`` bits (least significant first) are 1 with
    probability ``keep_prob`` (a 0-D float16 or float32 Tensor in (0, 1]). ``shape`` is a tuple of ints. New
    bits at each call (the module docstring)."""

    def __init__(self, Seed0=0, Seed1=0):  # noqa: N803 (MindSpore's argument names)
        for arg, seed in (("Seed0", Seed0), ("Seed1", Seed1)):
            validator.check_value_type(arg, seed, [int], "DropoutGenMask")
        self.Seed0, self.Seed1 = Seed0, Seed1
        super().__init__(Seed0, Seed1)

    def __call__(self, shape, keep_prob):
        op = "DropoutGenMask"
        if not isinstance(shape, tuple):
            raise TypeError(f"For '{op}', the 'shape' must be a tuple, but got {type(shape).__name__}.")
        for d in shape:
            if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0:
                raise ValueError(f"For '{op}', the 'shape' must hold non-negative ints, but got {shape!r}.")
        count = _mask_bytes(math.prod(shape)) * 8
        keep = _keep_prob(op, keep_prob, mstype.float32)
        draws = _rand((count,), *self._inputs(), mstype.float32)
        bits = F.cast(F.less(draws, keep), mstype.int32)
        weights = Tensor(_BITS, device=bits.device)
        packed = F.reduce_sum_op()(F.mul(F.reshape(bits, (count // 8, 8)), weights), -1)
        return F.cast(packed, mstype.uint8)


class DropoutDoMask:
    """``DropoutDoMask()(input_x, mask, keep_prob)`` (MindSpore's ``ops.DropoutDoMask``): ``input_x * bit /
    keep_prob``, bit i being bit i of the uint8 ``mask`` from ``DropoutGenMask`` for ``input_x``'s shape (byte
    ``i // 8``, bit ``i % 8`` from the least significant). ``input_x`` float16 or float32; ``keep_prob`` a 0-D
    Tensor. Differentiable in ``input_x``."""

    def __call__(self, input_x, mask, keep_prob):
        op = "DropoutDoMask"
        for arg, value in (("input_x", input_x), ("mask", mask)):
            if not isinstance(value, Tensor):
                raise TypeError(f"For '{op}', the '{arg}' must be a Tensor, but got {type(value).__name__}.")
        validator.check_tensor_dtype_valid("input_x", input_x.dtype, (mstype.float16, mstype.float32), op)
        validator.check_tensor_dtype_valid("mask", mask.dtype, (mstype.uint8,), op)
        n = math.prod(input_x.shape)
        if mask.ndim != 1 or mask.shape[0] != _mask_bytes(n):
            raise ValueError(
                f"For '{op}', the 'mask' must be a 1-D Tensor of {_mask_bytes(n)} bytes (ceil(n / 128) * 16 for the "
                f"{n} elements of 'input_x'), but got shape {list(mask.shape)}."
            )
        keep = _keep_prob(op, keep_prob, input_x.dtype)
        weights = Tensor(_BITS, device=mask.device)
        words = F.reshape(F.cast(mask, mstype.int32), (mask.shape[0], 1))
        bits = F.reshape(F.floor_mod(F.floor_div(words, weights), 2), (mask.shape[0] * 8,))
        if bits.shape[0] != n:
            bits = bits[:n]
        scale = F.div(F.cast(F.reshape(bits, tuple(input_x.shape)), input_x.dtype), keep)
        return F.mul(input_x, scale)
