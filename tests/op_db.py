"""The operator sweep database: one ``OpRecord`` per operator (like PyTorch's OpInfo).

``tests/test_op_sweep.py`` takes every (op, backend, KernelAttr) from the kernel registry and
looks its op up here. A record says how to build the primitive (one or more attr variants), which
sample inputs to call it with for a kernel's input/output dtypes, the NumPy reference, the
tolerances, and which bad inputs must raise which exception.

Conventions
-----------
* Sample ``args`` are passed to the primitive in order: an ``np.ndarray`` becomes a ``Tensor``
  (a ``Parameter`` at the record's ``params`` positions), anything else is a constant input
  (``axis``, ``shape``, ``dtype``) passed as it is. ``kwargs`` are passed by keyword.
* ``ref(prim, *args, **kwargs)`` sees float arrays (bfloat16 included) as float64 and every other
  array in its own dtype, so integer references wrap exactly like the kernel's dtype; its result is
  rounded to the kernel's output dtype before comparing.
* Values are compared with ``|actual - expected| <= atol + rtol * |expected| + mag_rtol * magnitude``
  per output dtype (``magnitude`` is the sum of the absolute terms, for reductions and MatMul);
  NaN and infinities must match exactly; integers and bools (and ``exact`` records) must be equal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from opforge import Parameter, Tensor, ops
from opforge import dtype as mstype
from opforge.errors import KernelNotFoundError
from opforge.testing import (  # noqa: F401 - the sweeps' helpers, re-exported to the op_db modules
    DEFAULT_MAG_TOLS,
    DEFAULT_TOLS,
    ErrorInput,
    Sample,
    make_array,
    shapes_desc,
    upcast,
)

# A shape with more elements than two parallel grains (2 x 32768), so ParallelFor really splits
# the work across threads (it only does when n // kParallelGrain >= 2).
LARGE = (280, 256)
LARGE_N = math.prod(LARGE)

# ---------------------------------------------------------------------------------------------
# Record types


@dataclass
class Arg:
    """How to fill one tensor input: uniform in [low, high) for floats, integers in
    [max(low, -9), min(high, 9)] (clipped to the dtype), or ``make(shape, dtype, rng)``."""

    low: float = -3.0
    high: float = 3.0
    nonzero: bool = False
    make: Optional[Callable] = None


@dataclass
class OpRecord:
    name: str
    variants: dict  # variant name -> zero-argument primitive factory
    sample_inputs: Callable  # (record, prim, in_dtypes, out_dtypes, rng) -> iterable of Sample
    ref: Callable  # (prim, *args, **kwargs) -> array
    args: tuple = (Arg(),)  # one per tensor input
    kind: str = "other"  # "unary" | "binary" (broadcasting) | "same_shape" | "other"
    tols: dict = field(default_factory=dict)  # dtype name -> (rtol, atol), overriding DEFAULT_TOLS
    magnitude: Optional[Callable] = None  # (prim, *args, **kwargs) -> array of sum |terms|
    mag_tols: dict = field(default_factory=dict)
    exact: bool = False  # outputs must be equal (copies, casts)
    params: tuple = ()  # arg positions passed as Parameter (written in place)
    error_inputs: Callable = lambda: []  # () -> list of ErrorInput
    views: bool = True  # False: each input holds one element (a generator's seed), so no view of it is strided

    @property
    def nin(self) -> int:
        return len(self.args)

    @property
    def elementwise(self) -> bool:
        return self.kind in ("unary", "binary", "same_shape")

    def tol(self, dtype) -> tuple:
        return self.tols.get(dtype.name, DEFAULT_TOLS.get(dtype.name, (0.0, 0.0)))

    def mag_tol(self, dtype) -> float:
        return self.mag_tols.get(dtype.name, DEFAULT_MAG_TOLS.get(dtype.name, 0.0))

    def make_arg(self, i: int, shape, dtype, rng) -> np.ndarray:
        spec = self.args[i]
        if spec.make is not None:
            return np.asarray(spec.make(tuple(shape), dtype, rng)).astype(dtype.np_dtype)
        return make_array(shape, dtype, rng, spec.low, spec.high, spec.nonzero)


# ---------------------------------------------------------------------------------------------
# Array helpers


def _t(shape, dtype=mstype.float32, value=1):
    return Tensor(np.full(shape, value, dtype.np_dtype))


def _p(shape, dtype=mstype.float32, value=1):
    return Parameter(np.full(shape, value, dtype.np_dtype), name="w")


# ---------------------------------------------------------------------------------------------
# Generic sample generators

UNARY_SHAPES = [(), (0,), (3, 0, 2), (7,), (4, 5), (2, 3, 4), (1, 1, 1, 3), LARGE]

BROADCAST_SHAPES = [
    ((), ()),
    ((4, 5), (4, 5)),
    ((4, 5), ()),
    ((), (3,)),
    ((2, 3, 4), (4,)),
    ((4,), (2, 3, 4)),
    ((2, 1, 4), (3, 1)),
    ((5, 1), (1, 6)),
    ((2, 1, 3, 1), (1, 4, 1, 2)),
    ((0, 3), (3,)),
    ((1, 0), (2, 1)),
    (LARGE, (LARGE[-1],)),
    ((LARGE[0], 1), LARGE),
    (LARGE, LARGE),
]


# Complex edge values (finite): signed zeros, the axes, the unit circle, tiny and large parts.
COMPLEX_EDGES = [
    *(0j, complex(-0.0, 0.0), complex(0.0, -0.0), complex(-0.0, -0.0), 1 + 0j, -1 + 0j, 1j, -1j),
    *(0.5 + 2j, -2.5 - 0.75j, -3 + 1e-3j, -3 - 1e-3j, 0.6 + 0.8j, 1e-20 + 1e-20j, 1e-3 - 4j, 2.5 + 0j),
    *(-0.8 - 0.6j, 1.25 + 1.25j, 3 - 3j, -1e-7 + 1j),
]


def complex_edges(dtype, low=None, high=None) -> np.ndarray:
    """``COMPLEX_EDGES`` (those with both parts in [low, high] when given) as ``dtype``."""
    vals = [v for v in COMPLEX_EDGES if low is None or (low <= v.real <= high and low <= v.imag <= high)]
    return np.array(vals, np.complex128).astype(dtype.np_dtype)


def unary_samples(record, prim, ins, outs, rng):
    for shape in UNARY_SHAPES:
        x = record.make_arg(0, shape, ins[0], rng)
        yield Sample((x,), desc=f"x{list(shape)}")
    if ins[0].kind == "c":
        yield Sample((complex_edges(ins[0]),), desc="complex edge values")


def same_shape_samples(record, prim, ins, outs, rng):
    for shape in UNARY_SHAPES:
        args = tuple(record.make_arg(i, shape, ins[i], rng) for i in range(record.nin))
        yield Sample(args, desc=f"{list(shape)}")


def _wrap_values(dtype) -> tuple:
    """Integer operands whose +, -, * overflow: the kernels wrap modulo 2**bits like NumPy."""
    info = np.iinfo(dtype.np_dtype)
    hi, lo = int(info.max), int(info.min)
    x = [hi, lo, hi, lo, hi // 2 + 1, hi, 3]
    y = [1, 1, hi, hi, 2, 2, hi]
    if lo < 0:
        x += [lo, -1]
        y += [-1, lo]
    return np.array(x).astype(dtype.np_dtype), np.array(y).astype(dtype.np_dtype)


def binary_samples(record, prim, ins, outs, rng):
    for xs, ys in BROADCAST_SHAPES:
        x = record.make_arg(0, xs, ins[0], rng)
        y = record.make_arg(1, ys, ins[1], rng)
        yield Sample((x, y), desc=f"x{list(xs)} y{list(ys)}")
    # A Python scalar is weak: it takes the tensor's dtype, so the same kernel runs.
    scalar = 2 if ins[0].kind in "iu" else 0.5
    yield Sample((record.make_arg(0, (3, 4), ins[0], rng), scalar), desc=f"x[3, 4] y=Python {scalar!r}")
    yield Sample((scalar, record.make_arg(1, (5,), ins[1], rng)), desc=f"x=Python {scalar!r} y[5]")
    if ins[0].kind in "iu" and record.name in ("Add", "Sub", "Mul"):
        yield Sample(_wrap_values(ins[0]), desc="integer overflow wraps")
    if ins[0].kind == "c":
        c = 1.5 - 2j  # a Python complex is weak: it takes the tensor's complex dtype
        yield Sample((record.make_arg(0, (3, 4), ins[0], rng), c), desc=f"x[3, 4] y=Python {c!r}")
        edges = complex_edges(ins[0])
        ys = edges[::-1] if record.name not in ("RealDiv", "Div") else np.where(edges[::-1] == 0, 1 + 1j, edges[::-1])
        yield Sample((edges, ys.astype(ins[1].np_dtype)), desc="complex edge values")


# ---------------------------------------------------------------------------------------------
# Error-input helpers


def _elementwise_float_errors(prim_factory, nin, int_msg="must be a Tensor of dtype"):
    def errors():
        args_i32 = [_t((2, 3), mstype.int32)] * nin
        out = [ErrorInput("int32-input", lambda: prim_factory()(*args_i32), TypeError, int_msg)]
        out.append(ErrorInput("bool-input", lambda: prim_factory()(*([_t((2,), mstype.bool_)] * nin)), TypeError))
        out.append(
            ErrorInput("numpy-array-input", lambda: prim_factory()(*([np.ones(3, np.float32)] * nin)), TypeError)
        )
        out.append(ErrorInput("wrong-arg-count", lambda: prim_factory()(*([_t((2,))] * (nin + 1))), TypeError))
        return out

    return errors


def _grad_errors(prim_factory):
    def errors():
        return [
            ErrorInput("shape-mismatch", lambda: prim_factory()(_t((2, 3)), _t((3, 2))), ValueError, "same shape"),
            ErrorInput(
                "int32-inputs", lambda: prim_factory()(_t((2,), mstype.int32), _t((2,), mstype.int32)), TypeError
            ),
            ErrorInput(
                "dtype-mismatch",
                lambda: prim_factory()(_t((2,), mstype.float32), _t((2,), mstype.float16)),
                TypeError,
                "same dtype",
            ),
            ErrorInput("wrong-arg-count", lambda: prim_factory()(_t((2,))), TypeError),
        ]

    return errors


# ---------------------------------------------------------------------------------------------
# Activations and unary math


def _relu_ref(prim, x):
    # y = max(x, 0): NaN propagates, as in NumPy, PyTorch and IEEE maxNum-with-NaN semantics.
    return np.maximum(x, np.zeros((), x.dtype))


def _elu_ref(prim, x):
    return np.where(x > 0, x, prim.alpha * np.expm1(np.minimum(x, 0.0)))


def _sigmoid_ref(prim, x):
    return 1.0 / (1.0 + np.exp(-x))


def _relu_errors():
    return [
        ErrorInput("bool-input", lambda: ops.ReLU()(_t((2,), mstype.bool_)), TypeError, "input_x"),
        ErrorInput("complex-input-no-kernel", lambda: ops.ReLU()(_t((2,), mstype.complex64)), KernelNotFoundError),
        ErrorInput("python-list", lambda: ops.ReLU()([1.0, 2.0]), TypeError),
        ErrorInput("wrong-arg-count", lambda: ops.ReLU()(_t((2,)), _t((2,))), TypeError),
    ]


def _elu_errors():
    return _elementwise_float_errors(ops.Elu, 1)() + [
        ErrorInput("alpha-int", lambda: ops.Elu(alpha=1), TypeError, "alpha"),
        ErrorInput("alpha-str", lambda: ops.Elu(alpha="1.0"), TypeError, "alpha"),
    ]


def _neg_errors():
    return [
        ErrorInput("bool-input", lambda: ops.Neg()(_t((2,), mstype.bool_)), TypeError, "x"),
        ErrorInput("uint64-input-no-lossless-kernel", lambda: ops.Neg()(_t((2,), mstype.uint64)), KernelNotFoundError),
        ErrorInput("wrong-arg-count", lambda: ops.Neg()(), TypeError),
    ]


def _grad_y_from(forward):
    """Arg maker for a grad op's ``y`` input: the forward op's output on random x."""

    def make(shape, dtype, rng):
        return forward(rng.uniform(-3.0, 3.0, size=shape))

    return make


# ---------------------------------------------------------------------------------------------
# Binary arithmetic


def _binary_errors(prim_cls, valid_kinds):
    def errors():
        out = [
            ErrorInput(
                "shapes-do-not-broadcast", lambda: prim_cls()(_t((2, 3)), _t((4,))), ValueError, "cannot broadcast"
            ),
            ErrorInput(
                "shapes-do-not-broadcast-3d", lambda: prim_cls()(_t((2, 3, 4)), _t((3, 1, 3))), ValueError, "broadcast"
            ),
            ErrorInput("string-operand", lambda: prim_cls()(_t((2,)), "a"), TypeError, "must be a Tensor or a number"),
            ErrorInput("too-many-args", lambda: prim_cls()(_t((2,)), _t((2,)), _t((2,))), TypeError),
            ErrorInput("wrong-arg-count", lambda: prim_cls()(_t((2,))), TypeError, "missing"),
        ]
        if "c" not in valid_kinds:
            out.append(
                ErrorInput(
                    "complex-no-kernel",
                    lambda: prim_cls()(_t((2,), mstype.complex64), _t((2,), mstype.complex64)),
                    TypeError,
                )
            )
        if "b" not in valid_kinds:
            out.append(
                ErrorInput("bool-inputs", lambda: prim_cls()(_t((2,), mstype.bool_), _t((2,), mstype.bool_)), TypeError)
            )
        if "i" not in valid_kinds:
            out.append(
                ErrorInput(
                    "int32-inputs", lambda: prim_cls()(_t((2,), mstype.int32), _t((2,), mstype.int32)), TypeError
                )
            )
        return out

    return errors


def _div_ref(prim, x, y):
    return x / y


# ---------------------------------------------------------------------------------------------
# MatMul


MATMUL_MKN = [(1, 1, 1), (3, 4, 5), (2, 7, 3), (5, 1, 4), (0, 4, 3), (3, 0, 2), (4, 3, 0), (256, 24, 280)]


def _matmul_samples(record, prim, ins, outs, rng):
    ta, tb = prim.transpose_a, prim.transpose_b
    for m, k, n in MATMUL_MKN:
        a_shape = (k, m) if ta else (m, k)
        b_shape = (n, k) if tb else (k, n)
        a = make_array(a_shape, ins[0], rng, -2, 2)
        b = make_array(b_shape, ins[1], rng, -2, 2)
        yield Sample((a, b), desc=f"m={m} k={k} n={n}")


def _mm_operands(prim, a, b):
    return (a.T if prim.transpose_a else a), (b.T if prim.transpose_b else b)


def _matmul_ref(prim, a, b):
    a, b = _mm_operands(prim, a, b)
    return a @ b


def _matmul_mag(prim, a, b):
    a, b = _mm_operands(prim, a, b)
    return np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))


def _matmul_errors():
    f = ops.MatMul
    return [
        ErrorInput("1d-input", lambda: f()(_t((3,)), _t((3, 2))), ValueError, "2-D"),
        ErrorInput("3d-input", lambda: f()(_t((2, 3, 4)), _t((4, 2))), ValueError, "2-D"),
        ErrorInput("inner-mismatch", lambda: f()(_t((2, 3)), _t((4, 2))), ValueError, "inner dimensions"),
        ErrorInput("inner-mismatch-transpose_b", lambda: f(transpose_b=True)(_t((2, 3)), _t((3, 2))), ValueError),
        ErrorInput("transpose_a-int", lambda: f(transpose_a=1), TypeError, "transpose_a"),
        ErrorInput("transpose_b-str", lambda: f(transpose_b="yes"), TypeError, "transpose_b"),
        ErrorInput("bool-inputs", lambda: f()(_t((2, 2), mstype.bool_), _t((2, 2), mstype.bool_)), TypeError),
        ErrorInput(
            "complex-no-kernel", lambda: f()(_t((2, 2), mstype.complex64), _t((2, 2), mstype.complex64)), TypeError
        ),
    ]


# ---------------------------------------------------------------------------------------------
# BiasAdd


BIAS_ADD_SHAPES = {
    "NCHW": [(2, 3), (2, 3, 4), (2, 3, 4, 5), (1, 2, 3, 2, 2), (0, 3, 2), (2, 0, 4), (1, 1, 1), (16, 20, 16, 14)],
    "NHWC": [(2, 3), (2, 4, 3), (2, 4, 5, 3), (1, 2, 3, 2, 2), (0, 2, 3), (2, 4, 0), (1, 1, 1), (16, 14, 16, 20)],
}


def _bias_add_samples(record, prim, ins, outs, rng):
    fmt = prim.data_format
    for shape in BIAS_ADD_SHAPES[fmt]:
        channels = shape[1] if fmt == "NCHW" else shape[-1]
        x = make_array(shape, ins[0], rng)
        b = make_array((channels,), ins[1], rng)
        yield Sample((x, b), desc=f"{fmt} x{list(shape)}")


def _bias_add_ref(prim, x, b):
    if prim.data_format == "NCHW":
        return x + b.reshape((1, -1) + (1,) * (x.ndim - 2))
    return x + b


def _bias_add_errors():
    f = ops.BiasAdd
    return [
        ErrorInput("1d-input", lambda: f()(_t((3,)), _t((3,))), ValueError, "input_x rank"),
        ErrorInput("2d-bias", lambda: f()(_t((2, 3)), _t((3, 1))), ValueError, "bias rank"),
        ErrorInput("bias-length-nchw", lambda: f()(_t((2, 3, 4)), _t((4,))), ValueError, "channel"),
        ErrorInput("bias-length-nhwc", lambda: f(data_format="NHWC")(_t((2, 3, 4)), _t((3,))), ValueError, "channel"),
        ErrorInput("data_format-value", lambda: f(data_format="NCDHW"), ValueError, "data_format"),
        ErrorInput("data_format-type", lambda: f(data_format=1), TypeError, "data_format"),
        # float32 with float16 is promoted (one dtype group, docs/dtypes.md); a string is no tensor
        ErrorInput("bias-not-a-tensor", lambda: f()(_t((2, 3)), "b"), TypeError, "'bias' must be a Tensor or a number"),
        ErrorInput("bool-inputs", lambda: f()(_t((2, 3), mstype.bool_), _t((3,), mstype.bool_)), TypeError),
        ErrorInput("wrong-arg-count", lambda: f()(_t((2, 3))), TypeError),
    ]


# ---------------------------------------------------------------------------------------------
# Reductions


def _np_axis(axis):
    """MindSpore's axis to NumPy's: () means every axis (NumPy's () would mean none)."""
    if isinstance(axis, (tuple, list)):
        return None if len(axis) == 0 else tuple(axis)
    return axis


def _reduce_samples(record, prim, ins, outs, rng):
    dtype = ins[0]
    cases = [
        ((2, 3, 4), ()),
        ((2, 3, 4), 1),
        ((2, 3, 4), -1),
        ((2, 3, 4), (0, 2)),
        ((2, 3, 4), (2, 0, 1)),
        ((5,), 0),
        ((1, 4, 1), (0, 2)),
        ((), ()),
        ((), 0),
        ((0, 3), 1),
        (LARGE, ()),
        (LARGE, 1),
        (LARGE, 0),
        ((70, 4, 256), (0, 2)),
        ((40, 100), 1),  # rows of a warp each
        ((5, 7, 40), (0, 2)),  # a warp each over two reduced dims
        ((6, 1001), 1),  # blocks over rows that are not all aligned to a pack
        ((3, 2, 300), (1, 2)),  # blocks over one contiguous run of two dims, in packs
    ]
    if record.name == "ReduceSum":  # an empty reduction is an empty sum: 0
        cases += [((0, 3), 0), ((0, 3), ())]
    for shape, axis in cases:
        x = make_array(shape, dtype, rng)
        yield Sample((x, axis), desc=f"x{list(shape)} axis={axis!r}")
    x = make_array((3, 4), dtype, rng)
    yield Sample((x,), desc="x[3, 4] axis omitted (every axis)")
    yield Sample((x,), kwargs={"axis": 1}, desc="x[3, 4] axis=1 by keyword")
    if record.name == "ReduceSum" and dtype.kind == "i":
        info = np.iinfo(dtype.np_dtype)
        x = np.array([info.max, 1, info.max, info.max], dtype.np_dtype)
        yield Sample((x, ()), desc="integer overflow wraps")


def _reduce_sum_ref(prim, x, axis=()):
    if x.ndim == 0:
        return x
    if x.dtype.kind in "iu":
        return np.sum(x, axis=_np_axis(axis), keepdims=prim.keep_dims, dtype=x.dtype)
    return np.sum(x, axis=_np_axis(axis), keepdims=prim.keep_dims)


def _reduce_mean_ref(prim, x, axis=()):
    if x.ndim == 0:
        return x
    return np.mean(x, axis=_np_axis(axis), keepdims=prim.keep_dims)


def _reduce_sum_mag(prim, x, axis=()):
    return _reduce_sum_ref(prim, np.abs(x.astype(np.float64)), axis)


def _reduce_mean_mag(prim, x, axis=()):
    return _reduce_mean_ref(prim, np.abs(x.astype(np.float64)), axis)


def _reduce_errors(prim_cls, float_only):
    def errors():
        out = [
            ErrorInput("axis-out-of-range", lambda: prim_cls()(_t((2, 3)), 2), ValueError, "axis"),
            ErrorInput("axis-out-of-range-negative", lambda: prim_cls()(_t((2, 3)), -3), ValueError, "axis"),
            ErrorInput("axis-twice", lambda: prim_cls()(_t((2, 3)), (1, -1)), ValueError, "twice"),
            ErrorInput("axis-float", lambda: prim_cls()(_t((2, 3)), 1.5), TypeError, "axis"),
            ErrorInput("axis-tuple-of-float", lambda: prim_cls()(_t((2, 3)), (0.0,)), TypeError, "axis"),
            ErrorInput("keep_dims-int", lambda: prim_cls(keep_dims=1), TypeError, "keep_dims"),
            ErrorInput("bool-input", lambda: prim_cls()(_t((2, 3), mstype.bool_), ()), TypeError, "input_x"),
            ErrorInput("unexpected-keyword", lambda: prim_cls()(_t((2, 3)), axes=1), TypeError, "unexpected"),
        ]
        if float_only:
            out.append(ErrorInput("int32-input", lambda: prim_cls()(_t((2, 3), mstype.int32), ()), TypeError))
        return out

    return errors


# ---------------------------------------------------------------------------------------------
# Cast

# Candidates for values representable in both the source and the destination dtype.
_CAST_CANDIDATES = [
    0,
    1,
    2,
    3,
    7,
    -1,
    -2,
    -7,
    100,
    -100,
    127,
    -128,
    255,
    1000,
    -1000,
    4096,
    0.5,
    -0.5,
    1.5,
    -2.25,
    3.75,
]
# Float -> int: truncation toward zero, NaN -> 0, saturation at the integer range.
_FLOAT_TO_INT_RULES = [
    *(math.nan, math.inf, -math.inf, 0.0, -0.0, 3.7, -3.7, 0.99, -0.99, 127.9, 128.5, -128.9, -129.5),
    *(255.5, 256.0, 300.25, -300.25, 65504.0, -65504.0, 1e10, -1e10, 2.0**31, -(2.0**31), 2.0**32),
    *(2.0**63, -(2.0**63), 2.0**64, 1e30, -1e30, 3e38),
]
# x -> bool is x != 0 (NaN is truthy, -0.0 is not; 0.5 and 256 are True, not truncated or wrapped).
_TO_BOOL_RULES = [0, 1, -1, 2, 0.5, -0.5, 0.001, -0.0, 256, 65536, -128, math.nan, math.inf, -math.inf]
# Float -> float rounding and overflow, as NumPy / ml_dtypes cast.
_FLOAT_ROUNDING = [0.1, 1 / 3, -2 / 3, 1e-5, 1e-8, 65519.0, 65520.0, 1e30, -1e30, 3.0e38, 1e-40]
_FLOAT_SPECIALS = [math.nan, math.inf, -math.inf, -0.0, 0.0]


def _representable(v, dtype) -> bool:
    if dtype.kind == "b":
        return v in (0, 1)
    if dtype.kind in "iu":
        info = np.iinfo(dtype.np_dtype)
        return float(v).is_integer() and int(info.min) <= v <= int(info.max)
    with np.errstate(all="ignore"):
        got = (
            np.array([v], np.float64).astype(dtype.np_dtype).astype(np.complex128 if dtype.kind == "c" else np.float64)
        )
    return bool(np.isfinite(v) and got[0] == v)


def _values_in(values, dtype) -> np.ndarray:
    """``values`` (Python numbers) as an array of ``dtype``, rounding as NumPy does."""
    with np.errstate(all="ignore"):
        if dtype.kind == "b":
            return np.array([v != 0 for v in values], bool)
        if dtype.kind in "iu":
            return np.array([int(v) for v in values], dtype=object).astype(dtype.np_dtype)
        return np.array(values, np.float64).astype(dtype.np_dtype)


def _cast_samples(record, prim, ins, outs, rng):
    src, dst = ins[0], outs[0]
    safe = [v for v in _CAST_CANDIDATES if _representable(v, src) and _representable(v, dst)]
    x = _values_in(safe, src)
    yield Sample((x, dst), desc=f"values representable in both {safe}")
    yield Sample((np.tile(x, (3, 1)), dst), desc="2-D")
    yield Sample((x[1:2].reshape(()), dst), desc="0-d")
    yield Sample((np.zeros((0, 3), src.np_dtype), dst), desc="zero-size")
    if src.kind == "f" and dst.kind in "iu":
        yield Sample((_values_in(_FLOAT_TO_INT_RULES, src), dst), desc="float->int: trunc, NaN->0, saturation")
    if dst.kind == "b":
        vals = [v for v in _TO_BOOL_RULES if src.kind == "f" or _representable(v, src)]
        yield Sample((_values_in(vals, src), dst), desc=f"->bool is x != 0: {vals}")
    if src.kind == "f" and dst.kind == "f":
        yield Sample((_values_in(_FLOAT_SPECIALS, src), dst), desc="NaN/inf/-0.0 kept")
        if dst.itemsize < src.itemsize or {src.name, dst.name} == {"Float16", "BFloat16"}:
            yield Sample((_values_in(_FLOAT_ROUNDING, src), dst), desc="narrowing: round to nearest even, overflow")
    if src.kind in "iu" and dst.kind in "iu" and src is not dst:
        info = np.iinfo(src.np_dtype)
        vals = [int(info.max), int(info.min), 256 + 3, 65536 + 5, 2**31 + 7, -1, -129, -32769, -(2**31) - 9]
        vals = [v for v in vals if _representable(v, src)]
        yield Sample((_values_in(vals, src), dst), desc="int->int wraps modulo 2**bits like NumPy")
    if src.kind == "c":
        vals = [1 + 2j, -3.5 - 0.25j, 1j, -2j, complex(-0.0, 5.0), 0.5 - 0.5j, complex(math.nan, 1.0)]
        vals += [complex(2.0, math.nan), complex(math.inf, -1.0), complex(-math.inf, math.inf)]
        x = np.array(vals, np.complex128).astype(src.np_dtype)
        yield Sample((x, dst), desc="complex with imaginary parts, NaN and inf parts")
    if src.name in ("Float32", "Int32") or dst.name in ("Float32",):
        big = np.resize(x, LARGE_N)
        yield Sample((big, dst), desc=f"large [{LARGE_N}]")


def _float_to_int(v: float, info) -> int:
    if math.isnan(v):
        return 0
    if math.isinf(v):
        return int(info.max) if v > 0 else int(info.min)
    return min(max(math.trunc(v), int(info.min)), int(info.max))


def _cast_ref(prim, x, dtype):
    with np.errstate(all="ignore"):
        if dtype.kind == "b":
            return x != 0
        if x.dtype.kind == "c" and dtype.kind != "c":
            x = x.real  # complex -> real: the real part, as NumPy (without its ComplexWarning)
        if x.dtype.kind == "f" and dtype.kind in "iu":
            info = np.iinfo(dtype.np_dtype)
            flat = [_float_to_int(float(v), info) for v in x.reshape(-1)]
            return np.array(flat, dtype=object).astype(dtype.np_dtype).reshape(x.shape)
        return x.astype(dtype.np_dtype)


def _cast_errors():
    f = ops.Cast
    return [
        ErrorInput("dtype-as-string", lambda: f()(_t((2,)), "float16"), TypeError, "dtype"),
        ErrorInput("dtype-as-numpy-type", lambda: f()(_t((2,)), np.float16), TypeError, "dtype"),
        ErrorInput("wrong-arg-count", lambda: f()(_t((2,))), TypeError, "missing"),
        ErrorInput("numpy-array-input", lambda: f()(np.ones(2, np.float32), mstype.float16), TypeError),
    ]


# ---------------------------------------------------------------------------------------------
# Reshape, Assign, AssignSub


RESHAPE_CASES = [
    ((2, 3, 4), (4, 6)),
    ((2, 3, 4), (-1,)),
    ((2, 3, 4), [3, -1, 2]),
    ((6,), (2, 1, 3)),
    ((), (1, 1)),
    ((1, 1), ()),
    ((0, 3), (3, 0)),
    ((0, 3), (-1, 3)),
    ((5,), (5,)),
    (LARGE, (-1, 128)),
]


def _reshape_samples(record, prim, ins, outs, rng):
    for shape, new in RESHAPE_CASES:
        yield Sample((make_array(shape, ins[0], rng), new), desc=f"x{list(shape)} -> {new!r}")


def _reshape_ref(prim, x, shape):
    return x.reshape(tuple(shape))


def _reshape_errors():
    f = ops.Reshape
    return [
        ErrorInput("size-mismatch", lambda: f()(_t((2, 3)), (4, 2)), ValueError, "cannot reshape"),
        ErrorInput("two-minus-ones", lambda: f()(_t((2, 3)), (-1, -1)), ValueError, "-1"),
        ErrorInput("other-negative", lambda: f()(_t((2, 3)), (-2, -3)), ValueError, "-1"),
        ErrorInput("minus-one-not-divisible", lambda: f()(_t((2, 3)), (4, -1)), ValueError, "cannot reshape"),
        ErrorInput("float-entry", lambda: f()(_t((2, 3)), (2, 3.0)), TypeError, "shape"),
        ErrorInput("int-not-tuple", lambda: f()(_t((6,)), 6), TypeError, "shape"),
    ]


INPLACE_SHAPES = [(), (0,), (7,), (4, 5), (2, 3, 4), LARGE]


def _assign_samples(record, prim, ins, outs, rng):
    for shape in INPLACE_SHAPES:
        var = make_array(shape, ins[0], rng)
        value = make_array(shape, ins[1], rng)
        yield Sample((var, value), desc=f"{list(shape)}")


def _assign_ref(prim, variable, value):
    return value


def _assign_sub_ref(prim, variable, value):
    return variable - value


def _inplace_errors(prim_cls, bool_ok):
    def errors():
        out = [
            ErrorInput("variable-not-parameter", lambda: prim_cls()(_t((2,)), _t((2,))), TypeError, "Parameter"),
            ErrorInput("shape-mismatch", lambda: prim_cls()(_p((2, 3)), _t((3, 2))), ValueError, "shape"),
            ErrorInput(
                "lossy-value-cast",
                lambda: prim_cls()(_p((2,), mstype.int32), _t((2,), mstype.float32)),
                TypeError,
                "losslessly",
            ),
            ErrorInput("float-scalar-into-int", lambda: prim_cls()(_p((2,), mstype.int32), 1.5), TypeError),
        ]
        if not bool_ok:
            out.append(
                ErrorInput(
                    "bool-variable", lambda: prim_cls()(_p((2,), mstype.bool_), _t((2,), mstype.bool_)), TypeError
                )
            )
        return out

    return errors


# ---------------------------------------------------------------------------------------------
# The database


def _sigmoid64(x):
    return 1.0 / (1.0 + np.exp(-x))


def _elu64(alpha):
    return lambda x: np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


_RECORDS = [
    # -- activations ------------------------------------------------------------------------
    OpRecord("ReLU", {"": ops.ReLU}, unary_samples, _relu_ref, kind="unary", error_inputs=_relu_errors),
    OpRecord(
        "Elu",
        {"alpha=1.0": ops.Elu, "alpha=0.7": lambda: ops.Elu(alpha=0.7), "alpha=0.0": lambda: ops.Elu(alpha=0.0)},
        unary_samples,
        _elu_ref,
        kind="unary",
        error_inputs=_elu_errors,
    ),
    OpRecord(
        "Sigmoid",
        {"": ops.Sigmoid},
        unary_samples,
        _sigmoid_ref,
        args=(Arg(-8.0, 8.0),),
        kind="unary",
        error_inputs=_elementwise_float_errors(ops.Sigmoid, 1),
    ),
    OpRecord(
        "Tanh",
        {"": ops.Tanh},
        unary_samples,
        lambda prim, x: np.tanh(x),
        kind="unary",
        error_inputs=_elementwise_float_errors(ops.Tanh, 1),
    ),
    # -- unary math -------------------------------------------------------------------------
    OpRecord("Neg", {"": ops.Neg}, unary_samples, lambda prim, x: -x, kind="unary", error_inputs=_neg_errors),
    OpRecord(
        "Exp",
        {"": ops.Exp},
        unary_samples,
        lambda prim, x: np.exp(x),
        args=(Arg(-5.0, 5.0),),
        kind="unary",
        error_inputs=_elementwise_float_errors(ops.Exp, 1),
    ),
    *(
        OpRecord(
            name,
            {"": getattr(ops, name)},
            unary_samples,
            ref,
            args=(Arg(low, high),),
            kind="unary",
            error_inputs=_elementwise_float_errors(getattr(ops, name), 1),
        )
        for name, ref, low, high in (
            ("Sin", lambda prim, x: np.sin(x), -5.0, 5.0),
            ("Cos", lambda prim, x: np.cos(x), -5.0, 5.0),
            ("Log1p", lambda prim, x: np.log1p(x), -0.9, 5.0),
            ("Expm1", lambda prim, x: np.expm1(x), -3.0, 3.0),
            ("Reciprocal", lambda prim, x: 1.0 / x, 0.2, 5.0),
            ("Rsqrt", lambda prim, x: 1.0 / np.sqrt(x), 0.2, 5.0),
        )
    ),
    OpRecord(
        "Log",
        {"": ops.Log},
        unary_samples,
        lambda prim, x: np.log(x),
        args=(Arg(0.05, 20.0),),  # log needs x > 0 (NaN for x < 0, -inf at 0: see the special-values test)
        kind="unary",
        error_inputs=_elementwise_float_errors(ops.Log, 1),
    ),
    # -- activation grads: (dy, y) for ReLU/Elu, (y, dy) for Sigmoid/Tanh (see _grad_ops.py) --
    OpRecord(
        "ReluGrad",
        {"": ops.ReluGrad},
        same_shape_samples,
        lambda prim, dy, y: np.where(y > 0, dy, 0.0),
        args=(Arg(), Arg(make=_grad_y_from(lambda x: np.maximum(x, 0.0)))),
        kind="same_shape",
        error_inputs=_grad_errors(ops.ReluGrad),
    ),
    OpRecord(
        "EluGrad",
        {"alpha=1.0": ops.EluGrad, "alpha=0.5": lambda: ops.EluGrad(alpha=0.5)},
        same_shape_samples,
        lambda prim, dy, y: np.where(y > 0, dy, dy * (y + prim.alpha)),
        args=(Arg(), Arg(make=_grad_y_from(_elu64(1.0)))),
        kind="same_shape",
        error_inputs=lambda: (
            _grad_errors(ops.EluGrad)() + [ErrorInput("alpha-int", lambda: ops.EluGrad(alpha=1), TypeError, "alpha")]
        ),
    ),
    OpRecord(
        "SigmoidGrad",
        {"": ops.SigmoidGrad},
        same_shape_samples,
        lambda prim, y, dy: dy * y * (1.0 - y),
        args=(Arg(make=_grad_y_from(_sigmoid64)), Arg()),
        kind="same_shape",
        error_inputs=_grad_errors(ops.SigmoidGrad),
    ),
    OpRecord(
        "TanhGrad",
        {"": ops.TanhGrad},
        same_shape_samples,
        lambda prim, y, dy: dy * (1.0 - y * y),
        args=(Arg(make=_grad_y_from(np.tanh)), Arg()),
        kind="same_shape",
        error_inputs=_grad_errors(ops.TanhGrad),
    ),
    # -- broadcasting arithmetic ------------------------------------------------------------
    OpRecord(
        "Add",
        {"": ops.Add},
        binary_samples,
        lambda prim, x, y: x + y,
        args=(Arg(), Arg()),
        kind="binary",
        error_inputs=_binary_errors(ops.Add, "biufc"),
    ),
    OpRecord(
        "Sub",
        {"": ops.Sub},
        binary_samples,
        lambda prim, x, y: x - y,
        args=(Arg(), Arg()),
        kind="binary",
        error_inputs=_binary_errors(ops.Sub, "iufc"),
    ),
    OpRecord(
        "Mul",
        {"": ops.Mul},
        binary_samples,
        lambda prim, x, y: x * y,
        args=(Arg(), Arg()),
        kind="binary",
        error_inputs=_binary_errors(ops.Mul, "biufc"),
    ),
    OpRecord(
        "RealDiv",
        {"": ops.RealDiv},
        binary_samples,
        _div_ref,
        args=(Arg(), Arg(nonzero=True)),  # |y| >= 0.5; division by 0 is in the special-values test
        kind="binary",
        error_inputs=_binary_errors(ops.RealDiv, "fc"),
    ),
    # -- MatMul, BiasAdd --------------------------------------------------------------------
    OpRecord(
        "MatMul",
        {
            "NN": ops.MatMul,
            "TN": lambda: ops.MatMul(transpose_a=True),
            "NT": lambda: ops.MatMul(transpose_a=False, transpose_b=True),
            "TT": lambda: ops.MatMul(transpose_a=True, transpose_b=True),
        },
        _matmul_samples,
        _matmul_ref,
        args=(Arg(), Arg()),
        magnitude=_matmul_mag,
        mag_tols={"Float32": 1e-5},  # BLAS sums k products in float32
        error_inputs=_matmul_errors,
    ),
    OpRecord(
        "BiasAdd",
        {"NCHW": ops.BiasAdd, "NHWC": lambda: ops.BiasAdd(data_format="NHWC")},
        _bias_add_samples,
        _bias_add_ref,
        args=(Arg(), Arg()),
        error_inputs=_bias_add_errors,
    ),
    # -- reductions -------------------------------------------------------------------------
    OpRecord(
        "ReduceSum",
        {"keep_dims=False": ops.ReduceSum, "keep_dims=True": lambda: ops.ReduceSum(keep_dims=True)},
        _reduce_samples,
        _reduce_sum_ref,
        magnitude=_reduce_sum_mag,
        error_inputs=_reduce_errors(ops.ReduceSum, float_only=False),
    ),
    OpRecord(
        "ReduceMean",
        {"keep_dims=False": ops.ReduceMean, "keep_dims=True": lambda: ops.ReduceMean(keep_dims=True)},
        _reduce_samples,
        _reduce_mean_ref,
        magnitude=_reduce_mean_mag,
        error_inputs=_reduce_errors(ops.ReduceMean, float_only=True),
    ),
    # -- array ops --------------------------------------------------------------------------
    OpRecord("Cast", {"": ops.Cast}, _cast_samples, _cast_ref, exact=True, error_inputs=_cast_errors),
    OpRecord("Reshape", {"": ops.Reshape}, _reshape_samples, _reshape_ref, exact=True, error_inputs=_reshape_errors),
    OpRecord(
        "Assign",
        {"": ops.Assign},
        _assign_samples,
        _assign_ref,
        args=(Arg(), Arg()),
        exact=True,
        params=(0,),
        error_inputs=_inplace_errors(ops.Assign, bool_ok=True),
    ),
    OpRecord(
        "AssignSub",
        {"": ops.AssignSub},
        _assign_samples,
        _assign_sub_ref,
        args=(Arg(), Arg()),
        params=(0,),
        error_inputs=_inplace_errors(ops.AssignSub, bool_ok=False),
    ),
]

# Records kept in their own modules import the helpers above, so they join here, at the end.
from op_db_array import RECORDS as _ARRAY_RECORDS  # noqa: E402
from op_db_attention import RECORDS as _ATTENTION_RECORDS  # noqa: E402
from op_db_comm import RECORDS as _COMM_RECORDS  # noqa: E402
from op_db_complex import RECORDS as _COMPLEX_RECORDS  # noqa: E402
from op_db_conv import RECORDS as _CONV_RECORDS  # noqa: E402
from op_db_ctc import RECORDS as _CTC_RECORDS  # noqa: E402
from op_db_detection import RECORDS as _DETECTION_RECORDS  # noqa: E402
from op_db_elemwise import RECORDS as _ELEMWISE_RECORDS  # noqa: E402
from op_db_linalg import RECORDS as _LINALG_RECORDS  # noqa: E402
from op_db_math_array import RECORDS as _MATH_ARRAY_RECORDS  # noqa: E402
from op_db_math_ext import RECORDS as _MATH_EXT_RECORDS  # noqa: E402
from op_db_nn import RECORDS as _NN_RECORDS  # noqa: E402
from op_db_nn_activation import RECORDS as _NN_ACTIVATION_RECORDS  # noqa: E402
from op_db_norm import RECORDS as _NORM_RECORDS  # noqa: E402
from op_db_random import RECORDS as _RANDOM_RECORDS  # noqa: E402

_ALL_RECORDS = (
    _RECORDS
    + _MATH_ARRAY_RECORDS
    + _MATH_EXT_RECORDS
    + _NN_RECORDS
    + _NN_ACTIVATION_RECORDS
    + _CONV_RECORDS
    + _ELEMWISE_RECORDS
    + _NORM_RECORDS
    + _ARRAY_RECORDS
    + _COMPLEX_RECORDS
    + _COMM_RECORDS
    + _ATTENTION_RECORDS
    + _RANDOM_RECORDS
    + _LINALG_RECORDS
    + _CTC_RECORDS
    + _DETECTION_RECORDS
)
OP_DB: dict = {r.name: r for r in _ALL_RECORDS}
assert len(OP_DB) == len(_ALL_RECORDS), "two records for one op"
