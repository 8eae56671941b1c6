"""Functional forms of common operators: shared primitive instances (``F.add(x, y)``)."""

from __future__ import annotations

import builtins
import functools
import itertools
import math
import types

import numpy as np

from opforge import dtype as mstype
from opforge.dispatch.batching import vmap  # noqa: F401 (MindSpore's ops.functional.vmap, ops.vmap)
from opforge.dispatch.trace import TraceError, note_gradient_cut, tracing
from opforge.errors import IndexOutOfRangeError
from opforge.ops import frontend_shape as _frontend_shape
from opforge.ops import interpolate_v1 as _interpolate_v1
from opforge.ops import parameter_func as _parameter_func
from opforge.ops import resize as _resize
from opforge.ops.functional_loss import (  # noqa: F401
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cosine_embedding_loss,
    cross_entropy,
    gaussian_nll_loss,
    hinge_embedding_loss,
    huber_loss,
    kl_div,
    l1_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    nll_loss,
    smooth_l1_loss,
    soft_margin_loss,
    triplet_margin_loss,
)
from opforge.primitives import array_ops, attention_ops, math_ext_ops, math_ops, nn_ops
from opforge.tensor import Tensor

add = math_ops.Add()
sub = math_ops.Sub()
mul = math_ops.Mul()
div = math_ops.RealDiv()
neg = math_ops.Neg()
exp = math_ops.Exp()
log = math_ops.Log()
_matmul_2d = math_ops.MatMul()
relu = nn_ops.ReLU()
sigmoid = nn_ops.Sigmoid()
tanh = nn_ops.Tanh()
cast = array_ops.Cast()
reshape = array_ops.Reshape()
assign = array_ops.Assign()
assign_sub = math_ops.AssignSub()
zeros_like = array_ops.ZerosLike()
ones_like = array_ops.OnesLike()
fill = array_ops.Fill()
maximum = math_ops.Maximum()
minimum = math_ops.Minimum()
equal = math_ops.Equal()
sqrt = math_ops.Sqrt()
conj = math_ops.Conj()
square = math_ops.Square()
transpose = array_ops.Transpose()
_expand_dims = array_ops.ExpandDims()
_l2_loss = nn_ops.L2Loss()


def expand_dims(input_x, axis: int):
    """``input_x`` with a new dim of size 1 at ``axis`` (MindSpore's ``ops.expand_dims``)."""
    return _expand_dims(input_x, axis)


@functools.cache
def _squeeze(axis) -> array_ops.Squeeze:
    return array_ops.Squeeze(axis)


def squeeze(input_x, axis=()):
    """``input_x`` without the size-1 dims in ``axis`` (all of them by default)."""
    return _squeeze(tuple(axis) if isinstance(axis, list) else axis)(input_x)


@functools.cache
def _argmax(axis: int) -> array_ops.Argmax:
    return array_ops.Argmax(axis, mstype.int64)


def _index_of_extreme(name: str, prim, input, axis, keepdims: bool, keep_name: str):  # noqa: A002
    """MindSpore 2's argmax / argmin: along ``axis``, or of the flattened input when it is None."""
    if not isinstance(keepdims, bool):
        raise TypeError(f"For '{name}', the '{keep_name}' must be bool, but got {type(keepdims).__name__}.")
    if axis is None:
        return prim(0)(reshape(input, (-1,)))
    out = prim(axis)(input)
    return expand_dims(out, axis) if keepdims else out


def argmax(input, dim=None, keepdim=False, *, axis=None):  # noqa: A002 (MindSpore's name)
    """The index (int64) of the largest element along ``dim`` (of the flattened input when None), as
    MindSpore 2's ``ops.argmax``; ``axis`` is MindSpore 1's name of ``dim``."""
    dim = axis if dim is None else dim
    return _index_of_extreme("argmax", _argmax, input, dim, keepdim, "keepdim")


@functools.cache
def reduce_max_op(keep_dims: bool = False) -> math_ops.ReduceMax:
    return math_ops.ReduceMax(keep_dims)


@functools.cache
def _argmin(axis: int) -> array_ops.Argmin:
    return array_ops.Argmin(axis)


def argmin(input, axis=None, keepdims=False):  # noqa: A002 (MindSpore's name)
    """The index (int32) of the smallest element along ``axis`` (of the flattened input when None), as
    MindSpore 2's ``ops.argmin``."""
    return _index_of_extreme("argmin", _argmin, input, axis, keepdims, "keepdims")


@functools.cache
def reduce_min_op(keep_dims: bool = False) -> math_ops.ReduceMin:
    return math_ops.ReduceMin(keep_dims)


@functools.cache
def reduce_prod_op(keep_dims: bool = False) -> math_ops.ReduceProd:
    return math_ops.ReduceProd(keep_dims)


@functools.cache
def reduce_all_op(keep_dims: bool = False) -> math_ops.ReduceAll:
    return math_ops.ReduceAll(keep_dims)


@functools.cache
def reduce_any_op(keep_dims: bool = False) -> math_ops.ReduceAny:
    return math_ops.ReduceAny(keep_dims)


@functools.cache
def _cumsum(exclusive: bool, reverse: bool) -> math_ops.CumSum:
    return math_ops.CumSum(exclusive, reverse)


def cumsum(x, axis: int, exclusive: bool = False, reverse: bool = False):
    """The cumulative sum of ``x`` along ``axis`` (the CumSum primitive)."""
    return _cumsum(exclusive, reverse)(x, axis)


_cumprod = math_ops.CumProd()


@functools.cache
def _cummax(axis: int) -> math_ops.Cummax:
    return math_ops.Cummax(axis)


@functools.cache
def _cummin(axis: int) -> math_ops.Cummin:
    return math_ops.Cummin(axis)


def cummax(input, axis: int):  # noqa: A002 (MindSpore's name)
    """``(values, indices)``: the running maximum of ``input`` along ``axis`` and its position (int64)."""
    return _cummax(axis)(input)


def cummin(input, axis: int):  # noqa: A002 (MindSpore's name)
    """``(values, indices)``: the running minimum of ``input`` along ``axis`` and its position (int64)."""
    return _cummin(axis)(input)


def cumprod(input, dim: int, dtype=None):  # noqa: A002 (MindSpore's name)
    """The cumulative product of ``input`` along ``dim`` (the CumProd primitive), cast to ``dtype`` first
    when given (MindSpore's ``ops.cumprod``)."""
    return _cumprod(input if dtype is None else cast(input, dtype), dim)


def l2_loss(x):
    """``sum(x ** 2) / 2`` (the L2Loss primitive)."""
    return _l2_loss(x)


