"""Sweep records (see op_db.py) for operators added after the first slice: math_array ops.

Equal, Maximum, Minimum, Square, Sqrt, ReduceMax (math_ops); SqrtGrad, MaximumGrad, MinimumGrad
(_grad_ops); ZerosLike, OnesLike, Fill, BroadcastTo, Transpose, ExpandDims, Squeeze, OneHot, Argmax
(array_ops).
"""

from __future__ import annotations

import math

import numpy as np
from op_db import (
    LARGE,
    LARGE_N,
    Arg,
    ErrorInput,
    OpRecord,
    Sample,
    _binary_errors,
    _elementwise_float_errors,
    _grad_errors,
    _grad_y_from,
    _np_axis,
    _reduce_errors,
    _reduce_samples,
    _t,
    binary_samples,
    make_array,
    same_shape_samples,
    unary_samples,
)

from opforge import dtype as mstype
from opforge import ops
from opforge.errors import KernelNotFoundError

# ---------------------------------------------------------------------------------------------
# Helpers


def _few_values(shape, dtype, rng):
    """Values from a small set, so equal elements (ties, Equal's True) are common: halves in [-3, 3]
    for floats, integers in [-3, 3] ([0, 6] unsigned), and booleans."""
    if dtype.kind == "f":
        vals = rng.integers(-6, 7, size=shape) / 2.0
    elif dtype.kind == "u":
        vals = rng.integers(0, 7, size=shape)
    elif dtype.kind == "b":
        vals = rng.random(shape) < 0.5
    else:
        vals = rng.integers(-3, 4, size=shape)
    return np.asarray(vals)  # 0-d stays an array


class _Output:
    """One output of a multi-output primitive. The sweep compares one Tensor per call, so a record
    checks each output of MaximumGrad / MinimumGrad through its own variant."""

    picks_output = True  # a call of ``prim`` itself, one output kept (the jit sweeps call ``prim``)

    def __init__(self, prim, index: int):
        self.prim = prim
        self.index = index

    def __call__(self, *args, **kwargs):
        out = self.prim(*args, **kwargs)
        assert isinstance(out, tuple) and len(out) == 2, f"{self.prim.name} must return (dx, dy), got {out!r}"
        return out[self.index]

    def __getattr__(self, name):
        return getattr(self.__dict__["prim"], name)


# ---------------------------------------------------------------------------------------------
# Equal, Maximum, Minimum


def _equal_errors():
    return _binary_errors(ops.Equal, "biufc")()


def _minmax_errors(prim_cls):
    return _binary_errors(prim_cls, "iuf")


# ---------------------------------------------------------------------------------------------
# Square, Sqrt, SqrtGrad


