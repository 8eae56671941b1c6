"""MindSpore's ``mindspore.mint.special``: PyTorch's ``torch.special`` names and arguments, over opforge's
elementwise operators (Erfc, Expm1, Log1p, Round, Sin, Pow) and mint's own ``log_softmax`` and ``logsumexp``."""

from __future__ import annotations

import math

from opforge import dtype as mstype
from opforge import ops
from opforge.mint.nn.functional import log_softmax
from opforge.tensor import Tensor

__all__ = ["erfc", "expm1", "log1p", "log_softmax", "logsumexp", "round", "sinc", "exp2"]

erfc, expm1, log1p = ops.erfc, ops.expm1, ops.log1p


def _float(input) -> Tensor:
    """``input`` as floats: integers and bools become float32 (PyTorch's default float dtype)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"For 'mint.special', the 'input' must be a Tensor, but got {type(input).__name__}.")
    return input if input.dtype.kind in "fc" else ops.cast(input, mstype.float32)


def logsumexp(input, dim, keepdim=False) -> Tensor:
    r""":math:`\log \sum_{dim} e^{x}` over ``dim`` (an int or a tuple of ints), computed without overflow."""
    return ops.logsumexp(input, (dim,) if isinstance(dim, int) else tuple(dim), keepdim)


def round(input, *, decimals=0) -> Tensor:
    """Each element rounded to ``decimals`` decimal places, halves to even (``decimals`` 0: to integers; a
    negative ``decimals`` rounds to tens, hundreds, ...): round(x * 10^d) / 10^d, as PyTorch computes it."""
    if isinstance(decimals, bool) or not isinstance(decimals, int):
        raise TypeError(f"For 'round', the 'decimals' must be an int, but got {decimals!r}.")
    if decimals == 0:
        return ops.round(input)
    if decimals > 0:
        scale = 10.0**decimals
        return ops.div(ops.round(ops.mul(input, scale)), scale)
    scale = 10.0**-decimals
    return ops.mul(ops.round(ops.div(input, scale)), scale)


def sinc(input) -> Tensor:
    r"""The normalised sinc: :math:`\sin(\pi x) / (\pi x)`, and 1 at x = 0 (its gradient there 0). Integers
    become float32; float16, bfloat16, float32, float64."""
    x = _float(input)
    zero = ops.equal(x, 0)
    pix = ops.mul(ops.where(zero, ops.ones_like(x), x), math.pi)  # no 0 / 0, in the value or the gradient
    return ops.where(zero, ops.ones_like(x), ops.div(ops.sin(pix), pix))


def exp2(input) -> Tensor:
    """:math:`2^x`, elementwise (Pow with the base 2). Integers become float32."""
    x = _float(input)
    return ops.pow(ops.full((), 2.0, dtype=x.dtype), x)
