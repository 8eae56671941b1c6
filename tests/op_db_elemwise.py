"""Sweep records (see op_db.py) for the second batch of elementwise operators.

Abs, Erf, Floor, Ceil, Round, Sign, IsNan, IsFinite, LogicalNot, Pow, Atan2, Div, FloorDiv, Mod,
FloorMod, Greater, GreaterEqual, Less, LessEqual, NotEqual, LogicalAnd, LogicalOr (math_ops);
GeLU, Softplus, HSigmoid, HSwish (nn_ops); AbsGrad, GeLUGrad, SoftplusGrad, HSigmoidGrad, HSwishGrad
(_grad_ops). Kernels: csrc/kernels/cpu/elemwise.cc, compare.cc; functors/elemwise.h.
"""

from __future__ import annotations

import math

import numpy as np
from op_db import (
    Arg,
    ErrorInput,
    OpRecord,
    Sample,
    _binary_errors,
    _elementwise_float_errors,
    _grad_errors,
    _t,
    binary_samples,
    same_shape_samples,
    unary_samples,
)

from opforge import dtype as mstype
from opforge import ops
from opforge.errors import KernelNotFoundError

# ---------------------------------------------------------------------------------------------
# Helpers


def _few_values(shape, dtype, rng):
    """Values from a small set: halves in [-3, 3] for floats (quotients of two are exact or far from
    an integer, so float32 and float64 floor alike), integers in [-3, 3] ([0, 6] unsigned), bools.
    Zeros included: division by zero is part of the sweep."""
    if dtype.kind == "f":
        vals = rng.integers(-6, 7, size=shape) / 2.0
    elif dtype.kind == "u":
        vals = rng.integers(0, 7, size=shape)
    elif dtype.kind == "b":
        vals = rng.random(shape) < 0.5
    else:
        vals = rng.integers(-3, 4, size=shape)
    return np.asarray(vals)


_SMALL = Arg(make=_few_values)


def _wrap(values, dtype) -> np.ndarray:
    """Python ints wrapped modulo 2**bits into ``dtype`` (NumPy's integer overflow)."""
    info = np.iinfo(dtype)
    span = 1 << info.bits
    flat = [((int(v) - int(info.min)) % span) + int(info.min) for v in np.ravel(values)]
    return (
        np.array(flat, dtype=np.int64 if info.min < 0 or info.bits < 64 else np.uint64)
        .astype(dtype)
        .reshape(np.shape(values))
    )


def _int_pairs(x, y):
    """x and y broadcast, as Python int object arrays, and their dtype."""
    dtype = np.result_type(x, y)
    xb, yb = np.broadcast_arrays(np.asarray(x), np.asarray(y))
    return xb.astype(object), yb.astype(object), dtype


def _int_extremes(dtype) -> tuple:
    """Integer operands at the edges: INT_MIN / -1, division by zero of each sign, extremes."""
    info = np.iinfo(dtype.np_dtype)
    lo, hi = int(info.min), int(info.max)
    x = [hi, lo, 0, hi, 5, 7, lo, hi, 3]
    y = [0, 0, 0, hi, 0, 3, 1, 2, hi]
    if lo < 0:
        x += [lo, lo, -7, 7, -7, -5, lo]
        y += [-1, -2, 2, -2, -2, 0, lo]
    return np.array(x).astype(dtype.np_dtype), np.array(y).astype(dtype.np_dtype)


def _division_samples(record, prim, ins, outs, rng):
    yield from binary_samples(record, prim, ins, outs, rng)
    if ins[0].kind in "iu":
        yield Sample(_int_extremes(ins[0]), desc="INT_MIN / -1, x / 0, extremes")
    else:
        with np.errstate(over="ignore"):
            x = np.array([1.0, -1.0, 0.0, -0.0, 7.5, -7.5, 1e30, 3.0, -3.0]).astype(ins[0].np_dtype)
            y = np.array([0.0, 0.0, 0.0, 1.0, -2.0, 2.0, 3.0, -0.0, 0.5]).astype(ins[1].np_dtype)
        yield Sample((x, y), desc="signed zeros, division by zero")
    if ins[0].kind == "c":  # Smith's division: no overflow or underflow in |y|^2
        big = 1e300 if ins[0].name == "Complex128" else 1e36
        tiny = 1e-300 if ins[0].name == "Complex128" else 1e-36
        x = np.array([big + big * 1j, tiny - tiny * 1j, 1 + 1j, big, 3 - 4j, 1j]).astype(ins[0].np_dtype)
        y = np.array([big - big * 1j, tiny + tiny * 1j, big * 1j, big + 1j, tiny * 1j, 1e-3 + 0j]).astype(
            ins[1].np_dtype
        )
        yield Sample((x, y), desc="complex: huge and tiny divisors (scaled division)")