def _square_samples(record, prim, ins, outs, rng):
    yield from unary_samples(record, prim, ins, outs, rng)
    dtype = ins[0]
    if dtype.kind == "i":  # integers wrap modulo 2**bits like NumPy
        info = np.iinfo(dtype.np_dtype)
        vals = [int(info.max), int(info.min), int(info.max) // 2 + 1, -(2 ** (info.bits // 2)), 2 ** (info.bits // 2)]
        yield Sample((np.array(vals, dtype.np_dtype),), desc="integer overflow wraps")
    else:
        with np.errstate(over="ignore"):  # 1e20 is inf in float16, on purpose
            values = np.array([300.0, -300.0, 1e20, 1e-30, -0.0]).astype(dtype.np_dtype)
        yield Sample((values,), desc="overflow, -0.0")


def _square_errors():
    return [
        ErrorInput("bool-input", lambda: ops.Square()(_t((2,), mstype.bool_)), TypeError, "x"),
        ErrorInput("uint64-no-lossless-kernel", lambda: ops.Square()(_t((2,), mstype.uint64)), KernelNotFoundError),
        ErrorInput("python-number", lambda: ops.Square()(2.0), TypeError),
        ErrorInput("wrong-arg-count", lambda: ops.Square()(_t((2,)), _t((2,))), TypeError),
    ]


# ---------------------------------------------------------------------------------------------
# ReduceMax


def _reduce_max_samples(record, prim, ins, outs, rng):
    yield from _reduce_samples(record, prim, ins, outs, rng)
    dtype = ins[0]
    x = make_array((4, 5), dtype, rng)
    x[1, 2] = x[3, 0] = 7  # ties
    yield Sample((x, 1), desc="ties")
    if dtype.kind == "f":
        v = np.array([[1.0, math.nan, 3.0], [-math.inf, -math.inf, -math.inf], [math.inf, 2.0, math.nan]])
        for axis in ((), 0, 1):
            yield Sample((v.astype(dtype.np_dtype), axis), desc=f"NaN propagates, infinities, axis={axis!r}")
        big = make_array(LARGE, dtype, rng)
        big[200, 17] = math.nan
        for axis in ((), 0, 1):
            yield Sample((big, axis), desc=f"one NaN in a large input, axis={axis!r}")
    else:
        info = np.iinfo(dtype.np_dtype)
        v = np.array([[info.min, info.min], [info.max, info.min]], dtype.np_dtype)
        yield Sample((v, 1), desc="integer extremes")


def _reduce_max_ref(prim, x, axis=()):
    if x.ndim == 0:
        return x
    return np.max(x, axis=_np_axis(axis), keepdims=prim.keep_dims)


def _reduce_max_errors():
    f = ops.ReduceMax
    return _reduce_errors(f, float_only=False)() + [
        ErrorInput("zero-size-axis", lambda: f()(_t((0, 3)), 0), ValueError, "zero-size axis"),
        ErrorInput("zero-size-all-axes", lambda: f()(_t((2, 0))), ValueError, "zero-size axis"),
        ErrorInput("zero-size-axis-keep_dims", lambda: f(keep_dims=True)(_t((3, 0, 2)), (1, 2)), ValueError, "axis 1"),
        ErrorInput("complex-input", lambda: f()(_t((2,), mstype.complex64)), TypeError, "input_x"),
    ]


# ---------------------------------------------------------------------------------------------
# MaximumGrad, MinimumGrad

MINMAX_GRAD_SHAPES = [
    ((), ()),
    ((4, 5), (4, 5)),
    ((4, 5), ()),
    ((), (3,)),
    ((2, 3, 4), (4,)),
    ((2, 1, 4), (3, 1)),
    ((5, 1), (1, 6)),
    ((0, 3), (3,)),
    ((1, 0), (2, 1)),
    (LARGE, (LARGE[-1],)),
    ((LARGE[0], 1), LARGE),
    (LARGE, LARGE),
]


def _minmax_grad_samples(record, prim, ins, outs, rng):
    dtype = ins[0]
    for xs, ys in MINMAX_GRAD_SHAPES:
        out = np.broadcast_shapes(xs, ys)
        x = _few_values(xs, dtype, rng).astype(dtype.np_dtype)
        y = _few_values(ys, dtype, rng).astype(dtype.np_dtype)
        dout = make_array(out, dtype, rng)
        yield Sample((x, y, dout), desc=f"x{list(xs)} y{list(ys)} dout{list(out)}")
    # dout larger than the broadcast of x and y (each must only broadcast to it).
    x, y = make_array((3,), dtype, rng), make_array((1,), dtype, rng)
    yield Sample((x, y, make_array((2, 3), dtype, rng)), desc="x[3] y[1] dout[2, 3]")
    if dtype.kind == "f":
        vals = np.array([math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0])
        x, y = np.meshgrid(vals, vals, indexing="ij")
        dout = make_array(x.shape, dtype, rng)
        yield Sample((x.astype(dtype.np_dtype), y.astype(dtype.np_dtype), dout), desc="NaN/Inf/signed zeros")


def _sum_to(a: np.ndarray, shape: tuple) -> np.ndarray:
    """``a`` summed over the dims it has beyond ``shape`` and those where ``shape`` has a 1."""
    lead = a.ndim - len(shape)
    a = a.sum(axis=tuple(range(lead)), dtype=a.dtype) if lead else a
    axes = tuple(i for i, d in enumerate(shape) if d == 1 and a.shape[i] != 1)
    return a.sum(axis=axes, keepdims=True, dtype=a.dtype) if axes else a


def _minmax_grad_ref(kind):
    def ref(prim, x, y, dout):
        picks_x = (x >= y if kind == "max" else x <= y) | (np.isnan(x) if x.dtype.kind == "f" else False)
        picks_x = np.broadcast_to(picks_x, dout.shape)
        zero = np.zeros_like(dout)
        if prim.index == 0:
            return _sum_to(np.where(picks_x & prim.grad_x, dout, zero), x.shape)
        return _sum_to(np.where(~picks_x & prim.grad_y, dout, zero), y.shape)

    return ref


def _minmax_grad_variants(prim_cls):
    return {
        "dx": lambda: _Output(prim_cls(), 0),
        "dy": lambda: _Output(prim_cls(), 1),
        "grad_x=False dx": lambda: _Output(prim_cls(grad_x=False), 0),
        "grad_x=False dy": lambda: _Output(prim_cls(grad_x=False), 1),
        "grad_y=False dy": lambda: _Output(prim_cls(grad_y=False), 1),
    }


def _minmax_grad_errors(prim_cls):
    def errors():
        return [
            ErrorInput(
                "x-does-not-broadcast-to-dout",
                lambda: prim_cls()(_t((3,)), _t((2, 1)), _t((2, 4))),
                ValueError,
                "'x' of shape [3] must broadcast",
            ),
            ErrorInput(
                "y-has-more-dims-than-dout",
                lambda: prim_cls()(_t((3,)), _t((1, 1, 3)), _t((2, 3))),
                ValueError,
                "'y'",
            ),
            ErrorInput(
                "dtype-mismatch",
                lambda: prim_cls()(_t((2,)), _t((2,), mstype.float16), _t((2,))),
                TypeError,
                "same dtype",
            ),
            ErrorInput(
                "bool-inputs", lambda: prim_cls()(*[_t((2,), mstype.bool_)] * 3), TypeError, "must be a Tensor of dtype"
            ),
            ErrorInput("grad_x-int", lambda: prim_cls(grad_x=1), TypeError, "grad_x"),
            ErrorInput("grad_y-str", lambda: prim_cls(grad_y="no"), TypeError, "grad_y"),
            ErrorInput("wrong-arg-count", lambda: prim_cls()(_t((2,)), _t((2,))), TypeError),
        ]

    return errors


# ---------------------------------------------------------------------------------------------
# ZerosLike, OnesLike, Fill


def _like_errors(prim_cls):
    def errors():
        return [
            ErrorInput("numpy-array-input", lambda: prim_cls()(np.ones(3, np.float32)), TypeError, "Tensor"),
            ErrorInput("python-list", lambda: prim_cls()([1.0, 2.0]), TypeError),
            ErrorInput("wrong-arg-count", lambda: prim_cls()(_t((2,)), _t((2,))), TypeError),
        ]

    return errors


FILL_SHAPES = [(), (0,), (3, 0), (5,), (2, 3), (1, 4, 1), LARGE]


def _fill_values(dtype) -> list:
    if dtype.kind == "b":
        return [True, False, 2, 0.5, 0.0]
    if dtype.kind in "iu":
        info = np.iinfo(dtype.np_dtype)
        vals = [7, 0, int(info.max) if info.max < 2**63 else 2**63 - 1, 2.9, True]
        if dtype.kind == "i":
            vals += [-3, int(info.min), -2.9]
        return vals
    return [0.1, -2.5, 3, 1e30, -1e-40, math.inf, math.nan, False, 2**62 + 1]


def _fill_samples(record, prim, ins, outs, rng):
    dtype = outs[0]
    for i, shape in enumerate(FILL_SHAPES):
        for value in _fill_values(dtype)[: 2 if i else None]:
            yield Sample((dtype, shape, value), desc=f"shape {list(shape)} value {value!r}")
    yield Sample((), kwargs={"type": dtype, "shape": [2, 2], "value": 1}, desc="by keyword, shape as a list")


def _fill_ref(prim, *args, **kwargs):
    dtype, shape, value = args or (kwargs["type"], kwargs["shape"], kwargs["value"])
    with np.errstate(all="ignore"):
        if dtype.kind in "iu" and isinstance(value, float):
            value = math.trunc(value)
        return np.full(tuple(shape), np.array(value).astype(dtype.np_dtype))


def _fill_errors():
    f = ops.Fill
    return [
        ErrorInput("type-as-string", lambda: f()("float32", (2,), 1.0), TypeError, "'type'"),
        ErrorInput("type-complex", lambda: f()(mstype.complex64, (2,), 1.0), TypeError, "'type'"),
        ErrorInput("negative-dim", lambda: f()(mstype.float32, (2, -1), 1.0), ValueError, "shape"),
        ErrorInput("float-dim", lambda: f()(mstype.float32, (2.0,), 1.0), TypeError, "shape"),
        ErrorInput("shape-int", lambda: f()(mstype.float32, 3, 1.0), TypeError, "shape"),
        ErrorInput("value-string", lambda: f()(mstype.float32, (2,), "1"), TypeError, "value"),
        ErrorInput(
            "value-tensor", lambda: f()(mstype.float32, (2,), _t((1,))), TypeError, "'value' must be a constant"
        ),
        ErrorInput("shape-tensor", lambda: f()(mstype.float32, _t((2,)), 1.0), TypeError, "'shape' must be a constant"),
        ErrorInput("value-out-of-int8", lambda: f()(mstype.int8, (2,), 128), ValueError, "fit Int8"),
        ErrorInput("value-negative-uint8", lambda: f()(mstype.uint8, (2,), -1), ValueError, "fit UInt8"),
        ErrorInput("value-float-out-of-int16", lambda: f()(mstype.int16, (2,), 40000.5), ValueError, "fit Int16"),
        ErrorInput("value-nan-into-int", lambda: f()(mstype.int32, (2,), math.nan), ValueError, "finite"),
        ErrorInput("value-beyond-int64", lambda: f()(mstype.uint64, (2,), 2**63), ValueError, "value"),
        ErrorInput("wrong-arg-count", lambda: f()(mstype.float32, (2,)), TypeError, "missing"),
    ]


# ---------------------------------------------------------------------------------------------
# BroadcastTo, Transpose, ExpandDims, Squeeze

BROADCAST_TO_CASES = {
    (): [()],
    (3,): [(), (1,), (3,)],
    (2, 3, 4): [(), (4,), (3, 1), (1, 3, 4), (2, 1, 1), (2, 3, 4)],
    (-1, 5): [(3, 1), (1, 5), (0, 1)],
    (4, 0, 3): [(1,), (0, 1), (1, 0, 3)],
    (2, -1, -1): [(3, 4), (1, 1)],
    (2,) + LARGE: [(LARGE[-1],), (LARGE[0], 1), (1, 1), LARGE],
}


def _broadcast_to_samples(record, prim, ins, outs, rng):
    for shape in BROADCAST_TO_CASES[prim.shape]:
        yield Sample((make_array(shape, ins[0], rng),), desc=f"x{list(shape)} -> {list(prim.shape)}")


def _broadcast_to_ref(prim, x):
    lead = len(prim.shape) - x.ndim
    target = [x.shape[i - lead] if d == -1 else d for i, d in enumerate(prim.shape)]
    return np.broadcast_to(x, target)


def _broadcast_to_errors():
    f = ops.BroadcastTo
    return [
        ErrorInput("dims-do-not-match", lambda: f((2, 3))(_t((2,))), ValueError, "cannot broadcast"),
        ErrorInput("fewer-dims-than-x", lambda: f((3,))(_t((2, 3))), ValueError, "at least as many dims"),
        ErrorInput("minus-one-new-dim", lambda: f((-1, 3))(_t((3,))), ValueError, "-1"),
        ErrorInput("dim-below-minus-one", lambda: f((2, -2)), ValueError, "shape"),
        ErrorInput("shape-int", lambda: f(3), TypeError, "shape"),
        ErrorInput("shape-float-entry", lambda: f((2, 3.0)), TypeError, "shape"),
        ErrorInput("shape-bool-entry", lambda: f((True, 3)), TypeError, "shape"),
        ErrorInput("wrong-arg-count", lambda: f((2,))(_t((2,)), (2,)), TypeError),
    ]


TRANSPOSE_CASES = [
    ((), ()),
    ((5,), (0,)),
    ((0, 3), (1, 0)),
    ((2, 3), (1, 0)),
    ((2, 3), [1, 0]),
    ((2, 3, 4), (0, 1, 2)),
    ((2, 3, 4), (2, 0, 1)),
    ((2, 3, 4), (0, 2, 1)),
    ((2, 3, 4), (1, 0, 2)),
    ((2, 3, 4), (-1, 0, 1)),
    ((1, 4, 1, 3), (3, 2, 1, 0)),
    ((2, 1, 3, 4, 2), (4, 1, 3, 0, 2)),
    ((3, 0, 2), (2, 1, 0)),
    (LARGE, (1, 0)),
    ((70, 4, 256), (2, 0, 1)),
    ((4, 70, 256), (0, 2, 1)),
    ((4, 70, 256), (1, 0, 2)),
    ((33, 65, 35), (2, 1, 0)),
    # The CPU moves 4- and 8-byte elements in square register blocks, the edges one by one.
    ((37, 45), (1, 0)),
    ((3, 19, 21), (0, 2, 1)),
]


def _transpose_samples(record, prim, ins, outs, rng):
    for shape, perm in TRANSPOSE_CASES:
        yield Sample((make_array(shape, ins[0], rng), perm), desc=f"x{list(shape)} perm={perm!r}")


def _transpose_errors():
    f = ops.Transpose
    return [
        ErrorInput("perm-too-short", lambda: f()(_t((2, 3)), (0,)), ValueError, "one entry per dim"),
        ErrorInput("perm-repeats", lambda: f()(_t((2, 3)), (0, 0)), ValueError, "permutation"),
        ErrorInput("perm-out-of-range", lambda: f()(_t((2, 3)), (0, 2)), ValueError, "permutation"),
        ErrorInput("perm-float", lambda: f()(_t((2, 3)), (0.0, 1.0)), TypeError, "perm"),
        ErrorInput("perm-int", lambda: f()(_t((3,)), 0), TypeError, "perm"),
        ErrorInput("perm-tensor", lambda: f()(_t((2, 3)), _t((1, 0))), TypeError, "'perm' must be a constant"),
        ErrorInput("wrong-arg-count", lambda: f()(_t((2, 3))), TypeError, "missing"),
    ]


EXPAND_DIMS_CASES = [((), 0), ((), -1), ((3,), 0), ((3,), 1), ((3,), -1), ((2, 3), -2), ((0, 3), 1), (LARGE, 1)]


def _expand_dims_samples(record, prim, ins, outs, rng):
    for shape, axis in EXPAND_DIMS_CASES:
        yield Sample((make_array(shape, ins[0], rng), axis), desc=f"x{list(shape)} axis={axis}")


def _expand_dims_errors():
    f = ops.ExpandDims
    return [
        ErrorInput("axis-too-large", lambda: f()(_t((2, 3)), 3), ValueError, "axis"),
        ErrorInput("axis-too-small", lambda: f()(_t((2, 3)), -4), ValueError, "axis"),
        ErrorInput("axis-float", lambda: f()(_t((2, 3)), 1.0), TypeError, "axis"),
        ErrorInput("axis-tuple", lambda: f()(_t((2, 3)), (0,)), TypeError, "axis"),
        ErrorInput("axis-tensor", lambda: f()(_t((2, 3)), _t(())), TypeError, "'axis' must be int"),  # (folded)
    ]


SQUEEZE_CASES = {
    (): [(), (1,), (1, 3, 1), (2, 3), (1, 0, 1), (1, LARGE[0], 1, LARGE[1])],
    (0,): [(1,), (1, 3), (1, 0, 2), (1, LARGE_N)],
    (0, -1): [(1, 1), (1, 4, 1), (1, 0, 1)],
    (2,): [(2, 3, 1), (0, 3, 1, 1)],
}


def _squeeze_samples(record, prim, ins, outs, rng):
    for shape in SQUEEZE_CASES[prim.axis]:
        yield Sample((make_array(shape, ins[0], rng),), desc=f"x{list(shape)} axis={prim.axis!r}")


def _squeeze_errors():
    f = ops.Squeeze
    return [
        ErrorInput("dim-not-one", lambda: f(1)(_t((1, 2))), ValueError, "must be 1"),
        ErrorInput("axis-out-of-range", lambda: f(2)(_t((1, 1))), ValueError, "axis"),
        ErrorInput("axis-on-0d", lambda: f(0)(_t(())), ValueError, "axis"),
        ErrorInput("axis-twice", lambda: f((0, -2))(_t((1, 1))), ValueError, "twice"),
        ErrorInput("axis-float", lambda: f(0.0), TypeError, "axis"),
        ErrorInput("axis-tuple-of-float", lambda: f((0.0,)), TypeError, "axis"),
        ErrorInput("wrong-arg-count", lambda: f()(_t((1,)), 0), TypeError),
    ]


# ---------------------------------------------------------------------------------------------
# OneHot

ONE_HOT_SHAPES = [((), 4), ((5,), 4), ((0,), 3), ((2, 3), 5), ((3, 0), 2), ((4,), 0), ((7,), 1), (LARGE, 3)]


def _one_hot_samples(record, prim, ins, outs, rng):
    idx_dtype, dtype = ins[0], ins[1]
    weak = 0 if dtype.kind in "iu" else 0.0
    for shape, depth in ONE_HOT_SHAPES:
        if prim.axis > len(shape):
            continue
        indices = np.asarray(rng.integers(-1, depth + 2, size=shape)).astype(idx_dtype.np_dtype)  # some out of range
        on = make_array((), dtype, rng, 1, 9, nonzero=True)
        off = make_array((), dtype, rng, -9, -1)
        yield Sample((indices, depth, on, off), desc=f"indices{list(shape)} depth={depth}")
        if shape == (5,):
            yield Sample((indices, depth, on, weak), desc=f"off_value=Python {weak!r} takes on_value's dtype")
    extremes = np.array([np.iinfo(idx_dtype.np_dtype).min, np.iinfo(idx_dtype.np_dtype).max, -1, 3, 2])
    on, off = make_array((), dtype, rng, 1, 9), make_array((), dtype, rng, -9, -1)
    yield Sample((extremes.astype(idx_dtype.np_dtype), 3, on, off), desc="extreme indices give all-off rows")


def _one_hot_ref(prim, indices, depth, on_value, off_value):
    hot = indices[..., None] == np.arange(depth)
    out = np.where(hot, on_value, off_value)
    return np.moveaxis(out, -1, prim.axis) if prim.axis != -1 else out


def _one_hot_errors():
    f = ops.OneHot
    i32 = mstype.int32
    return [
        ErrorInput("float-indices", lambda: f()(_t((3,)), 4, 1.0, 0.0), TypeError, "indices"),
        ErrorInput("int8-indices", lambda: f()(_t((3,), mstype.int8), 4, 1.0, 0.0), TypeError, "indices"),
        ErrorInput("negative-depth", lambda: f()(_t((3,), i32), -1, 1.0, 0.0), ValueError, "depth"),
        ErrorInput("float-depth", lambda: f()(_t((3,), i32), 4.0, 1.0, 0.0), TypeError, "depth"),
        ErrorInput("tensor-depth", lambda: f()(_t((3,), i32), _t((1,)), 1.0, 0.0), TypeError, "'depth' must be"),
        ErrorInput("on_value-not-0d", lambda: f()(_t((3,), i32), 4, _t((2,)), 0.0), ValueError, "on_value"),
        ErrorInput("off_value-not-0d", lambda: f()(_t((3,), i32), 4, 1.0, _t((1,))), ValueError, "off_value"),
        ErrorInput("bool-values", lambda: f()(_t((3,), i32), 4, True, False), TypeError, "on_value"),
        ErrorInput("string-value", lambda: f()(_t((3,), i32), 4, "a", 0.0), TypeError, "on_value"),
        ErrorInput("axis-too-large", lambda: f(axis=2)(_t((3,), i32), 4, 1.0, 0.0), ValueError, "axis"),
        ErrorInput("axis-below-minus-one", lambda: f(axis=-2), ValueError, "axis"),
        ErrorInput("axis-float", lambda: f(axis=0.0), TypeError, "axis"),
        ErrorInput("wrong-arg-count", lambda: f()(_t((3,), i32), 4, 1.0), TypeError, "missing"),
    ]


# ---------------------------------------------------------------------------------------------
# Argmax

ARGMAX_CASES = [
    ((), -1),
    ((), 0),
    ((7,), 0),
    ((4, 5), -1),
    ((4, 5), 0),
    ((2, 3, 4), 1),
    ((2, 3, 4), -1),
    ((0, 3), 1),
    ((3, 0), 0),
    (LARGE, -1),
    (LARGE, 0),
    ((70, 4, 256), 1),
    ((3, 1000), -1),  # rows of a GPU block each, not a multiple of its 256 threads
]


def _argmax_variants():
    out = {}
    for axis in (-1, 0, 1):
        for otype in (mstype.int32, mstype.int64):
            out[f"axis={axis} {otype}"] = lambda a=axis, t=otype: ops.Argmax(axis=a, output_type=t)
    return out


def _argmax_samples(record, prim, ins, outs, rng):
    if prim.output_type is not outs[0]:
        return  # this variant runs the other output dtype's kernel
    dtype = ins[0]
    for shape, axis in ARGMAX_CASES:
        if axis != prim.axis:
            continue
        x = _few_values(shape, dtype, rng).astype(dtype.np_dtype)  # many ties: the first one wins
        yield Sample((x,), desc=f"x{list(shape)} axis={axis}")
    if prim.axis == -1:
        x = make_array(LARGE, dtype, rng, -1000, 1000)
        yield Sample((x,), desc="large, few ties")
        if dtype.kind == "f":
            v = np.array(
                [
                    [1.0, math.nan, 3.0, math.nan],
                    [math.nan] * 4,
                    [-math.inf] * 4,
                    [2.0, math.inf, math.inf, 1.0],
                    [-0.0, 0.0, -1.0, 0.0],
                ]
            )
            yield Sample((v.astype(dtype.np_dtype),), desc="the first NaN wins; ties: the first")
            v = np.zeros((4, 700))
            v[0, [650, 300, 301]] = math.nan  # NaNs in different threads' parts of a GPU block's row
            v[1, [699, 5, 260]] = math.inf  # ties between parts: the first
            v[2, :] = -1.0
            v[3, [10, 11, 690]] = -math.inf
            yield Sample((v.astype(dtype.np_dtype),), desc="rows of 700: the first NaN, ties across parts")
        else:
            info = np.iinfo(dtype.np_dtype)
            v = np.array([[info.min, info.min], [info.max, info.max], [info.min, info.max]], dtype.np_dtype)
            yield Sample((v,), desc="integer extremes")


def _argmax_ref(prim, x):
    if x.ndim == 0:
        return np.array(0)
    return np.argmax(x, axis=prim.axis)


def _argmax_errors():
    f = ops.Argmax
    return [
        ErrorInput("axis-out-of-range", lambda: f(axis=2)(_t((2, 3))), ValueError, "axis"),
        ErrorInput("zero-size-axis", lambda: f()(_t((3, 0))), ValueError, "zero-size axis"),
        ErrorInput("bool-input", lambda: f()(_t((3,), mstype.bool_)), TypeError, "'x'"),
        ErrorInput("complex-input", lambda: f()(_t((3,), mstype.complex64)), TypeError, "'x'"),
        ErrorInput("output_type-float32", lambda: f(output_type=mstype.float32), TypeError, "output_type"),
        ErrorInput("output_type-numpy", lambda: f(output_type=np.int32), TypeError, "output_type"),
        ErrorInput("axis-tuple", lambda: f(axis=(0,)), TypeError, "axis"),
        ErrorInput("uint64-no-lossless-kernel", lambda: f()(_t((3,), mstype.uint64)), KernelNotFoundError),
    ]


# ---------------------------------------------------------------------------------------------
# The records

_SMALL = Arg(make=_few_values)

RECORDS: list = [
    # -- comparison and min/max with broadcasting --------------------------------------------
    OpRecord(
        "Equal",
        {"": ops.Equal},
        binary_samples,
        lambda prim, x, y: np.equal(x, y),
        args=(_SMALL, _SMALL),
        kind="binary",
        error_inputs=_equal_errors,
    ),
    OpRecord(
        "Maximum",
        {"": ops.Maximum},
        binary_samples,
        lambda prim, x, y: np.maximum(x, y),
        args=(_SMALL, _SMALL),
        kind="binary",
        error_inputs=_minmax_errors(ops.Maximum),
    ),
    OpRecord(
        "Minimum",
        {"": ops.Minimum},
        binary_samples,
        lambda prim, x, y: np.minimum(x, y),
        args=(_SMALL, _SMALL),
        kind="binary",
        error_inputs=_minmax_errors(ops.Minimum),
    ),
    # -- unary math -------------------------------------------------------------------------
    OpRecord(
        "Square",
        {"": ops.Square},
        _square_samples,
        lambda prim, x: x * x,
        kind="unary",
        error_inputs=_square_errors,
    ),
    OpRecord(
        "Sqrt",
        {"": ops.Sqrt},
        unary_samples,
        lambda prim, x: np.sqrt(x),
        args=(Arg(0.0, 9.0),),  # NaN for x < 0: see the special-values test
        kind="unary",
        error_inputs=_elementwise_float_errors(ops.Sqrt, 1),
    ),
    OpRecord(
        "SqrtGrad",
        {"": ops.SqrtGrad},
        same_shape_samples,
        lambda prim, y, dy: dy / (2.0 * y),
        args=(Arg(make=_grad_y_from(lambda x: np.sqrt(np.abs(x) + 0.05))), Arg()),
        kind="same_shape",
        error_inputs=_grad_errors(ops.SqrtGrad),
    ),
    # -- reductions -------------------------------------------------------------------------
    OpRecord(
        "ReduceMax",
        {"keep_dims=False": ops.ReduceMax, "keep_dims=True": lambda: ops.ReduceMax(keep_dims=True)},
        _reduce_max_samples,
        _reduce_max_ref,
        exact=True,  # a maximum only selects: no rounding
        error_inputs=_reduce_max_errors,
    ),
    # -- min/max grads: two outputs, one variant each ----------------------------------------
    OpRecord(
        "MaximumGrad",
        _minmax_grad_variants(ops.MaximumGrad),
        _minmax_grad_samples,
        _minmax_grad_ref("max"),
        args=(Arg(), Arg(), Arg()),
        error_inputs=_minmax_grad_errors(ops.MaximumGrad),
    ),
    OpRecord(
        "MinimumGrad",
        _minmax_grad_variants(ops.MinimumGrad),
        _minmax_grad_samples,
        _minmax_grad_ref("min"),
        args=(Arg(), Arg(), Arg()),
        error_inputs=_minmax_grad_errors(ops.MinimumGrad),
    ),
    # -- constants --------------------------------------------------------------------------
    OpRecord(
        "ZerosLike",
        {"": ops.ZerosLike},
        unary_samples,
        lambda prim, x: np.zeros_like(x),
        exact=True,
        error_inputs=_like_errors(ops.ZerosLike),
    ),
    OpRecord(
        "OnesLike",
        {"": ops.OnesLike},
        unary_samples,
        lambda prim, x: np.ones_like(x),
        exact=True,
        error_inputs=_like_errors(ops.OnesLike),
    ),
    OpRecord(
        "Fill",
        {"": ops.Fill},
        _fill_samples,
        _fill_ref,
        args=(),
        exact=True,
        error_inputs=_fill_errors,
    ),
    # -- shape and layout -------------------------------------------------------------------
    OpRecord(
        "BroadcastTo",
        {str(shape): (lambda s=shape: ops.BroadcastTo(s)) for shape in BROADCAST_TO_CASES},
        _broadcast_to_samples,
        _broadcast_to_ref,
        exact=True,
        error_inputs=_broadcast_to_errors,
    ),
    OpRecord(
        "Transpose",
        {"": ops.Transpose},
        _transpose_samples,
        lambda prim, x, perm: np.transpose(x, perm),
        exact=True,
        error_inputs=_transpose_errors,
    ),
    OpRecord(
        "ExpandDims",
        {"": ops.ExpandDims},
        _expand_dims_samples,
        lambda prim, x, axis: np.expand_dims(x, axis),
        exact=True,
        error_inputs=_expand_dims_errors,
    ),
    OpRecord(
        "Squeeze",
        {f"axis={axis!r}": (lambda a=axis: ops.Squeeze(a)) for axis in SQUEEZE_CASES},
        _squeeze_samples,
        lambda prim, x: np.squeeze(x, axis=prim.axis or None),
        exact=True,
        error_inputs=_squeeze_errors,
    ),
    # -- indices ----------------------------------------------------------------------------
    OpRecord(
        "OneHot",
        {"axis=-1": ops.OneHot, "axis=0": lambda: ops.OneHot(axis=0), "axis=1": lambda: ops.OneHot(axis=1)},
        _one_hot_samples,
        _one_hot_ref,
        args=(Arg(), Arg(), Arg()),
        exact=True,
        error_inputs=_one_hot_errors,
    ),
    OpRecord(
        "Argmax",
        _argmax_variants(),
        _argmax_samples,
        _argmax_ref,
        error_inputs=_argmax_errors,
    ),
]
