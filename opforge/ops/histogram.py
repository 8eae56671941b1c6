"""Histograms from primitives: MindSpore's ``ops.HistogramFixedWidth`` and ``ops.histc``. Each element's bin is
computed element-wise (in float64) and the bins are counted by UnsortedSegmentSum, so both run under ``jit``
and on the CPU and the GPU, with no host reads (``histc``'s data range is ReduceMin/ReduceMax). Counts have no
gradient."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.ops import functional as F
from opforge.primitives import array_ops
from opforge.primitives.validator import Validator as validator
from opforge.tensor import Tensor

__all__ = ["HistogramFixedWidth", "histc"]

_segment_sum = array_ops.UnsortedSegmentSum()


def _tensor(op: str, arg: str, x) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{op}', the '{arg}' must be a Tensor, but got {type(x).__name__}.")
    return x


def _count(bins: Tensor, n: int, dtype) -> Tensor:
    """How many of the int32 ``bins`` (flattened) hold each value 0..n-1, as ``dtype``."""
    flat = F.reshape(bins, (-1,))
    return _segment_sum(F.ones_like(F.cast(flat, dtype)), flat, n)


class HistogramFixedWidth:
    r"""A histogram of ``nbins`` equal bins over ``range`` (MindSpore's ``ops.HistogramFixedWidth``,
    TensorFlow's ``histogram_fixed_width``): ``HistogramFixedWidth(nbins, dtype="int32")(x, range)``, ``range``
    [2] (low, high) of ``x``'s dtype. Each element of ``x`` (any shape) goes to bin

    .. math:: \min\Big(\Big\lfloor \frac{\max(x, low) - low}{(high - low) / nbins} \Big\rfloor, nbins - 1\Big),

    so values at or below ``low`` count in bin 0 and values at or above ``high`` in the last. Output [nbins]
    int32. dtypes of ``x``: int32, float16, float32, float64."""

    def __init__(self, nbins, dtype="int32"):
        validator.check_value_type("nbins", nbins, [int], "HistogramFixedWidth")
        if nbins < 1:
            raise ValueError(f"For 'HistogramFixedWidth', the 'nbins' must be at least 1, but got {nbins}.")
        validator.check_value_type("dtype", dtype, [str], "HistogramFixedWidth")
        if dtype != "int32":
            raise ValueError(f"For 'HistogramFixedWidth', the 'dtype' must be 'int32', but got {dtype!r}.")
        self.nbins, self.dtype = nbins, dtype

    def __call__(self, x, range):  # noqa: A002 (MindSpore's name)
        name = "HistogramFixedWidth"
        x, r = _tensor(name, "x", x), _tensor(name, "range", range)
        dtypes = (mstype.int32, mstype.float16, mstype.float32, mstype.float64)
        validator.check_tensors_dtypes_same_and_valid({"x": x.dtype, "range": r.dtype}, dtypes, name)
        if tuple(r.shape) != (2,):
            raise ValueError(f"For '{name}', the 'range' must have shape [2], but got {list(r.shape)}.")
        low, high = F.unstack(r, axis=0)
        offset = F.cast(F.maximum(x, low) - low, mstype.float64)
        step = F.cast(high - low, mstype.float64) / float(self.nbins)
        bins = F.minimum(F.floor(offset / step), float(self.nbins - 1))
        return _count(F.cast(bins, mstype.int32), self.nbins, mstype.int32)


def _bound(arg: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"For 'histc', the '{arg}' must be a float or an int, but got {type(value).__name__}.")
    return float(value)


def histc(input, bins=100, min=0.0, max=0.0):  # noqa: A001, A002 (MindSpore's names)
    r"""A histogram of ``bins`` equal bins over [min, max] (MindSpore's ``ops.histc``, PyTorch's): an element
    ``v`` inside the range goes to bin :math:`\lfloor (v - min) / (max - min) \cdot bins \rfloor` (``max`` itself
    to the last bin), elements outside are ignored. When ``min`` and ``max`` are both 0 the data's minimum and
    maximum are used (and a range of one value widens to [v - 1, v + 1]). Output [bins], int32 for an int32
    ``input``, else float32. dtypes: int32, float16, float32 (and float64)."""
    x = _tensor("histc", "input", input)
    validator.check_tensor_dtype_valid(
        "input", x.dtype, (mstype.int32, mstype.float16, mstype.float32, mstype.float64), "histc"
    )
    validator.check_value_type("bins", bins, [int], "histc")
    if bins <= 0:
        raise ValueError(f"For 'histc', the 'bins' must be positive, but got {bins}.")
    lo, hi = _bound("min", min), _bound("max", max)
    if lo > hi:
        raise ValueError(f"For 'histc', the 'min' must not exceed 'max', but got min {min} and max {max}.")
    v = F.reshape(F.cast(x, mstype.float64), (-1,))
    if lo == hi == 0.0:  # the data's own range
        low, high = F.reduce_min_op()(v), F.reduce_max_op()(v)
    else:
        low, high = F.fill(mstype.float64, (), lo), F.fill(mstype.float64, (), hi)
    same = F.equal(low, high)
    low, high = F.where(same, low - 1.0, low), F.where(same, high + 1.0, high)
    position = F.floor((v - low) / (high - low) * float(bins))
    position = F.minimum(position, float(bins - 1))  # max itself: the last bin
    inside = F.logical_and(F.greater_equal(v, low), F.less_equal(v, high))
    index = F.cast(F.where(inside, position, float(bins)), mstype.int32)  # outside: one extra bin, dropped
    out_dtype = mstype.int32 if x.dtype == mstype.int32 else mstype.float32
    counts = _count(index, bins + 1, out_dtype)
    return counts[:bins]