# ---------------------------------------------------------------------------------------------
# References


def _np_erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x) if np.size(x) else np.zeros(np.shape(x))


def _ignore(fn):
    def ref(prim, *args):
        with np.errstate(all="ignore"):
            return fn(*args)

    return ref


def _int_div_by_zero(a, dtype):
    info = np.iinfo(dtype)
    return 0 if a == 0 else (int(info.max) if a > 0 else int(info.min))


def _div_ref(prim, x, y):
    if np.asarray(x).dtype.kind in "fc" or np.asarray(y).dtype.kind in "fc":
        with np.errstate(all="ignore"):
            return np.true_divide(x, y)
    xs, ys, dtype = _int_pairs(x, y)
    out = [_int_div_by_zero(a, dtype) if b == 0 else (abs(a) // abs(b)) * (1 if (a < 0) == (b < 0) else -1)
           for a, b in zip(xs.ravel(), ys.ravel())]  # fmt: skip
    return _wrap(np.array(out, dtype=object).reshape(xs.shape), dtype)


def _floor_div_ref(prim, x, y):
    if np.asarray(x).dtype.kind == "f":
        with np.errstate(all="ignore"):
            return np.floor(np.true_divide(x, y))  # MindSpore: floor of the double quotient
    xs, ys, dtype = _int_pairs(x, y)
    out = [_int_div_by_zero(a, dtype) if b == 0 else a // b for a, b in zip(xs.ravel(), ys.ravel())]
    return _wrap(np.array(out, dtype=object).reshape(xs.shape), dtype)


def _mod_ref(prim, x, y):
    if np.asarray(x).dtype.kind == "f":
        with np.errstate(all="ignore"):
            return np.fmod(x, y)
    xs, ys, dtype = _int_pairs(x, y)
    out = [0 if b == 0 else (abs(a) % abs(b)) * (1 if a >= 0 else -1) for a, b in zip(xs.ravel(), ys.ravel())]
    return _wrap(np.array(out, dtype=object).reshape(xs.shape), dtype)


def _floor_mod_ref(prim, x, y):
    if np.asarray(x).dtype.kind == "f":
        with np.errstate(all="ignore"):
            return np.mod(x, y)
    xs, ys, dtype = _int_pairs(x, y)
    out = [0 if b == 0 else a % b for a, b in zip(xs.ravel(), ys.ravel())]
    return _wrap(np.array(out, dtype=object).reshape(xs.shape), dtype)


def _int_pow(a, b):
    if b < 0:
        return 1 if a == 1 else ((-1 if b % 2 else 1) if a == -1 else 0)
    return pow(a, b, 1 << 64)


def _pow_ref(prim, x, y):
    if np.asarray(x).dtype.kind == "f":
        with np.errstate(all="ignore"):
            return np.power(x, y)
    xs, ys, dtype = _int_pairs(x, y)
    out = [_int_pow(a, b) for a, b in zip(xs.ravel(), ys.ravel())]
    return _wrap(np.array(out, dtype=object).reshape(xs.shape), dtype)


def _gelu(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def _gelu_grad(dy, x, y):
    k = math.sqrt(2.0 / math.pi)
    t = np.tanh(k * (x + 0.044715 * x**3))
    return dy * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3 * 0.044715 * x * x))


def _hsigmoid(x):
    return np.clip((x + 3.0) / 6.0, 0.0, 1.0)


def _hswish_grad(dy, x):
    return np.where(x <= -3.0, 0.0, np.where(x >= 3.0, dy, dy * (2.0 * x + 3.0) / 6.0))


# ---------------------------------------------------------------------------------------------
# Samples


def _abs_samples(record, prim, ins, outs, rng):
    yield from unary_samples(record, prim, ins, outs, rng)
    if ins[0].kind in "iu":
        info = np.iinfo(ins[0].np_dtype)
        yield Sample((np.array([info.min, info.max, 0, 1]).astype(ins[0].np_dtype),), desc="|INT_MIN| wraps")


def _round_samples(record, prim, ins, outs, rng):
    yield from unary_samples(record, prim, ins, outs, rng)
    if ins[0].kind == "f":
        x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49, -0.51, 3.0, -0.0])
        yield Sample((x.astype(ins[0].np_dtype),), desc="halves round to even")


