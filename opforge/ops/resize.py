"""Linear and bilinear resizing from primitives: ``ops.ResizeBilinearV2``, ``ops.ResizeBilinear``,
``nn.ResizeBilinear`` and ``ops.interpolate``'s "linear" and "bilinear" modes all end in ``resize_linear``.

Linear interpolation is separable, so a resize is one pass per resized dim. For a dim of ``n`` input
and ``m`` output positions, the source coordinate of output position ``d`` is (MindSpore's and
TensorFlow's conventions)

* ``"asymmetric"`` (the default of ResizeBilinearV2): ``src = d * n / m``;
* ``"align_corners"``: ``src = d * (n - 1) / (m - 1)`` (0 when ``m == 1``), the corners map onto each other;
* ``"half_pixel"``: ``src = max((d + 0.5) * n / m - 0.5, 0)``, pixel centres map onto each other.

With ``i0 = min(floor(src), n - 1)``, ``i1 = min(i0 + 1, n - 1)`` and ``w = src - i0`` (0 where
``i1 == i0``), the output is ``x[i0] * (1 - w) + x[i1] * w`` along the dim. The indices and weights
depend on the static shapes only: they are computed here, on the host, and the data moves through
Gather, Mul and Add, so the gradient (Gather's bprop sums the taps back), vmap, ``opforge.jit`` and
both backends come with those primitives. Half types are computed in float32 and cast back.
"""

from __future__ import annotations

import functools

import numpy as np

from opforge import dtype as mstype
from opforge.primitives import array_ops, math_ops
from opforge.tensor import Tensor

__all__ = ["MODES", "linear_taps", "resize_linear", "check_float_input"]

MODES = ("asymmetric", "align_corners", "half_pixel")
FLOATS = (mstype.float16, mstype.float32, mstype.float64)

_gather = array_ops.Gather()
_mul = math_ops.Mul()
_add = math_ops.Add()
_cast = array_ops.Cast()


@functools.lru_cache(maxsize=256)
def linear_taps(n: int, m: int, mode: str) -> tuple:
    """``(i0, i1, w)`` for the ``m`` output positions of a dim of ``n`` inputs: the two source indices
    (int32) and the weight of ``i1`` (float64), by ``mode`` (one of ``MODES``). Cached, so read-only."""
    dst = np.arange(m, dtype=np.float64)
    if mode == "align_corners":
        src = dst * (n - 1) / (m - 1) if m > 1 else np.zeros(m)
    elif mode == "half_pixel":
        src = np.maximum((dst + 0.5) * n / m - 0.5, 0.0)
    elif mode == "asymmetric":
        src = dst * n / m
    else:
        raise ValueError(f"the coordinate mode must be one of {MODES}, but got {mode!r}")
    i0 = np.minimum(np.floor(src), n - 1).astype(np.int64)
    i1 = np.minimum(i0 + 1, n - 1)
    w = np.where(i1 > i0, src - i0, 0.0)
    taps = (i0.astype(np.int32), i1.astype(np.int32), w)
    for a in taps:
        a.flags.writeable = False
    return taps


def check_float_input(op_name: str, arg: str, x, ndim: int) -> None:
    """``x`` must be a ``ndim``-D float16/float32/float64 Tensor, else a TypeError/ValueError naming
    ``op_name`` and ``arg``."""
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{op_name}', the '{arg}' must be a Tensor, but got {type(x).__name__}.")
    if x.dtype not in FLOATS:
        raise TypeError(
            f"For '{op_name}', the '{arg}' must be a Tensor of dtype float16, float32 or float64, but got {x.dtype}."
        )
    if x.ndim != ndim:
        raise ValueError(f"For '{op_name}', the '{arg}' must be {ndim}-D, but got shape {list(x.shape)}.")


def resize_linear(op_name: str, x: Tensor, sizes: tuple, mode: str) -> Tensor:
    """``x`` with its last ``len(sizes)`` dims resized to ``sizes`` by linear interpolation in ``mode``.
    Those dims of ``x`` must be known (not -1); the sizes positive ints."""
    lead = x.ndim - len(sizes)
    spatial = tuple(x.shape[lead:])
    if any(d < 0 for d in spatial):
        raise ValueError(
            f"For '{op_name}', the resized dims of the input must be known: the interpolation weights are computed "
            f"from them, but got shape {list(x.shape)}."
        )
    if any(n == 0 for n in spatial):
        raise ValueError(f"For '{op_name}', the resized dims of the input must not be empty, but got {list(x.shape)}.")
    dtype = x.dtype
    compute = mstype.float32 if dtype == mstype.float16 else dtype
    out = x if compute == dtype else _cast(x, compute)
    for axis, n, m in zip(range(lead, x.ndim), spatial, sizes):
        i0, i1, w = linear_taps(n, m, mode)
        if not w.any():  # every output sits on an input: a plain gather (none at all when it is the identity)
            if m != n or (i0 != np.arange(n)).any():
                out = _gather(out, Tensor(i0, device=x.device), axis)
            continue
        trailing = (1,) * (x.ndim - 1 - axis)
        low = _gather(out, Tensor(i0, device=x.device), axis)
        high = _gather(out, Tensor(i1, device=x.device), axis)
        w_low = Tensor((1.0 - w).reshape((m, *trailing)).astype(compute.np_dtype), device=x.device)
        w_high = Tensor(w.reshape((m, *trailing)).astype(compute.np_dtype), device=x.device)
        out = _add(_mul(low, w_low), _mul(high, w_high))
    return out if compute == dtype else _cast(out, dtype)