def mse_loss(input_x, target, reduction: str = "mean"):
    """``(input_x - target) ** 2``, averaged ("mean"), summed ("sum") or not ("none")."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"For 'mse_loss', the 'reduction' must be 'mean', 'sum' or 'none', but got {reduction!r}.")
    loss = square(sub(input_x, target))
    if reduction == "none":
        return loss
    return (reduce_mean_op if reduction == "mean" else reduce_sum_op)(False)(loss)


@functools.cache
def reduce_sum_op(keep_dims: bool = False) -> math_ops.ReduceSum:
    return math_ops.ReduceSum(keep_dims)


@functools.cache
def reduce_mean_op(keep_dims: bool = False) -> math_ops.ReduceMean:
    return math_ops.ReduceMean(keep_dims)


# MindSpore's functional names are the primitives themselves, called ``(x, axis=())`` (``F.reduce_sum(x, 1)``);
# the ``reduce_*_op(keep_dims)`` factories above give the cached primitive for a ``keep_dims``.
reduce_sum = reduce_sum_op(False)
reduce_mean = reduce_mean_op(False)
reduce_max = reduce_max_op(False)
reduce_min = reduce_min_op(False)
reduce_prod = reduce_prod_op(False)


def _pair(value):
    return tuple(value) if isinstance(value, (tuple, list)) else value


@functools.cache
def _conv2d(out_channel, kernel_size, stride, pad_mode, padding, dilation, groups):
    from opforge.primitives import conv_ops

    return conv_ops.Conv2D(
        out_channel, kernel_size, pad_mode=pad_mode, pad=padding, stride=stride, dilation=dilation, group=groups
    )


def conv2d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1, groups=1):  # noqa: A002
    """2-D convolution of ``input`` [N, C, H, W] with ``weight`` [O, C / groups, kh, kw], plus ``bias``
    [O] when given (MindSpore's ``ops.conv2d``): the Conv2D primitive, then BiasAdd."""
    shape = weight.shape
    if len(shape) != 4:
        raise ValueError(f"For 'conv2d', the 'weight' must be 4-D, but got shape {list(shape)}.")
    prim = _conv2d(shape[0], (shape[2], shape[3]), _pair(stride), pad_mode, _pair(padding), _pair(dilation), groups)
    out = prim(input, weight)
    return out if bias is None else _bias_add(out, bias)


_bias_add = nn_ops.BiasAdd()


@functools.cache
def _pool2d(name, kernel_size, stride, pad_mode):
    from opforge.primitives import conv_ops

    return getattr(conv_ops, name)(kernel_size=kernel_size, strides=stride, pad_mode=pad_mode)


def max_pool2d(x, kernel_size, stride=None, pad_mode="valid"):
    """2-D max pooling of ``x`` [N, C, H, W] (the MaxPool primitive); ``stride`` defaults to ``kernel_size``."""
    kernel_size = _pair(kernel_size)
    return _pool2d("MaxPool", kernel_size, kernel_size if stride is None else _pair(stride), pad_mode)(x)


def avg_pool2d(x, kernel_size, stride=None, pad_mode="valid"):
    """2-D average pooling of ``x`` [N, C, H, W] (the AvgPool primitive); ``stride`` defaults to ``kernel_size``."""
    kernel_size = _pair(kernel_size)
    return _pool2d("AvgPool", kernel_size, kernel_size if stride is None else _pair(stride), pad_mode)(x)


@functools.cache
def _adaptive_avg_pool2d(output_size):
    from opforge.primitives import conv_ops

    return conv_ops.AdaptiveAvgPool2D(output_size)


def adaptive_avg_pool2d(input, output_size):  # noqa: A002 (MindSpore's name)
    """2-D adaptive average pooling of ``input`` [C, H, W] or [N, C, H, W] to ``output_size`` (an int, or a pair
    of ints or None): the AdaptiveAvgPool2D primitive, MindSpore's ``ops.adaptive_avg_pool2d``."""
    return _adaptive_avg_pool2d(output_size)(input)


def pixel_shuffle(input, upscale_factor):  # noqa: A002 (MindSpore's name)
    """MindSpore's ``ops.pixel_shuffle``: [*, C * r * r, H, W] -> [*, C, H * r, W * r] with r = ``upscale_factor``,
    out[..., c, h * r + i, w * r + j] = input[..., c * r * r + i * r + j, h, w]; Reshape and Transpose."""
    if isinstance(upscale_factor, bool) or not isinstance(upscale_factor, int) or upscale_factor < 1:
        raise ValueError(
            f"For 'pixel_shuffle', the 'upscale_factor' must be a positive int, but got {upscale_factor!r}."
        )
    shape = tuple(input.shape)
    r = upscale_factor
    if len(shape) < 3 or shape[-3] % (r * r):
        raise ValueError(
            f"For 'pixel_shuffle', the input must have rank 3 or more and a channel dim (-3) divisible by "
            f"upscale_factor ** 2 = {r * r}, but got shape {list(shape)}."
        )
    *lead, c, h, w = shape
    k = len(lead)
    x = reshape(input, (*lead, c // (r * r), r, r, h, w))
    x = transpose(x, (*builtins.range(k), k, k + 3, k + 1, k + 4, k + 2))
    return reshape(x, (*lead, c // (r * r), h * r, w * r))


@functools.lru_cache(maxsize=256)
def _nearest_taps(n: int, m: int, align_corners=False, half_pixel_centers=False, scale=None) -> np.ndarray:
    """The input index (int32) each of the ``m`` outputs of a dim of ``n`` inputs reads (MindSpore's nearest
    rule, TensorFlow's legacy one): ``src = d * step`` (``(d + 0.5) * step`` with ``half_pixel_centers``), with
    ``step = n / m``, or ``1 / scale`` for a given scale factor, or ``(n - 1) / (m - 1)`` with
    ``align_corners`` (m > 1); rounded half away from zero with ``align_corners``, floored otherwise, clamped
    to [0, n - 1]. Cached, so read-only (``interpolate`` and ``ResizeNearestNeighbor``)."""
    if align_corners and m > 1:
        step = (n - 1) / (m - 1)
    else:
        step = n / m if scale is None else 1.0 / scale
    dst = np.arange(m, dtype=np.float64)
    src = (dst + 0.5) * step if half_pixel_centers else dst * step
    src = np.floor(src + 0.5) if align_corners else np.floor(src)
    taps = np.clip(src, 0, n - 1).astype(np.int32)
    taps.flags.writeable = False
    return taps


_LINEAR_MODES = {"linear": 1, "bilinear": 2}  # interpolate's linear modes: their number of spatial dims


def interpolate(
    input,  # noqa: A002
    size=None,
    scale_factor=None,
    mode="nearest",
    align_corners=None,
    recompute_scale_factor=None,
    *,
    roi=None,
    scales=None,
    sizes=None,
    coordinate_transformation_mode=None,
):
    """MindSpore's ``ops.interpolate`` (``ops.upsample``) on [N, C, *spatial], for three modes:

    * ``"nearest"``, 1 to 3 spatial dims: output position d of a dim reads input floor(d * in / out) (with
      ``size``, or with ``recompute_scale_factor``) or floor(d / scale) (with ``scale_factor``; out =
      floor(in * scale)). One Gather per spatial dim, so its gradient sums the copies back; ``align_corners``
      must be None.
    * ``"linear"`` ([N, C, W]) and ``"bilinear"`` ([N, C, H, W]): linear interpolation per dim between the
      inputs around the source coordinate, src = d * (in - 1) / (out - 1) (0 when out = 1) with
      ``align_corners=True``, else (False or None) max((d + 0.5) * in / out - 0.5, 0) (half-pixel centres,
      ResizeBilinearV2's ``half_pixel_centers``), in / out being the ratio of the sizes (out = floor(in *
      scale) with ``scale_factor``). Gather, Mul and Add (opforge/ops/resize.py): float16 (computed in
      float32), float32 and float64 on the CPU and the GPU.

    Other modes ("bicubic", "trilinear", "area", "nearest-exact") raise ValueError.

    The keyword-only ``roi``, ``scales``, ``sizes`` and ``coordinate_transformation_mode`` are MindSpore 1.x's
    arguments (``interpolate(x, roi, scales, sizes, coordinate_transformation_mode="align_corners",
    mode="linear")``): a call passing one of them runs the older function (opforge/ops/interpolate_v1.py) and
    may not pass ``size``, ``scale_factor``, ``align_corners`` or ``recompute_scale_factor``."""
    old = {"roi": roi, "scales": scales, "sizes": sizes}
    old["coordinate_transformation_mode"] = coordinate_transformation_mode
    if any(v is not None for v in old.values()):
        given = {"size": size, "scale_factor": scale_factor, "align_corners": align_corners,
                 "recompute_scale_factor": recompute_scale_factor}  # fmt: skip
        mixed = sorted(k for k, v in given.items() if v is not None)
        if mixed:
            raise TypeError(
                f"For 'interpolate', MindSpore 1.x's arguments {sorted(k for k, v in old.items() if v is not None)} "
                f"cannot be mixed with the 2.x arguments {mixed}."
            )
        return _interpolate_v1.interpolate_v1(input, roi, scales, sizes, coordinate_transformation_mode, mode)
    if mode != "nearest" and mode not in _LINEAR_MODES:
        raise ValueError(
            f"For 'interpolate', the 'mode' must be 'nearest', 'linear' or 'bilinear' (the modes opforge implements), "
            f"but got {mode!r}."
        )
    if mode == "nearest" and align_corners is not None:
        raise ValueError(
            f"For 'interpolate', 'align_corners' must be None for mode 'nearest', but got {align_corners}."
        )
    if mode != "nearest" and align_corners is not None and not isinstance(align_corners, bool):
        raise TypeError(
            f"For 'interpolate', the 'align_corners' must be a bool or None, but got {type(align_corners).__name__}."
        )
    if not isinstance(input, Tensor):
        raise TypeError(f"For 'interpolate', the 'input' must be a Tensor, but got {type(input).__name__}.")
    shape = tuple(input.shape)
    dims = len(shape) - 2
    if mode in _LINEAR_MODES and dims != _LINEAR_MODES[mode]:
        raise ValueError(
            f"For 'interpolate', mode {mode!r} takes a {_LINEAR_MODES[mode] + 2}-D input, but got shape {list(shape)}."
        )
    if dims not in (1, 2, 3):
        raise ValueError(f"For 'interpolate', the input must be 3-D, 4-D or 5-D, but got shape {list(shape)}.")
    if (size is None) == (scale_factor is None):
        raise ValueError("For 'interpolate', exactly one of 'size' and 'scale_factor' must be given.")
    spatial = shape[2:]
    if size is not None:
        sizes = (size,) * dims if isinstance(size, int) else tuple(size)
        scales = (None,) * dims
    else:
        scales = (scale_factor,) * dims if isinstance(scale_factor, (int, float)) else tuple(scale_factor)
        sizes = tuple(int(np.floor(n * s)) for n, s in zip(spatial, scales))
        if recompute_scale_factor:
            scales = (None,) * dims
    if len(sizes) != dims or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1 for v in sizes):
        raise ValueError(
            f"For 'interpolate', the output size must be {dims} positive ints for input {list(shape)}, but got {sizes}."
        )
    if mode in _LINEAR_MODES:
        _resize.check_float_input("interpolate", "input", input, dims + 2)
        return _resize.resize_linear("interpolate", input, sizes, "align_corners" if align_corners else "half_pixel")
    out = input
    for axis, (n, o, scale) in enumerate(zip(spatial, sizes, scales), start=2):
        if o != n or scale not in (None, 1, 1.0):
            out = gather_(out, Tensor(_nearest_taps(n, o, scale=scale), device=input.device), axis)
    return out


upsample = interpolate  # MindSpore's alias


# ---------------------------------------------------------------------------------------------
# Elementwise math, second batch: MindSpore's functional names (ops.abs, ops.pow, ops.greater, ...).
abs = math_ops.Abs()  # noqa: A001 (MindSpore's name)
erf = math_ops.Erf()
floor = math_ops.Floor()
ceil = math_ops.Ceil()
round = math_ops.Round()  # noqa: A001
sign = math_ops.Sign()
isnan = math_ops.IsNan()
isfinite = math_ops.IsFinite()
logical_not = math_ops.LogicalNot()
logical_and = math_ops.LogicalAnd()
logical_or = math_ops.LogicalOr()
pow = math_ops.Pow()  # noqa: A001
tensor_pow = pow  # MindSpore's F.tensor_pow (the zoo's GPT EvalNet: F.tensor_pow(np.e, x))
atan2 = math_ops.Atan2()
floor_div = math_ops.FloorDiv()
floor_divide = floor_div
floor_mod = math_ops.FloorMod()
remainder = floor_mod  # input - floor(input / other) * other
fmod = math_ops.Mod()  # truncated, with the sign of input
greater = math_ops.Greater()
gt = greater
greater_equal = math_ops.GreaterEqual()
ge = greater_equal
less = math_ops.Less()
lt = less
less_equal = math_ops.LessEqual()
le = less_equal
not_equal = math_ops.NotEqual()
ne = not_equal
hardsigmoid = nn_ops.HSigmoid()
relu6 = nn_ops.ReLU6()
hardswish = nn_ops.HSwish()
_div = math_ops.Div()
_gelu = nn_ops.GeLU()
_softplus = nn_ops.Softplus()


def divide(input, other, rounding_mode=None):  # noqa: A002 (MindSpore's argument name)
    """``input / other`` (MindSpore's ``ops.div`` / ``ops.divide``): ``rounding_mode`` None (the Div
    primitive: true division for floats, truncation for integers), "floor" (FloorDiv) or "trunc"
    (the quotient rounded toward zero)."""
    if rounding_mode is None:
        return _div(input, other)
    if rounding_mode == "floor":
        return floor_div(input, other)
    if rounding_mode == "trunc":
        q = _div(input, other)
        if q.dtype.kind != "f":
            return q  # integer Div already truncates
        return sub(q, fmod(q, 1.0))
    raise ValueError(f"For 'div', the 'rounding_mode' must be None, 'floor' or 'trunc', but got {rounding_mode!r}.")


def gelu(input_x, approximate="tanh"):
    """GeLU: ``approximate="tanh"`` the GeLU primitive (MindSpore's tanh formula), ``"none"`` the exact
    :math:`x \\Phi(x) = x (1 + erf(x / \\sqrt 2)) / 2`."""
    if approximate == "tanh":
        return _gelu(input_x)
    if approximate == "none":
        return mul(mul(input_x, 0.5), add(erf(mul(input_x, 0.7071067811865476)), 1.0))
    raise ValueError(f"For 'gelu', the 'approximate' must be 'tanh' or 'none', but got {approximate!r}.")


def softplus(input, beta=1, threshold=20):  # noqa: A002
    """:math:`\\frac{1}{\\beta} \\log(1 + e^{\\beta x})` (the Softplus primitive on ``beta * x``). The
    primitive is overflow-free, so ``threshold`` (MindSpore's switch to the identity above it) only
    changes results by under one ulp; it is accepted for MindSpore's signature."""
    if not isinstance(beta, (int, float)) or isinstance(beta, bool) or beta == 0:
        raise ValueError(f"For 'softplus', the 'beta' must be a nonzero number, but got {beta!r}.")
    if not isinstance(threshold, (int, float)) or isinstance(threshold, bool):
        raise TypeError(f"For 'softplus', the 'threshold' must be a number, but got {type(threshold).__name__}.")
    if beta == 1:
        return _softplus(input)
    return div(_softplus(mul(input, float(beta))), float(beta))


def leaky_relu(input, alpha=0.2):  # noqa: A002
    """MindSpore's ``ops.leaky_relu``: :math:`\\max(\\alpha x, x)` (:math:`\\min` for alpha > 1), i.e.
    x for x >= 0 and alpha * x below, built on Maximum / Minimum."""
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool):
        raise TypeError(f"For 'leaky_relu', the 'alpha' must be a number, but got {type(alpha).__name__}.")
    select = minimum if alpha > 1 else maximum
    return select(mul(input, float(alpha)), input)


# -- the activations of MindSpore's nn list: SeLU, CeLU, Softsign, HShrink, SoftShrink and Mish are
# primitives; silu, logsigmoid, hardtanh, tanhshrink and prelu are composed of primitives as MindSpore's are.

selu = nn_ops.SeLU()
softsign = nn_ops.Softsign()
mish = nn_ops.Mish()


def _number(op: str, name: str, value) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise TypeError(f"For '{op}', the '{name}' must be a number, but got {type(value).__name__}.")
    return float(value)


def celu(x, alpha=1.0):
    """MindSpore's ``ops.celu``: x for x > 0, else ``alpha * (exp(x / alpha) - 1)`` (the CeLU primitive)."""
    return nn_ops.CeLU(_number("celu", "alpha", alpha))(x)


def hardshrink(x, lambd=0.5):
    """MindSpore's ``ops.hardshrink``: x where ``|x| > lambd``, else 0 (the HShrink primitive)."""
    return nn_ops.HShrink(_number("hardshrink", "lambd", lambd))(x)


def softshrink(x, lambd=0.5):
    """MindSpore's ``ops.softshrink``: x - lambd above lambd, x + lambd below -lambd, else 0 (SoftShrink)."""
    return nn_ops.SoftShrink(_number("softshrink", "lambd", lambd))(x)


def silu(x):
    """MindSpore's ``ops.silu``: ``x * sigmoid(x)``."""
    return mul(x, sigmoid(x))


def logsigmoid(x):
    """``log(sigmoid(x))``, computed as ``-softplus(-x)`` so that it neither overflows nor loses digits."""
    return neg(_softplus(neg(x)))


def hardtanh(x, min_val=-1.0, max_val=1.0):
    """MindSpore's ``ops.hardtanh``: x clipped to [min_val, max_val] (Maximum then Minimum)."""
    low, high = _number("hardtanh", "min_val", min_val), _number("hardtanh", "max_val", max_val)
    if low > high:
        raise ValueError(f"For 'hardtanh', the 'min_val' must be <= 'max_val', but got {low} and {high}.")
    return minimum(maximum(x, low), high)


def tanhshrink(x):
    """``x - tanh(x)``."""
    return sub(x, tanh(x))


def prelu(x, weight):
    """MindSpore's ``ops.prelu``: x for x > 0, else ``weight * x``, ``weight`` a [C] Tensor over the channel
    dim (dim 1; the last dim of a 1-D x) or a [1] Tensor shared by all (Select of x and x * weight)."""
    channels = 1 if x.ndim == 0 else (x.shape[1] if x.ndim >= 2 else x.shape[0])
    if weight.ndim != 1 or weight.shape[0] not in (1, channels):
        raise ValueError(
            f"For 'prelu', the 'weight' must be a 1-D Tensor of 1 or {channels} (the channels) elements, "
            f"but got shape {list(weight.shape)}."
        )
    if x.ndim >= 2:
        weight = reshape(weight, (weight.shape[0],) + (1,) * (x.ndim - 2))
    return select(greater(x, 0.0), x, mul(x, weight))


def clip_by_value(x, clip_value_min=None, clip_value_max=None):
    """MindSpore's ``ops.clip_by_value``: ``max(x, clip_value_min)`` then ``min(., clip_value_max)``
    (Maximum / Minimum), so every element is ``clip_value_max`` when min > max. A bound may be a
    Tensor or a number, None leaves that side open; the result keeps ``x``'s dtype. ``x`` may be a
    list or tuple of Tensors, each clipped."""
    if isinstance(x, (list, tuple)):
        return type(x)(clip_by_value(t, clip_value_min, clip_value_max) for t in x)
    if clip_value_min is None and clip_value_max is None:
        raise ValueError("For 'clip_by_value', at least one of 'clip_value_min' and 'clip_value_max' must be given.")
    if getattr(x, "dtype", None) is mstype.bool_:
        raise TypeError("For 'clip_by_value', the 'x' must be a Tensor of numbers, but got a bool Tensor.")
    out = x
    if clip_value_min is not None:
        out = maximum(out, clip_value_min)
    if clip_value_max is not None:
        out = minimum(out, clip_value_max)
    if hasattr(x, "dtype") and out.dtype is not x.dtype:
        out = cast(out, x.dtype)
    return out


clamp = clip_by_value


# -- data movement (MindSpore's ops.concat, ops.stack, ops.split, ops.slice, ...) -------------------

slice_ = array_ops.Slice()
select = array_ops.Select()
_tile = array_ops.Tile()


@functools.cache
def _concat(axis: int) -> array_ops.Concat:
    return array_ops.Concat(axis)


def concat(tensors, axis: int = 0):
    """Joins a tuple (or list) of Tensors along ``axis`` (MindSpore's ``ops.concat``)."""
    return _concat(axis)(tuple(tensors))


cat = concat


@functools.cache
def _stack(axis: int) -> array_ops.Stack:
    return array_ops.Stack(axis)


def stack(tensors, axis: int = 0):
    """Stacks a tuple (or list) of Tensors of one shape along a new dim ``axis`` (``ops.stack``)."""
    return _stack(axis)(tuple(tensors))


@functools.cache
def _unstack(axis: int) -> array_ops.Unstack:
    return array_ops.Unstack(axis)


def unstack(input_x, axis: int = 0):
    """The tensors of ``input_x`` along ``axis``, as a tuple (``ops.unstack``)."""
    out = _unstack(axis)(input_x)
    return out if isinstance(out, tuple) else (out,)


@functools.cache
def _split(axis: int, output_num: int) -> array_ops.Split:
    return array_ops.Split(axis, output_num)


@functools.cache
def _strided_slice(begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0):
    return array_ops.StridedSlice(begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask)


def split(tensor, split_size_or_sections=None, axis: int = 0, output_num=None):
    """Splits ``tensor`` along ``axis`` (MindSpore 2's ``ops.split``): an int is the size of each part
    (the last may be smaller); a tuple or list gives each part's size. Returns a tuple of Tensors. MindSpore
    1.x's form, ``split(x, axis=1, output_num=3)`` (``output_num`` equal parts, by keyword), is accepted too."""
    dim = tensor.shape[axis]
    if split_size_or_sections is None:  # MindSpore 1.x: output_num equal parts (one by default)
        parts = 1 if output_num is None else output_num
        if isinstance(parts, bool) or not isinstance(parts, int) or parts <= 0 or dim % parts:
            raise ValueError(
                f"For 'split', the 'output_num' must be a positive int dividing the dim {axis} of size {dim}, "
                f"but got {parts!r}."
            )
        split_size_or_sections = dim // parts
    elif output_num is not None:
        raise TypeError("For 'split', give 'split_size_or_sections' (MindSpore 2) or 'output_num' (1.x), not both.")
    if isinstance(split_size_or_sections, int) and not isinstance(split_size_or_sections, bool):
        size = split_size_or_sections
        if size <= 0:
            raise ValueError(f"For 'split', the 'split_size_or_sections' must be > 0, but got {size}.")
        if dim % size == 0:
            out = _split(axis, dim // size)(tensor)
            return out if isinstance(out, tuple) else (out,)
        sections = [size] * (dim // size) + [dim % size]
    elif isinstance(split_size_or_sections, (tuple, list)):
        sections = list(split_size_or_sections)
        if builtins.sum(sections) != dim or any(s < 0 for s in sections):
            raise ValueError(
                f"For 'split', the sections {sections} must be >= 0 and add up to the dim {axis} of size {dim}."
            )
    else:
        raise TypeError(
            f"For 'split', the 'split_size_or_sections' must be int, tuple or list, but got "
            f"{type(split_size_or_sections).__name__}."
        )
    ndim = len(tensor.shape)
    axis = axis % ndim
    parts, start = [], 0
    for s in sections:
        begin = [0] * ndim
        begin[axis] = start
        size = list(tensor.shape)
        size[axis] = s
        parts.append(slice_(tensor, tuple(begin), tuple(size)))
        start += s
    return tuple(parts)


def slice(input_x, begin, size):  # noqa: A001 (MindSpore's name)
    """``input_x[begin : begin + size]`` per dim (``ops.slice``; ``size`` -1: to the end)."""
    return slice_(input_x, tuple(begin), tuple(size))


def strided_slice(input_x, begin, end, strides, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                  shrink_axis_mask=0):  # fmt: skip
    """MindSpore's ``ops.strided_slice``."""
    prim = _strided_slice(begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask)
    return prim(input_x, tuple(begin), tuple(end), tuple(strides))


@functools.cache
def _reverse(axis: tuple) -> array_ops.ReverseV2:
    return array_ops.ReverseV2(axis)


def flip(input, dims):  # noqa: A002 (MindSpore's name)
    """Reverses ``input`` along ``dims`` (an int or a tuple of ints; ``ops.flip``)."""
    return _reverse((dims,) if isinstance(dims, int) else tuple(dims))(input)


def reverse(x, axis):
    """Reverses ``x`` along ``axis`` (MindSpore's ``ops.reverse``)."""
    return flip(x, axis)


def tile(input, multiples):  # noqa: A002 (MindSpore's name)
    """Repeats ``input`` ``multiples[d]`` times along each dim (``ops.tile``)."""
    return _tile(input, tuple(multiples))


def _index_spec(key, ndim):
    """A Tensor index of ints, slices, None and Ellipsis as StridedSlice's (begin, end, strides, masks)."""
    if not isinstance(key, tuple):
        key = (key,)
    begin, end, strides = [], [], []
    masks = {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0, "shrink_axis_mask": 0}
    for i, k in enumerate(key):
        bit = 1 << i
        if k is Ellipsis:
            masks["ellipsis_mask"] |= bit
            begin.append(0), end.append(0), strides.append(1)
        elif k is None:
            masks["new_axis_mask"] |= bit
            begin.append(0), end.append(0), strides.append(1)
        elif isinstance(k, bool) or not isinstance(k, (int, np.integer, builtins.slice)):
            raise TypeError(
                f"For 'Tensor.__getitem__', an index must be an int, a slice, None or Ellipsis, but got "
                f"{type(k).__name__}."
            )
        elif isinstance(k, (int, np.integer)):
            masks["shrink_axis_mask"] |= bit
            begin.append(int(k)), end.append(int(k) + 1), strides.append(1)
        else:
            step = 1 if k.step is None else int(k.step)
            if step == 0:
                raise ValueError("For 'Tensor.__getitem__', the slice step must not be 0.")
            if k.start is None:
                masks["begin_mask"] |= bit
            if k.stop is None:
                masks["end_mask"] |= bit
            begin.append(0 if k.start is None else int(k.start))
            end.append(0 if k.stop is None else int(k.stop))
            strides.append(step)
    return tuple(begin), tuple(end), tuple(strides), masks


_add_n = math_ops.AddN()


def addn(x):
    """The element-wise sum of a tuple (or list) of Tensors (MindSpore's ``ops.addn``)."""
    return _add_n(tuple(x))


@functools.cache
def _batch_matmul(transpose_a=False, transpose_b=False) -> math_ops.BatchMatMul:
    return math_ops.BatchMatMul(transpose_a, transpose_b)


def matmul(input, other):  # noqa: A002 (MindSpore's argument name)
    """Matrix product as ``np.matmul`` (MindSpore's ``ops.matmul``): 2-D inputs take the MatMul
    primitive, N-D ones BatchMatMul with the batch dims broadcast; a 1-D ``input`` is a row and a 1-D
    ``other`` a column, whose dim is removed from the result."""
    for name, value in (("input", input), ("other", other)):
        if not isinstance(getattr(value, "ndim", None), int) or isinstance(value, np.ndarray):
            raise TypeError(f"For 'matmul', the '{name}' must be a Tensor, but got {type(value).__name__}.")
        if value.ndim == 0:
            raise ValueError(f"For 'matmul', the '{name}' must have at least 1 dim, but got a scalar.")
    a = expand_dims(input, 0) if input.ndim == 1 else input
    b = expand_dims(other, 1) if other.ndim == 1 else other
    out = _matmul_2d(a, b) if a.ndim == 2 and b.ndim == 2 else _batch_matmul()(a, b)
    if other.ndim == 1:
        out = squeeze(out, -1)
    if input.ndim == 1:
        out = squeeze(out, -1 if other.ndim == 1 else -2)
    return out


def bmm(input_x, mat2):
    """Batched matrix product of ``input_x`` [..., M, K] and ``mat2`` [..., K, N] (``ops.bmm``)."""
    return _batch_matmul()(input_x, mat2)


def batch_matmul(x, y, transpose_a=False, transpose_b=False):
    """``BatchMatMul(transpose_a, transpose_b)(x, y)`` as a function."""
    return _batch_matmul(transpose_a, transpose_b)(x, y)


@functools.cache
def _range_prim(maxlen: int = 1000000) -> array_ops.Range:
    return array_ops.Range(maxlen)


def range(start, end=None, step=1):  # noqa: A001 (MindSpore's name)
    """``[start, start + step, ...)`` below ``end`` (``ops.range``; one argument: ``range(end)``)."""
    if end is None:
        start, end = 0, start
    return _range_prim()(start, end, step)


@functools.cache
def _top_k(sorted_: bool = True) -> array_ops.TopK:
    return array_ops.TopK(sorted_)


def topk(input, k, dim=None, largest=True, sorted=True):  # noqa: A002 (MindSpore's names)
    """The ``k`` largest (``largest=False``: smallest) entries along ``dim`` (default: the last), as
    ``(values, indices)`` (MindSpore's ``ops.topk``)."""
    ndim = len(input.shape)
    dim = ndim - 1 if dim is None else dim % ndim
    if not largest:
        values, indices = _sort(dim, False)(input)
        begin, size = [0] * ndim, list(input.shape)
        size[dim] = k
        return slice_(values, tuple(begin), tuple(size)), slice_(indices, tuple(begin), tuple(size))
    if dim == ndim - 1:
        return _top_k(sorted)(input, k)
    perm = tuple(d for d in builtins.range(ndim) if d != dim) + (dim,)
    inverse = tuple(perm.index(d) for d in builtins.range(ndim))
    values, indices = _top_k(sorted)(transpose(input, perm), k)
    return transpose(values, inverse), transpose(indices, inverse)


@functools.cache
def _sort(axis: int = -1, descending: bool = False) -> array_ops.Sort:
    return array_ops.Sort(axis, descending)


def sort(input_x, axis=-1, descending=False):
    """``(values, indices)`` of ``input_x`` sorted along ``axis`` (MindSpore's ``ops.sort``)."""
    return _sort(axis, descending)(input_x)


gather_ = array_ops.Gather()


def gather(input_params, input_indices, axis):
    """Slices of ``input_params`` along ``axis`` at ``input_indices`` (MindSpore's ``ops.gather``)."""
    return gather_(input_params, input_indices, axis)


_gather_nd = array_ops.GatherNd()


def gather_nd(input_x, indices):
    """``GatherNd()(input_x, indices)`` (MindSpore's ``ops.gather_nd``)."""
    return _gather_nd(input_x, indices)


_tensor_scatter_update = array_ops.TensorScatterUpdate()
_scatter_update = array_ops.ScatterUpdate()
_scatter_nd_update = array_ops.ScatterNdUpdate()


def tensor_scatter_update(input_x, indices, updates):
    """``TensorScatterUpdate()(input_x, indices, updates)`` (MindSpore's ``ops.tensor_scatter_update``)."""
    return _tensor_scatter_update(input_x, indices, updates)


def scatter_update(input_x, indices, updates):
    """``ScatterUpdate()(input_x, indices, updates)``, in place on the Parameter ``input_x``."""
    return _scatter_update(input_x, indices, updates)


def scatter_nd_update(input_x, indices, updates, use_locking=True):
    """``ScatterNdUpdate()(input_x, indices, updates)``, in place on the Parameter ``input_x`` (``use_locking``
    changes nothing: opforge does not race a write with another op)."""
    return _scatter_nd_update(input_x, indices, updates)


# The reducing scatters' functional forms, MindSpore's names: tensor_scatter_R(input_x, indices, updates) into
# a copy; scatter_R(input_x, indices, updates) and scatter_nd_R(..., use_locking=False) in place on the
# Parameter input_x (the writes are ordered whatever use_locking says).
_tensor_scatter_add = array_ops.TensorScatterAdd()
_tensor_scatter_sub = array_ops.TensorScatterSub()
_tensor_scatter_mul = array_ops.TensorScatterMul()
_tensor_scatter_div = array_ops.TensorScatterDiv()
_tensor_scatter_max = array_ops.TensorScatterMax()
_tensor_scatter_min = array_ops.TensorScatterMin()
_scatter_add = array_ops.ScatterAdd()
_scatter_mul = array_ops.ScatterMul()
_scatter_div = array_ops.ScatterDiv()
_scatter_max = array_ops.ScatterMax()
_scatter_min = array_ops.ScatterMin()
_scatter_nd_add = array_ops.ScatterNdAdd()
_scatter_nd_sub = array_ops.ScatterNdSub()
_scatter_nd_mul = array_ops.ScatterNdMul()
_scatter_nd_div = array_ops.ScatterNdDiv()
_scatter_nd_max = array_ops.ScatterNdMax()
_scatter_nd_min = array_ops.ScatterNdMin()


def tensor_scatter_add(input_x, indices, updates):
    """``TensorScatterAdd()(input_x, indices, updates)``."""
    return _tensor_scatter_add(input_x, indices, updates)


def tensor_scatter_sub(input_x, indices, updates):
    """``TensorScatterSub()(input_x, indices, updates)``."""
    return _tensor_scatter_sub(input_x, indices, updates)


def tensor_scatter_mul(input_x, indices, updates):
    """``TensorScatterMul()(input_x, indices, updates)``."""
    return _tensor_scatter_mul(input_x, indices, updates)


def tensor_scatter_div(input_x, indices, updates):
    """``TensorScatterDiv()(input_x, indices, updates)``."""
    return _tensor_scatter_div(input_x, indices, updates)


def tensor_scatter_max(input_x, indices, updates):
    """``TensorScatterMax()(input_x, indices, updates)``."""
    return _tensor_scatter_max(input_x, indices, updates)


def tensor_scatter_min(input_x, indices, updates):
    """``TensorScatterMin()(input_x, indices, updates)``."""
    return _tensor_scatter_min(input_x, indices, updates)


def scatter_add(input_x, indices, updates):
    """``ScatterAdd()(input_x, indices, updates)``, in place on the Parameter ``input_x``."""
    return _scatter_add(input_x, indices, updates)


def scatter_mul(input_x, indices, updates):
    """``ScatterMul()(input_x, indices, updates)``, in place on the Parameter ``input_x``."""
    return _scatter_mul(input_x, indices, updates)


def scatter_div(input_x, indices, updates):
    """``ScatterDiv()(input_x, indices, updates)``, in place on the Parameter ``input_x``."""
    return _scatter_div(input_x, indices, updates)


def scatter_max(input_x, indices, updates):
    """``ScatterMax()(input_x, indices, updates)``, in place on the Parameter ``input_x``."""
    return _scatter_max(input_x, indices, updates)


def scatter_min(input_x, indices, updates):
    """``ScatterMin()(input_x, indices, updates)``, in place on the Parameter ``input_x``."""
    return _scatter_min(input_x, indices, updates)


def scatter_nd_add(input_x, indices, updates, use_locking=False):
    """``ScatterNdAdd()(input_x, indices, updates)``, in place on the Parameter ``input_x``."""
    return _scatter_nd_add(input_x, indices, updates)


def scatter_nd_sub(input_x, indices, updates, use_locking=False):
    """``ScatterNdSub()(input_x, indices, updates)``, in place on the Parameter ``input_x``."""
    return _scatter_nd_sub(input_x, indices, updates)


def scatter_nd_mul(input_x, indices, updates, use_locking=False):
    """``ScatterNdMul()(input_x, indices, updates)``, in place on the Parameter ``input_x``."""
    return _scatter_nd_mul(input_x, indices, updates)


def scatter_nd_div(input_x, indices, updates, use_locking=False):
    """``ScatterNdDiv()(input_x, indices, updates)``, in place on the Parameter ``input_x``."""
    return _scatter_nd_div(input_x, indices, updates)


def scatter_nd_max(input_x, indices, updates, use_locking=False):
    """``ScatterNdMax()(input_x, indices, updates)``, in place on the Parameter ``input_x``."""
    return _scatter_nd_max(input_x, indices, updates)


def scatter_nd_min(input_x, indices, updates, use_locking=False):
    """``ScatterNdMin()(input_x, indices, updates)``, in place on the Parameter ``input_x``."""
    return _scatter_nd_min(input_x, indices, updates)


# Unary math and activations, MindSpore's functional names.
lgamma, digamma, erfinv = math_ext_ops.Lgamma(), math_ext_ops.Digamma(), math_ext_ops.Erfinv()
_polygamma = math_ext_ops.Polygamma()


def polygamma(n, input):  # noqa: A002 (MindSpore's argument name)
    """``Polygamma()(n, input)``: the n-th derivative of the digamma function (``n`` a 0-d int Tensor or an int)."""
    if isinstance(n, int) and not isinstance(n, bool):
        n = Tensor(np.int64(n), device=input.device if isinstance(input, Tensor) else None)
    return _polygamma(n, input)


sin = math_ops.Sin()
cos = math_ops.Cos()
log1p = math_ops.Log1p()
expm1 = math_ops.Expm1()
reciprocal = math_ops.Reciprocal()
rsqrt = math_ops.Rsqrt()


@functools.cache
def _softmax(axis: int, log: bool):
    return nn_ops.LogSoftmax(axis) if log else nn_ops.Softmax(axis)


def softmax(x, axis=-1):
    """:math:`e^{x_i} / \\sum_j e^{x_j}` along ``axis`` (MindSpore's ``ops.softmax``)."""
    return _softmax(axis, False)(x)


def log_softmax(logits, axis=-1):
    """``log(softmax(logits))`` along ``axis``, computed stably (MindSpore's ``ops.log_softmax``)."""
    return _softmax(axis, True)(logits)


@functools.cache
def _elu(alpha: float):
    return nn_ops.Elu(alpha)


def elu(input_x, alpha=1.0):
    """MindSpore's ``ops.elu``: x for x > 0, else ``alpha * (exp(x) - 1)``."""
    return _elu(float(alpha))(input_x)


class MirrorPad:
    """MindSpore's ``ops.MirrorPad(mode="REFLECT")``: ``MirrorPad(mode)(input_x, paddings)`` with ``paddings``
    an int Tensor (or nested sequence) of shape [ndim, 2], one (before, after) pair per dim. "REFLECT" leaves
    the edge out, "SYMMETRIC" repeats it. Not a kernel of its own: ``mirror_pad`` composes Slice, ReverseV2
    and Concat, so its gradient is theirs (MirrorPadGrad's sum of the mirrored parts onto the edge)."""

    def __init__(self, mode="REFLECT"):
        if not isinstance(mode, str) or mode.upper() not in ("REFLECT", "SYMMETRIC"):
            raise ValueError(f"For 'MirrorPad', the 'mode' must be 'REFLECT' or 'SYMMETRIC', but got {mode!r}.")
        self.mode = mode.upper()

    def __call__(self, input_x, paddings):
        pairs = np.asarray(paddings.asnumpy() if hasattr(paddings, "asnumpy") else paddings)
        if pairs.dtype.kind not in "iu" or pairs.shape != (input_x.ndim, 2) or (pairs < 0).any():
            raise ValueError(
                f"For 'MirrorPad', the 'paddings' must be non-negative ints of shape [{input_x.ndim}, 2] (one "
                f"(before, after) pair per dim of 'input_x'), but got {pairs.dtype} values of shape "
                f"{list(pairs.shape)}."
            )
        return mirror_pad(input_x, tuple((int(b), int(a)) for b, a in pairs), self.mode)

    def __repr__(self) -> str:
        return f"MirrorPad(mode={self.mode!r})"


@functools.lru_cache(maxsize=256)
def _pad(paddings: tuple) -> array_ops.Pad:
    return array_ops.Pad(paddings)


_PAD_MODES = ("constant", "reflect", "symmetric", "replicate")


def _edge(x, dim: int, begin: int, size: int, mode: str):
    """The ``size`` elements padded on one side of ``dim``: mirrored (reflect, symmetric) or the edge repeated."""
    shape = x.shape
    if mode == "replicate":
        part = slice(x, tuple(begin if d == dim else 0 for d in builtins.range(len(shape))),
                     tuple(1 if d == dim else s for d, s in enumerate(shape)))  # fmt: skip
        return tile(part, tuple(size if d == dim else 1 for d in builtins.range(len(shape))))
    part = slice(x, tuple(begin if d == dim else 0 for d in builtins.range(len(shape))),
                 tuple(size if d == dim else s for d, s in enumerate(shape)))  # fmt: skip
    return _reverse((dim,))(part)


def mirror_pad(x, paddings, mode: str = "reflect"):
    """``x`` padded by ``paddings`` (one (before, after) pair per dim) with its mirror image: "reflect"
    leaves the edge out (``np.pad``'s reflect), "symmetric" repeats it, "replicate" repeats the edge element;
    written with Slice, ReverseV2, Tile and Concat, so it is differentiable everywhere."""
    mode = mode.lower()
    for dim, (before, after) in enumerate(paddings):
        if not before and not after:
            continue
        n = x.shape[dim]
        limit = n - 1 if mode == "reflect" else n
        if before > limit or after > limit or (mode == "replicate" and n == 0):
            raise ValueError(
                f"For 'pad', mode '{mode}' pads dim {dim} of size {n} by at most {max(limit, 0)} on each side, but "
                f"got ({before}, {after})."
            )
        parts = []
        if before:
            start = 0 if mode == "replicate" else (1 if mode == "reflect" else 0)
            parts.append(_edge(x, dim, start, before, mode))
        parts.append(x)
        if after:
            start = n - 1 if mode == "replicate" else (n - 1 - after if mode == "reflect" else n - after)
            parts.append(_edge(x, dim, start, after, mode))
        x = concat(tuple(parts), dim)
    return x


def pad(input_x, padding, mode="constant", value=None):
    """MindSpore's ``ops.pad``: ``padding`` is a flat tuple of (before, after) pairs starting from the last dim
    (``(left, right, top, bottom, ...)``); ``mode`` "constant" (filled with ``value``, default 0; the Pad
    primitive), "reflect", "symmetric" or "replicate" (``mirror_pad``)."""
    padding = tuple(padding)
    if len(padding) % 2 or len(padding) // 2 > len(input_x.shape):
        raise ValueError(
            f"For 'pad', the 'padding' must hold (before, after) pairs for at most {len(input_x.shape)} dims, "
            f"but got {padding}."
        )
    if not all(isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in padding):
        raise ValueError(f"For 'pad', the 'padding' must be non-negative ints, but got {padding}.")
    if not isinstance(mode, str) or mode.lower() not in _PAD_MODES:
        raise ValueError(f"For 'pad', the 'mode' must be one of {list(_PAD_MODES)}, but got {mode!r}.")
    pairs = [(0, 0)] * len(input_x.shape)
    for k in builtins.range(len(padding) // 2):
        pairs[len(pairs) - 1 - k] = (padding[2 * k], padding[2 * k + 1])
    pairs = tuple(pairs)
    if mode.lower() != "constant":
        return mirror_pad(input_x, pairs, mode)
    out = _pad(pairs)(input_x)
    if value is None or value == 0:
        return out
    # a select, not out + (1 - inside) * value: an infinite or NaN value would make 0 * value NaN inside
    inside = _pad(pairs)(cast(ones_like(input_x), mstype.bool_))
    return select(inside, out, full(tuple(out.shape), value, dtype=out.dtype))


@functools.lru_cache(maxsize=256)
def _broadcast_to(shape: tuple) -> array_ops.BroadcastTo:
    return array_ops.BroadcastTo(shape)


def broadcast_to(input, shape):  # noqa: A002 (MindSpore's argument name)
    """MindSpore's ``ops.broadcast_to``: ``input`` broadcast to ``shape`` (NumPy's rules; a -1 keeps the
    dim of ``input`` there)."""
    return _broadcast_to(tuple(int(d) for d in shape))(input)


# ---------------------------------------------------------------------------------------------
# Elementwise math, third batch (math_ext_ops): MindSpore's functional names and aliases.
sinh = math_ext_ops.Sinh()
cosh = math_ext_ops.Cosh()
tan = math_ext_ops.Tan()
asin = arcsin = math_ext_ops.Asin()
acos = arccos = math_ext_ops.ACos()
atan = arctan = math_ext_ops.Atan()
asinh = arcsinh = math_ext_ops.Asinh()
acosh = arccosh = math_ext_ops.Acosh()
atanh = arctanh = math_ext_ops.Atanh()
erfc = math_ext_ops.Erfc()
rint = math_ext_ops.Rint()
trunc = math_ext_ops.Trunc()
inv = math_ext_ops.Inv()
invert = math_ext_ops.Invert()
bitwise_and = math_ext_ops.BitwiseAnd()
bitwise_or = math_ext_ops.BitwiseOr()
bitwise_xor = math_ext_ops.BitwiseXor()
xdivy = math_ext_ops.Xdivy()
xlogy = math_ext_ops.Xlogy()
logical_xor = math_ext_ops.LogicalXor()
_squared_difference = math_ext_ops.SquaredDifference()
_div_no_nan = math_ext_ops.DivNoNan()


# ---------------------------------------------------------------------------------------------
# Boolean masks and item assignment (Tensor.__getitem__ / __setitem__), through primitives so they
# are differentiable: the positions an index names are computed on the host from the index alone.


def _host_key(key):
    """``key`` with Tensors (boolean masks, integer indices) as NumPy arrays, for NumPy's indexing rules."""
    items = key if isinstance(key, tuple) else (key,)
    out = tuple(k.asnumpy() if isinstance(k, Tensor) else k for k in items)
    return out if isinstance(key, tuple) else out[0]


def _is_mask(key) -> bool:
    if isinstance(key, Tensor):
        return key.dtype is mstype.bool_
    return isinstance(key, np.ndarray) and key.dtype == np.bool_


def masked_getitem(tensor, mask):
    """``tensor[mask]`` for a boolean ``mask`` of the leading dims' shape: the selected elements (or rows),
    in order, as GatherNd of their coordinates."""
    m = mask.asnumpy() if isinstance(mask, Tensor) else np.asarray(mask)
    if m.shape != tuple(tensor.shape[: m.ndim]):
        raise IndexOutOfRangeError(
            f"For 'Tensor.__getitem__', a boolean mask must have the shape of the indexed dims "
            f"{list(tensor.shape[: m.ndim])}, but got {list(m.shape)}."
        )
    coords = Tensor(np.argwhere(m).astype(np.int64), device=tensor.device)
    return _gather_nd(tensor, coords)


def getitem(tensor, key):
    """``tensor[key]``: ints, slices, None and Ellipsis through StridedSlice; a boolean mask through GatherNd."""
    hashable = _hashable_index(key)
    call = _index_calls.get(hashable) if hashable is not None else None
    if call is None:
        if _is_mask(key):
            return masked_getitem(tensor, key)
        begin, end, strides, masks = _index_spec(key, tensor.ndim)
        call = (_strided_slice(**masks), begin, end, strides) if begin else None
        if hashable is not None and len(_index_calls) < 1024:  # (a loop indexes with a few keys, again and again)
            _index_calls[hashable] = call or ()
    if not call:
        return tensor
    prim, begin, end, strides = call
    return prim(tensor, begin, end, strides)


_index_calls: dict = {}  # a basic index (_hashable_index) -> (StridedSlice, begin, end, strides), or ()


def _hashable_index(key):
    """A basic index (ints, slices of ints, None, Ellipsis, or a tuple of them) as a hashable key (a
    slice is not hashable before Python 3.12), or None for anything else (masks, Tensors, arrays)."""
    if key.__class__ is int:
        return key
    parts = key if key.__class__ is tuple else (key,)
    out = []
    for k in parts:
        cls = k.__class__
        if cls is int or k is None or k is Ellipsis:
            out.append(k)
        elif cls is builtins.slice and all(v is None or v.__class__ is int for v in (k.start, k.stop, k.step)):
            out.append((k.start, k.stop, k.step))
        else:
            return None
    return (key.__class__ is tuple, tuple(out))


def _positions(shape: tuple, key) -> np.ndarray:
    """The flat positions of ``tensor[key]``'s elements, in its shape (NumPy's basic and mask indexing)."""
    index = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(shape)
    try:
        return np.asarray(index[_host_key(key)])
    except (IndexError, TypeError, ValueError) as e:
        raise type(e)(
            f"For 'Tensor.__setitem__', the index {key!r} does not index a tensor of shape {list(shape)}: {e}"
        ) from None


def setitem(tensor, key, value):
    """A copy of ``tensor`` with ``tensor[key]`` set to ``value`` (a Tensor or a number, broadcast to the
    indexed shape and cast to ``tensor``'s dtype): ``Select(covered, Gather(value, source), tensor)``,
    differentiable in ``tensor`` (where not overwritten) and in ``value``. A position named twice takes
    the last value, as NumPy."""
    shape = tuple(tensor.shape)
    pos = _positions(shape, key)
    if not isinstance(value, Tensor):
        value = Tensor(np.asarray(value, tensor.dtype.np_dtype), device=tensor.device)
    elif value.dtype is not tensor.dtype:
        value = cast(value, tensor.dtype)
    if pos.size == 0:
        return tensor
    if tuple(value.shape) != pos.shape:
        value = broadcast_to(value, pos.shape)
    source = np.zeros(int(np.prod(shape, dtype=np.int64)), np.int64)
    covered = np.zeros(source.shape, np.bool_)
    source[pos.ravel()] = np.arange(pos.size)
    covered[pos.ravel()] = True
    picked = gather_(reshape(value, (-1,)), Tensor(source.reshape(shape), device=tensor.device), 0)
    return select(Tensor(covered.reshape(shape), device=tensor.device), picked, tensor)


# ---------------------------------------------------------------------------------------------
# Constants and graph-mode helpers MindSpore users reach for first


def zeros(size, dtype=None):
    """A tensor of ``size`` (an int or a tuple) filled with 0, ``dtype`` default float32 (``ops.zeros``)."""
    return _filled("zeros", size, dtype, 0)


def ones(shape, dtype=None):
    """A tensor of ``shape`` (an int or a tuple) filled with 1, ``dtype`` default float32 (``ops.ones``)."""
    return _filled("ones", shape, dtype, 1)


def _filled(name: str, shape, dtype, value):
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"For '{name}', the shape must be an int or a tuple of ints, but got {type(shape).__name__}.")
    return fill(mstype.float32 if dtype is None else dtype, tuple(shape), value)


# ---------------------------------------------------------------------------------------------
# MindSpore 2.x's functional spellings of the reductions and shape functions (keyword names as there)


def _axes(axis):
    return () if axis is None else axis


def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001, A002 (MindSpore's names)
    """``ops.sum``: the sum over ``dim`` (an int, a tuple, or None for every dim), cast to ``dtype`` first."""
    if dtype is not None:
        input = cast(input, dtype)
    return reduce_sum_op(bool(keepdim))(input, _axes(dim))


def mean(input, axis=None, keep_dims=False):  # noqa: A002 (MindSpore's name)
    """``ops.mean``: the mean over ``axis`` (an int, a tuple, or None for every dim)."""
    return reduce_mean_op(bool(keep_dims))(input, _axes(axis))


def prod(input, axis=None, keep_dims=False):  # noqa: A002 (MindSpore's name)
    """``ops.prod``: the product over ``axis``."""
    return reduce_prod_op(bool(keep_dims))(input, _axes(axis))


def amax(input, axis=None, keepdims=False):  # noqa: A002 (MindSpore's name)
    """``ops.amax``: the maximum over ``axis``."""
    return reduce_max_op(bool(keepdims))(input, _axes(axis))


def amin(input, axis=None, keepdims=False):  # noqa: A002 (MindSpore's name)
    """``ops.amin``: the minimum over ``axis``."""
    return reduce_min_op(bool(keepdims))(input, _axes(axis))


def permute(input, axis):  # noqa: A002 (MindSpore's name)
    """``ops.permute``: the dims of ``input`` in the order ``axis`` (Transpose)."""
    return transpose(input, tuple(axis))


def unsqueeze(input, dim):  # noqa: A002 (MindSpore's name)
    """``ops.unsqueeze``: a new dim of size 1 at ``dim``."""
    return expand_dims(input, dim)


def flatten(input, order="C", *, start_dim=1, end_dim=-1):  # noqa: A002 (MindSpore's name)
    """``ops.flatten``: the dims from ``start_dim`` to ``end_dim`` merged into one (row-major only)."""
    if order != "C":
        raise ValueError(f"For 'flatten', only order 'C' is supported, but got {order!r}.")
    shape = tuple(input.shape)
    if not shape:
        return reshape(input, (1,))
    start, end = start_dim % len(shape), end_dim % len(shape)
    if start > end:
        raise ValueError(f"For 'flatten', 'start_dim' {start_dim} comes after 'end_dim' {end_dim}.")
    merged = int(np.prod(shape[start : end + 1], dtype=np.int64))
    return reshape(input, (*shape[:start], merged, *shape[end + 1 :]))


def where(condition, x, y):
    """``ops.where``: ``x`` where ``condition`` holds, else ``y`` (Select, with NumPy broadcasting of the three)."""
    shape = np.broadcast_shapes(*(tuple(t.shape) if isinstance(t, Tensor) else () for t in (condition, x, y)))
    x = x if isinstance(x, Tensor) else fill(y.dtype if isinstance(y, Tensor) else mstype.float32, shape, x)
    y = y if isinstance(y, Tensor) else fill(x.dtype, shape, y)
    return select(*(broadcast_to(t, shape) if tuple(t.shape) != shape else t for t in (condition, x, y)))


def masked_fill(input_x, mask, value):
    """``ops.masked_fill``: ``value`` where ``mask`` is True, else ``input_x``."""
    return where(
        mask, fill(input_x.dtype, tuple(input_x.shape), value) if not isinstance(value, Tensor) else value, input_x
    )


def full(size, fill_value, *, dtype=None):
    """``ops.full``: a tensor of ``size`` filled with ``fill_value`` (float32 unless ``dtype`` says)."""
    size = (int(size),) if isinstance(size, (int, np.integer)) else tuple(size)
    if dtype is None:
        dtype = mstype.bool_ if isinstance(fill_value, bool) else (
            mstype.int64 if isinstance(fill_value, int) else mstype.float32
        )  # fmt: skip
    return fill(dtype, size, fill_value)


def arange(start=0, end=None, step=1, *, dtype=None):
    """``ops.arange``: the values ``start, start + step, ...`` below ``end`` (Range)."""
    out = range(start, end, step)
    return out if dtype is None else cast(out, dtype)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):  # noqa: N803, A002 (MindSpore's names)
    """``ops.norm`` of vectors: the 2-norm (``ord`` None, 2 or "fro"), the 1-norm, or the largest (inf) or
    smallest (-inf) magnitude, over ``dim`` (an int or a tuple; every dim when None)."""
    if dtype is not None:
        A = cast(A, dtype)
    axes = () if dim is None else dim
    if ord in (None, 2, "fro"):
        return sqrt(reduce_sum_op(keepdim)(square(A), axes))
    if ord == 1:
        return reduce_sum_op(keepdim)(abs(A), axes)
    if ord in (float("inf"), float("-inf")):
        return (reduce_max_op if ord > 0 else reduce_min_op)(keepdim)(abs(A), axes)
    raise ValueError(f"For 'norm', the 'ord' must be None, 1, 2, 'fro', inf or -inf, but got {ord!r}.")


def clip_by_global_norm(x, clip_norm=1.0, use_norm=None):
    r"""MindSpore's ``ops.clip_by_global_norm``: the Tensors of ``x`` (a tuple or list, the gradients)
    scaled by :math:`clip\_norm / \max(global\_norm, clip\_norm)`, where global_norm is the 2-norm of
    them all together (``use_norm`` is accepted and unused, as in MindSpore)."""
    if not isinstance(x, (tuple, list)) or not x or not all(isinstance(t, Tensor) for t in x):
        raise TypeError(f"For 'clip_by_global_norm', the 'x' must be a non-empty tuple of Tensors, but got {x!r}.")
    if isinstance(clip_norm, bool) or not isinstance(clip_norm, (int, float)) or clip_norm <= 0:
        raise ValueError(
            f"For 'clip_by_global_norm', the 'clip_norm' must be a positive number, but got {clip_norm!r}."
        )
    squares = [cast(reduce_sum_op(False)(square(t), ()), mstype.float32) for t in x]
    global_norm = sqrt(_add_n(tuple(squares)) if len(squares) > 1 else squares[0])
    scale = float(clip_norm) / maximum(global_norm, float(clip_norm))
    return tuple(mul(t, cast(scale, t.dtype)) for t in x)


partial = functools.partial  # MindSpore's F.partial (a function with its first arguments bound)


def dtype(x):
    """MindSpore's ``F.dtype``: the dtype of a Tensor."""
    if not isinstance(x, Tensor):
        raise TypeError(f"For 'dtype', the input must be a Tensor, but got {type(x).__name__}.")
    return x.dtype


def tuple_to_array(x):
    """MindSpore's ``F.tuple_to_array``: a tuple of numbers as a 1-D Tensor (float32 if any is a float, else
    int64). A ``range`` is taken as the tuple of its values, as MindSpore's primitive takes it."""
    if isinstance(x, builtins.range):
        x = tuple(x)
    if not isinstance(x, tuple) or not x or not all(isinstance(v, (int, float)) for v in x):
        raise TypeError(f"For 'tuple_to_array', the input must be a non-empty tuple of numbers, but got {x!r}.")
    return Tensor(np.array(x, np.float32 if any(isinstance(v, float) for v in x) else np.int64))


def _einsum_terms(equation: str, n: int) -> tuple:
    """(input subscripts, output subscripts) of an einsum equation for n operands, checked."""
    equation = equation.replace(" ", "")
    if "." in equation:
        raise ValueError(f"For 'einsum', '...' is not supported, but the equation is {equation!r}.")
    inputs, arrow, output = equation.partition("->")
    terms = inputs.split(",")
    if not arrow:  # the implicit output: the subscripts seen once, sorted
        letters = "".join(terms)
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if len(terms) != n or not all(t.isalpha() for t in terms) or (output and not output.isalpha()):
        raise ValueError(f"For 'einsum', the equation {equation!r} does not name the subscripts of {n} operand(s).")
    for t in (*terms, output):
        if len(set(t)) != len(t):
            raise ValueError(f"For 'einsum', a subscript repeats within one term of {equation!r} (no diagonals).")
    if set(output) - set("".join(terms)):
        raise ValueError(f"For 'einsum', the output of {equation!r} names a subscript no operand has.")
    return terms, output


def _einsum_pair(a, ta: str, b, tb: str, keep: str) -> tuple:
    """``a`` (subscripts ``ta``) times ``b`` (``tb``), summed over the shared subscripts not in ``keep``:
    one BatchMatMul of (batch, left, sum) by (batch, sum, right); returns (result, its subscripts)."""
    sizes_a, sizes_b = dict(zip(ta, a.shape)), dict(zip(tb, b.shape))
    for c in set(ta) & set(tb):
        if sizes_a[c] != sizes_b[c]:
            raise ValueError(
                f"For 'einsum', the subscript {c!r} has size {sizes_a[c]} in one operand, {sizes_b[c]} in another."
            )
    size = sizes_a | sizes_b
    batch = [c for c in ta if c in tb and c in keep]
    summed = [c for c in ta if c in tb and c not in keep]
    left, right = [c for c in ta if c not in tb], [c for c in tb if c not in ta]

    def as_3d(x, term, first, middle, last):
        order = tuple(term.index(c) for c in first + middle + last)
        return reshape(transpose(x, order), tuple(math.prod(size[c] for c in g) for g in (first, middle, last)))

    out = _batch_matmul()(as_3d(a, ta, batch, left, summed), as_3d(b, tb, batch, summed, right))
    term = "".join(batch + left + right)
    return reshape(out, tuple(size[c] for c in term)), term


def einsum(equation, *operands):
    """MindSpore's ``ops.einsum``: the Einstein summation of ``equation`` ("bij,bjk->bik") over the
    operands, as NumPy's, through Transpose, ReduceSum, Reshape and BatchMatMul (left to right, a pair at
    a time). No ``...`` and no repeated subscript within one term (diagonals)."""
    if len(operands) == 1 and isinstance(operands[0], (tuple, list)):
        operands = tuple(operands[0])
    if not isinstance(equation, str) or not operands or not all(isinstance(t, Tensor) for t in operands):
        raise TypeError("For 'einsum', the arguments must be an equation (str) and Tensors.")
    terms, output = _einsum_terms(equation, len(operands))
    for t, x in zip(terms, operands):
        if len(t) != x.ndim:
            raise ValueError(f"For 'einsum', the term {t!r} names {len(t)} dims of a {x.ndim}-D operand.")
    acc, term = operands[0], terms[0]
    for k in range(1, len(operands)):
        later = output + "".join(terms[k + 1 :])
        acc, term = _sum_unused(acc, term, later + terms[k])
        nxt, nterm = _sum_unused(operands[k], terms[k], later + term)
        acc, term = _einsum_pair(acc, term, nxt, nterm, later)
    acc, term = _sum_unused(acc, term, output)
    return transpose(acc, tuple(term.index(c) for c in output)) if term != output else acc


def _sum_unused(x, term: str, used: str) -> tuple:
    """``x`` summed over the subscripts no one else reads."""
    drop = tuple(i for i, c in enumerate(term) if c not in used)
    if not drop:
        return x, term
    return reduce_sum_op(False)(x, drop), "".join(c for c in term if c in used)


def meshgrid(*inputs, indexing="xy"):
    """MindSpore's ``ops.meshgrid``: from N 1-D Tensors, N Tensors of the grid's shape, the i-th holding
    input i along its dim ("ij"), the first two dims swapped with "xy" (as ``np.meshgrid``)."""
    if len(inputs) == 1 and isinstance(inputs[0], (tuple, list)):
        inputs = tuple(inputs[0])
    if indexing not in ("xy", "ij"):
        raise ValueError(f"For 'meshgrid', the 'indexing' must be 'xy' or 'ij', but got {indexing!r}.")
    if len(inputs) < 2 or not all(isinstance(t, Tensor) and t.ndim == 1 for t in inputs):
        raise TypeError(f"For 'meshgrid', the inputs must be at least two 1-D Tensors, but got {inputs!r}.")
    n = len(inputs)
    dims = list(range(n))
    if indexing == "xy":
        dims[0], dims[1] = 1, 0  # input 0 varies along dim 1, input 1 along dim 0
    shape = [0] * n
    for i, t in enumerate(inputs):
        shape[dims[i]] = t.shape[0]
    grids = []
    for i, t in enumerate(inputs):
        view = [1] * n
        view[dims[i]] = t.shape[0]
        grids.append(broadcast_to(reshape(t, tuple(view)), tuple(shape)))
    return tuple(grids)


def linspace(start, end, steps):
    """``ops.linspace``: ``steps`` evenly spaced float32 values from ``start`` to ``end``, both included
    (Python numbers or one-element Tensors, read as constants)."""
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
        raise ValueError(f"For 'linspace', the 'steps' must be a positive int, but got {steps!r}.")
    bounds = [float(v.asnumpy().reshape(())) if isinstance(v, Tensor) else float(v) for v in (start, end)]
    return Tensor(np.linspace(bounds[0], bounds[1], int(steps)).astype(np.float32))


_one_hot = array_ops.OneHot


@functools.lru_cache(maxsize=16)
def _one_hot_prim(axis: int):
    return _one_hot(axis)


def one_hot(indices, depth, on_value, off_value, axis=-1):
    """``ops.one_hot``: ``on_value`` at each index along a new dim of ``depth`` at ``axis``, ``off_value`` elsewhere."""
    return _one_hot_prim(int(axis))(indices, depth, on_value, off_value)


# ---------------------------------------------------------------------------------------------
# Fused attention (ScaledDotProductAttention, FlashAttention-style kernels).
_attention_calls = itertools.count()  # Seed1 of each call with dropout: a new mask every call


@functools.cache
def _attention(scale: float, is_causal: bool):
    """The attention primitive without dropout (its seeds unused)."""
    return attention_ops.ScaledDotProductAttention(scale, 1.0, is_causal, 0, 0)


def _additive_mask(attn_mask, dtype):
    """``attn_mask`` as a 4-D additive mask of ``dtype``: None gives a (1, 1, 1, 1) zero (no Lq*Lk buffer);
    a bool mask gives 0 where True (the score takes part) and -inf where False."""
    if attn_mask is None:
        return fill(dtype, (1, 1, 1, 1), 0.0)
    if attn_mask.dtype == mstype.bool_:
        shape = tuple(attn_mask.shape)
        attn_mask = select(attn_mask, fill(dtype, shape, 0.0), fill(dtype, shape, float("-inf")))
    elif attn_mask.dtype != dtype:
        attn_mask = cast(attn_mask, dtype)
    if attn_mask.ndim > 4:
        raise ValueError(
            f"For 'scaled_dot_product_attention', the 'attn_mask' must have at most 4 dims, "
            f"but got shape {list(attn_mask.shape)}."
        )
    return reshape(attn_mask, (1,) * (4 - attn_mask.ndim) + tuple(attn_mask.shape))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, seed=0):
    r"""Fused attention, :math:`softmax(Q K^T \cdot scale + mask) V` with dropout on the probabilities, by the
    ``ScaledDotProductAttention`` primitive (no (Lq, Lk) buffer; the backward recomputes the scores).

    ``query`` (B, H, Lq, D), ``key`` (B, H, Lk, D), ``value`` (B, H, Lk, Dv); ``attn_mask`` None, a bool mask
    (True: the score takes part) or an additive float mask, broadcastable to (B, H, Lq, Lk); ``dropout_p`` the
    probability of dropping a probability (the mask is Dropout's generator with Seed0 = ``seed`` and Seed1 =
    a per-process call counter, so each call draws a new one); ``is_causal`` hides key j > query i; ``scale``
    defaults to :math:`1/\sqrt{D}`. Returns (B, H, Lq, Dv)."""
    if scale is None:
        scale = 1.0 / float(np.sqrt(query.shape[-1]))
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"For 'scaled_dot_product_attention', the 'dropout_p' must be in [0, 1), but got {dropout_p}.")
    if dropout_p > 0.0:
        if tracing():
            raise TraceError(
                "For 'scaled_dot_product_attention', dropout draws a new mask per call from a Python counter, "
                "which a replay of a trace (jit, GRAPH_MODE) would not move on: use nn.MultiheadAttention "
                "(its dropout is replayed with a new mask each step), or dropout_p=0.0 inside the jitted function."
            )
        seed1 = next(_attention_calls)  # a new primitive per call (not cached: its seeds never repeat)
        prim = attention_ops.ScaledDotProductAttention(
            float(scale), 1.0 - float(dropout_p), bool(is_causal), int(seed), seed1
        )
    else:
        prim = _attention(float(scale), bool(is_causal))
    return prim(query, key, value, _additive_mask(attn_mask, query.dtype))[0]


def tuple_len(data) -> int:
    """The number of items of a tuple or list (MindSpore's ``F.tuple_len``, a graph-time constant)."""
    if not isinstance(data, (tuple, list)):
        raise TypeError(f"For 'tuple_len', the 'data' must be a tuple or list, but got {type(data).__name__}.")
    return len(data)


def make_range(start, limit=None, delta=1) -> tuple:
    """``tuple(range(start, limit, delta))`` of ints; ``make_range(limit)`` counts from 0 (MindSpore's
    ``F.make_range``, which losses use for "every axis": ``make_range(0, len(shape))``)."""
    if limit is None:
        start, limit = 0, start
    for name, value in (("start", start), ("limit", limit), ("delta", delta)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"For 'make_range', the '{name}' must be an int, but got {type(value).__name__}.")
    if delta == 0:
        raise ValueError("For 'make_range', the 'delta' must not be 0.")
    return tuple(builtins.range(int(start), int(limit), int(delta)))


def rank(input_x) -> int:
    """The number of dimensions of ``input_x``, a Python int (MindSpore's ``ops.rank`` / ``F.rank``)."""
    if not isinstance(input_x, Tensor):
        raise TypeError(f"For 'rank', the 'input_x' must be a Tensor, but got {type(input_x).__name__}.")
    return input_x.ndim


def stop_gradient(x):
    """``x``'s value as a new tensor no gradient flows through (tuples and lists: each element)."""
    if isinstance(x, (tuple, list)):
        return type(x)(stop_gradient(v) for v in x)
    if not isinstance(x, Tensor):
        raise TypeError(f"For 'stop_gradient', the input must be a Tensor, but got {type(x).__name__}.")
    if not hasattr(x, "_data"):  # a placeholder (abstract evaluation)
        return Tensor._placeholder(*x._meta)
    note_gradient_cut()  # a trace recording now is not replayed under a tape (opforge/jit.py)
    return Tensor._from_array(x._data, *x._meta[::2])


def size(input_x) -> int:
    """The number of elements of ``input_x``, a Python int (MindSpore's ``ops.size`` / ``F.size``)."""
    if not isinstance(input_x, Tensor):
        raise TypeError(f"For 'size', the 'input_x' must be a Tensor, but got {type(input_x).__name__}.")
    return int(math.prod(input_x.shape))


# MindSpore's ``F`` also holds these (assigned here, at the end: the functions above use ``shape`` as a name).
depend, print_, dyn_shape = _frontend_shape.depend, _frontend_shape.print_, _frontend_shape.dyn_shape
shape = _frontend_shape.shape
assign_add = _parameter_func.assign_add  # Add and Assign (MindSpore's F.assign_add)
identity = _parameter_func.identity()  # its argument itself (MindSpore's F.identity, P.identity())
# MindSpore's F names of the arithmetic and comparison primitive instances (``F.tensor_mul(x, y)``).
tensor_add, tensor_sub, tensor_mul, tensor_div = add, sub, mul, div
tensor_floordiv, tensor_mod, tensor_pow = floor_div, floor_mod, pow
tensor_gt, tensor_ge, tensor_lt, tensor_le = greater, greater_equal, less, less_equal
absolute = abs  # MindSpore's ops.absolute


def scalar_to_tensor(input_x, dtype=mstype.float32):
    """MindSpore's ``ops.scalar_to_tensor`` / ``F.scalar_to_tensor``: a Python number (int, float or bool) as a
    0-D tensor of ``dtype`` (float32 by default)."""
    if not isinstance(input_x, (int, float, bool, np.number)):
        raise TypeError(
            f"For 'scalar_to_tensor', the 'input_x' must be an int, float or bool, but got {type(input_x).__name__}."
        )
    dtype = mstype.to_dtype(dtype)
    return Tensor(np.asarray(input_x, dtype=dtype.np_dtype), dtype=dtype)


def mixed_precision_cast(dst_type, input_x):
    """MindSpore's ``F.mixed_precision_cast``: ``input_x`` with each floating-point Tensor in it cast to
    ``dst_type`` (float16 or float32), through nested tuples, lists and dicts; other values unchanged."""
    dst_type = mstype.to_dtype(dst_type)
    if isinstance(input_x, Tensor):
        return cast(input_x, dst_type) if input_x.dtype in mstype.float_type else input_x
    if isinstance(input_x, (tuple, list)):
        return type(input_x)(mixed_precision_cast(dst_type, v) for v in input_x)
    if isinstance(input_x, dict):
        return {k: mixed_precision_cast(dst_type, v) for k, v in input_x.items()}
    return input_x


# The functional API: every public function and primitive instance above (``from opforge.ops import *``
# and ``opforge.ops.<name>`` expose these), not the modules they are built from.
__all__ = sorted(
    name
    for name, value in dict(globals()).items()
    if not name.startswith("_") and not isinstance(value, types.ModuleType) and name != "annotations"
)