def _sign_samples(record, prim, ins, outs, rng):
    yield from unary_samples(record, prim, ins, outs, rng)
    x = np.array([0, 1, -1, 5, -5])
    if ins[0].kind == "f":
        x = np.array([0.0, -0.0, 1e-30, -1e-30, 3.0])
    yield Sample((x.astype(ins[0].np_dtype),), desc="zeros and tiny values")


def _predicate_samples(record, prim, ins, outs, rng):
    yield from unary_samples(record, prim, ins, outs, rng)
    if ins[0].kind == "f":
        x = np.array([math.nan, math.inf, -math.inf, 0.0, -1.0, 65504.0])
        yield Sample((x.astype(ins[0].np_dtype),), desc="NaN, +-inf")


def _logical_samples(record, prim, ins, outs, rng):
    """binary_samples' shapes, with Python bools as the weak scalars."""
    for sample in binary_samples(record, prim, ins, outs, rng):
        if all(isinstance(a, np.ndarray) for a in sample.args):
            yield sample
    yield Sample((record.make_arg(0, (3, 4), ins[0], rng), True), desc="x[3, 4] y=Python True")
    yield Sample((False, record.make_arg(1, (5,), ins[1], rng)), desc="x=Python False y[5]")


# ---------------------------------------------------------------------------------------------
# Errors


def _unary_int_errors(prim_cls, arg, unsigned_ok=True, complex_ok=False):
    def errors():
        unsigned = (
            ErrorInput("uint64-no-lossless-kernel", lambda: prim_cls()(_t((2,), mstype.uint64)), KernelNotFoundError)
            if unsigned_ok
            else ErrorInput("uint8-input", lambda: prim_cls()(_t((2,), mstype.uint8)), TypeError, arg)
        )
        return [
            unsigned,
            ErrorInput("bool-input", lambda: prim_cls()(_t((2,), mstype.bool_)), TypeError, arg),
            ErrorInput("python-number", lambda: prim_cls()(2.0), TypeError),
            ErrorInput("wrong-arg-count", lambda: prim_cls()(_t((2,)), _t((2,))), TypeError),
        ] + (
            []
            if complex_ok
            else [ErrorInput("complex-input", lambda: prim_cls()(_t((2,), mstype.complex64)), TypeError, arg)]
        )

    return errors


def _predicate_errors(prim_cls, bool_ok):
    def errors():
        out = [
            ErrorInput("complex-input", lambda: prim_cls()(_t((2,), mstype.complex64)), TypeError, "x"),
            ErrorInput("wrong-arg-count", lambda: prim_cls()(), TypeError),
            ErrorInput("numpy-array-input", lambda: prim_cls()(np.ones(3, np.float32)), TypeError),
        ]
        if not bool_ok:
            out.append(ErrorInput("bool-input", lambda: prim_cls()(_t((2,), mstype.bool_)), TypeError, "x"))
            out.append(ErrorInput("int32-input", lambda: prim_cls()(_t((2,), mstype.int32)), TypeError, "x"))
        return out

    return errors


def _logical_not_errors():
    f = ops.LogicalNot
    return [
        ErrorInput("float-input", lambda: f()(_t((2,))), TypeError, "x"),
        ErrorInput("int32-input", lambda: f()(_t((2,), mstype.int32)), TypeError, "x"),
        ErrorInput("wrong-arg-count", lambda: f()(_t((2,), mstype.bool_), _t((2,), mstype.bool_)), TypeError),
    ]


def _logical_errors(prim_cls):
    def errors():
        b = mstype.bool_
        return [
            ErrorInput("float-inputs", lambda: prim_cls()(_t((2,)), _t((2,))), TypeError, "x"),
            ErrorInput("int32-inputs", lambda: prim_cls()(_t((2,), mstype.int32), _t((2,), b)), TypeError),
            ErrorInput(
                "shapes-do-not-broadcast", lambda: prim_cls()(_t((2, 3), b), _t((4,), b)), ValueError, "broadcast"
            ),
            ErrorInput("wrong-arg-count", lambda: prim_cls()(_t((2,), b)), TypeError, "missing"),
        ]

    return errors


def _int_binary_errors(prim_cls, valid_kinds):
    def errors():
        return _binary_errors(prim_cls, valid_kinds)() + [
            ErrorInput(
                "uint64-no-lossless-kernel",
                lambda: prim_cls()(_t((2,), mstype.uint64), _t((2,), mstype.uint64)),
                KernelNotFoundError,
            ),
        ]

    return errors


def _gelu_grad_errors():
    f = ops.GeLUGrad
    return [
        ErrorInput("shape-mismatch", lambda: f()(_t((2, 3)), _t((2, 3)), _t((3, 2))), ValueError, "same shape"),
        ErrorInput(
            "dtype-mismatch", lambda: f()(_t((2,)), _t((2,), mstype.float16), _t((2,))), TypeError, "same dtype"
        ),
        ErrorInput("int32-inputs", lambda: f()(*([_t((2,), mstype.int32)] * 3)), TypeError),
        ErrorInput("wrong-arg-count", lambda: f()(_t((2,)), _t((2,))), TypeError),
    ]


# ---------------------------------------------------------------------------------------------
# The records


def _unary_float(name, ref, low=-3.0, high=3.0, samples=unary_samples):
    return OpRecord(
        name,
        {"": getattr(ops, name)},
        samples,
        ref,
        args=(Arg(low, high),),
        kind="unary",
        error_inputs=_elementwise_float_errors(getattr(ops, name), 1),
    )


def _compare(name, ref):
    return OpRecord(
        name,
        {"": getattr(ops, name)},
        binary_samples,
        lambda prim, x, y: ref(x, y),
        args=(_SMALL, _SMALL),
        kind="binary",
        error_inputs=_binary_errors(getattr(ops, name), "biufc" if name == "NotEqual" else "biuf"),
    )


def _division(name, ref):
    return OpRecord(
        name,
        {"": getattr(ops, name)},
        _division_samples,
        ref,
        args=(_SMALL, _SMALL),
        kind="binary",
        error_inputs=_int_binary_errors(getattr(ops, name), "iufc" if name == "Div" else "iuf"),
    )


RECORDS: list = [
    # -- unary math ---------------------------------------------------------------------------
    OpRecord(
        "Abs",
        {"": ops.Abs},
        _abs_samples,
        lambda prim, x: np.abs(x),
        kind="unary",
        error_inputs=_unary_int_errors(ops.Abs, "input_x", complex_ok=True),
    ),
    OpRecord(
        "AbsGrad",
        {"": ops.AbsGrad},
        same_shape_samples,
        lambda prim, x, dy: np.where(x > 0, dy, np.where(x < 0, -dy, np.where(x == 0, 0.0, x))),
        args=(_SMALL, Arg()),  # x from halves: zeros are common
        kind="same_shape",
        error_inputs=_grad_errors(ops.AbsGrad),
    ),
    _unary_float("Erf", lambda prim, x: _np_erf(x)),
    _unary_float("Floor", lambda prim, x: np.floor(x), -50.0, 50.0),
    _unary_float("Ceil", lambda prim, x: np.ceil(x), -50.0, 50.0),
    OpRecord(
        "Round",
        {"": ops.Round},
        _round_samples,
        lambda prim, x: np.rint(x) if x.dtype.kind == "f" else x,
        args=(Arg(-20.0, 20.0),),
        kind="unary",
        error_inputs=_unary_int_errors(ops.Round, "input_x", unsigned_ok=False),
    ),
    OpRecord(
        "Sign",
        {"": ops.Sign},
        _sign_samples,
        lambda prim, x: np.sign(x),
        kind="unary",
        error_inputs=_unary_int_errors(ops.Sign, "x", unsigned_ok=False),
    ),
    OpRecord(
        "IsNan",
        {"": ops.IsNan},
        _predicate_samples,
        lambda prim, x: np.isnan(x),
        kind="unary",
        error_inputs=_predicate_errors(ops.IsNan, bool_ok=False),
    ),
    OpRecord(
        "IsFinite",
        {"": ops.IsFinite},
        _predicate_samples,
        lambda prim, x: np.isfinite(x),
        kind="unary",
        error_inputs=_predicate_errors(ops.IsFinite, bool_ok=True),
    ),
    OpRecord(
        "LogicalNot",
        {"": ops.LogicalNot},
        unary_samples,
        lambda prim, x: np.logical_not(x),
        kind="unary",
        error_inputs=_logical_not_errors,
    ),
    # -- activations and their grads ----------------------------------------------------------
    _unary_float("GeLU", lambda prim, x: _gelu(x), -5.0, 5.0),
    _unary_float("Softplus", lambda prim, x: np.logaddexp(0.0, x), -20.0, 20.0),
    _unary_float("HSigmoid", lambda prim, x: _hsigmoid(x), -5.0, 5.0),
    _unary_float("HSwish", lambda prim, x: x * _hsigmoid(x), -5.0, 5.0),
    _unary_float("ReLU6", lambda prim, x: np.clip(x, 0.0, 6.0), -3.0, 9.0),
    OpRecord(
        "GeLUGrad",
        {"": ops.GeLUGrad},
        same_shape_samples,
        lambda prim, dy, x, y: _gelu_grad(dy, x, y),
        args=(Arg(), Arg(-4.0, 4.0), Arg(make=lambda s, d, rng: _gelu(rng.uniform(-3.0, 3.0, size=s)))),
        kind="other",  # three inputs: not in the two-input NaN/Inf grid
        error_inputs=_gelu_grad_errors,
    ),
    OpRecord(
        "SoftplusGrad",
        {"": ops.SoftplusGrad},
        same_shape_samples,
        lambda prim, dy, x: dy / (1.0 + np.exp(-x)),
        args=(Arg(), Arg(-10.0, 10.0)),
        kind="same_shape",
        error_inputs=_grad_errors(ops.SoftplusGrad),
    ),
    OpRecord(
        "HSigmoidGrad",
        {"": ops.HSigmoidGrad},
        same_shape_samples,
        lambda prim, dy, x: np.where((x > -3.0) & (x < 3.0), dy / 6.0, 0.0),
        args=(Arg(), Arg(-5.0, 5.0)),
        kind="same_shape",
        error_inputs=_grad_errors(ops.HSigmoidGrad),
    ),
    OpRecord(
        "ReLU6Grad",
        {"": ops.ReLU6Grad},
        same_shape_samples,
        lambda prim, dy, x: np.where((x > 0.0) & (x < 6.0), dy, 0.0),
        args=(Arg(), Arg(-3.0, 9.0)),
        kind="same_shape",
        error_inputs=_grad_errors(ops.ReLU6Grad),
    ),
    OpRecord(
        "HSwishGrad",
        {"": ops.HSwishGrad},
        same_shape_samples,
        lambda prim, dy, x: _hswish_grad(dy, x),
        args=(Arg(), Arg(-5.0, 5.0)),
        kind="same_shape",
        error_inputs=_grad_errors(ops.HSwishGrad),
    ),
    # -- binary arithmetic --------------------------------------------------------------------
    OpRecord(
        "Pow",
        {"": ops.Pow},
        _division_samples,
        _pow_ref,
        args=(Arg(0.1, 3.0), Arg(-3.0, 3.0)),
        kind="binary",
        error_inputs=_int_binary_errors(ops.Pow, "iuf"),
    ),
    OpRecord(
        "Atan2",
        {"": ops.Atan2},
        binary_samples,
        _ignore(np.arctan2),
        args=(Arg(), Arg()),
        kind="binary",
        error_inputs=_binary_errors(ops.Atan2, "f"),
    ),
    _division("Div", _div_ref),
    _division("FloorDiv", _floor_div_ref),
    _division("Mod", _mod_ref),
    _division("FloorMod", _floor_mod_ref),
    # -- comparisons and logical ops ----------------------------------------------------------
    _compare("Greater", np.greater),
    _compare("GreaterEqual", np.greater_equal),
    _compare("Less", np.less),
    _compare("LessEqual", np.less_equal),
    _compare("NotEqual", np.not_equal),
    OpRecord(
        "LogicalAnd",
        {"": ops.LogicalAnd},
        _logical_samples,
        lambda prim, x, y: np.logical_and(x, y),
        args=(_SMALL, _SMALL),
        kind="binary",
        error_inputs=_logical_errors(ops.LogicalAnd),
    ),
    OpRecord(
        "LogicalOr",
        {"": ops.LogicalOr},
        _logical_samples,
        lambda prim, x, y: np.logical_or(x, y),
        args=(_SMALL, _SMALL),
        kind="binary",
        error_inputs=_logical_errors(ops.LogicalOr),
    ),
]
