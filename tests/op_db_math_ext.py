"""Sweep records (see op_db.py) for the third batch of elementwise operators (math_ext_ops):

Sinh, Cosh, Tan, Asin, ACos, Atan, Asinh, Acosh, Atanh, Erfc, Rint, Trunc, Inv, Invert, BitwiseAnd,
BitwiseOr, BitwiseXor, SquaredDifference, Xdivy, Xlogy, DivNoNan, LogicalXor. Kernels:
csrc/kernels/cpu/math_ext.cc, cuda/math_ext.cu; functors/math_ext.h.
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
    _t,
    binary_samples,
    unary_samples,
)
from op_db_elemwise import _logical_samples
from scipy import special

from opforge import Tensor, ops
from opforge import dtype as mstype
from opforge.errors import KernelError


def _ignore(fn):
    def ref(prim, *args):
        with np.errstate(all="ignore"):
            return fn(*args)

    return ref


def _np_erfc(x):
    return np.vectorize(math.erfc, otypes=[np.float64])(x) if np.size(x) else np.zeros(np.shape(x))


def _lgamma(x):
    """SciPy's gammaln, but +inf at -inf as C's lgamma (and PyTorch's) where SciPy gives -inf."""
    return np.where(np.isneginf(x), np.inf, special.gammaln(x))


def _int_values(shape, dtype, rng):
    """Integers over the whole range of ``dtype`` (every bit pattern matters to the bitwise ops)."""
    info = np.iinfo(dtype.np_dtype)
    return rng.integers(int(info.min), int(info.max), size=shape, dtype=dtype.np_dtype, endpoint=True)


_BITS = Arg(make=_int_values)


def _edge_samples(x_values, y_values=None):
    """The sweep's samples and one of fixed edge values (cast to the sample dtypes)."""

    def samples(record, prim, ins, outs, rng):
        yield from (unary_samples if y_values is None else binary_samples)(record, prim, ins, outs, rng)
        with np.errstate(all="ignore"):
            x = np.array(x_values).astype(ins[0].np_dtype)
            if y_values is None:
                yield Sample((x,), desc="edge values")
            else:
                yield Sample((x, np.array(y_values).astype(ins[1].np_dtype)), desc="edge values")

    return samples


def _unary_float(name, ref, low=-3.0, high=3.0, edges=None):
    return OpRecord(
        name,
        {"": getattr(ops, name)},
        unary_samples if edges is None else _edge_samples(edges),
        _ignore(ref),
        args=(Arg(low, high),),
        kind="unary",
        error_inputs=_elementwise_float_errors(getattr(ops, name), 1),
    )


def _float_binary(name, ref, y_arg, edges):
    return OpRecord(
        name,
        {"": getattr(ops, name)},
        _edge_samples(*edges),
        _ignore(ref),
        args=(Arg(), y_arg),
        kind="binary",
        error_inputs=_binary_errors(getattr(ops, name), "f"),
    )


def _int_errors(prim_cls, nin):
    def errors():
        return [
            ErrorInput("float-input", lambda: prim_cls()(*([_t((2,))] * nin)), TypeError, "x"),
            ErrorInput("bool-input", lambda: prim_cls()(*([_t((2,), mstype.bool_)] * nin)), TypeError),
            ErrorInput("wrong-arg-count", lambda: prim_cls()(*([_t((2,), mstype.int32)] * (nin + 1))), TypeError),
        ]

    return errors


def _bitwise(name, ref):
    return OpRecord(
        name,
        {"": getattr(ops, name)},
        binary_samples,
        lambda prim, x, y: ref(x, y),
        args=(_BITS, _BITS),
        kind="binary",
        exact=True,
        error_inputs=_int_errors(getattr(ops, name), 2),
    )


def _xdivy(x, y):
    return np.where(x == 0, 0.0, x / y)


def _xlogy(x, y):
    return np.where(x == 0, 0.0, x * np.log(y))


def _div_no_nan(x, y):
    return np.where(y == 0, 0.0, x / np.where(y == 0, 1, y))


def _squared_difference(prim, x, y):
    if np.result_type(x, y).kind in "iu":
        d = np.subtract(x, y)
        return d * d  # wraps as the kernel does
    return np.square(np.subtract(x, y))


def _polygamma_samples(record, prim, ins, outs, rng):
    """Orders 0 to 4 on a spread of x (negative non-integers, near the poles, large) and the poles themselves."""
    x = np.concatenate([rng.uniform(0.05, 12.0, 20), rng.uniform(-4.0, -0.05, 8), [0.0, -1.0, -3.0, 1.0, 50.0]])
    x = x.astype(ins[1].np_dtype)
    for n in range(5):
        yield Sample((np.asarray(n, ins[0].np_dtype), x), desc=f"a={n}")


def _polygamma_ref(prim, a, x):
    with np.errstate(all="ignore"):
        return special.polygamma(int(a), x.astype(np.float64))


def _polygamma_errors():
    x = _t((3,))
    return [
        ErrorInput("negative-order", lambda: ops.Polygamma()(Tensor(np.int64(-1)), x), KernelError, "must be >= 0"),
        ErrorInput("float-order", lambda: ops.Polygamma()(_t(()), x), TypeError, "'a'"),
        ErrorInput("order-shape", lambda: ops.Polygamma()(_t((2,), mstype.int64), x), ValueError, "0-d"),
        ErrorInput("int-x", lambda: ops.Polygamma()(Tensor(np.int64(1)), _t((3,), mstype.int32)), TypeError, "'x'"),
    ]


_NAN, _INF = math.nan, math.inf
_FLOAT_X = [0.0, 0.0, 0.0, -0.0, 1.5, -2.0, _NAN, 1.0]
_FLOAT_Y = [0.0, _NAN, _INF, 2.0, 0.0, -0.0, 1.0, _INF]

RECORDS: list = [
    _unary_float("Sinh", np.sinh, -5.0, 5.0),
    _unary_float("Cosh", np.cosh, -5.0, 5.0),
    _unary_float("Tan", np.tan, -1.4, 1.4),
    _unary_float("Asin", np.arcsin, -0.95, 0.95, edges=[-1.0, 1.0, 0.0, -0.0, 1.5, -2.0]),
    _unary_float("ACos", np.arccos, -0.95, 0.95, edges=[-1.0, 1.0, 0.0, 1.5, -2.0]),
    _unary_float("Atan", np.arctan, -10.0, 10.0, edges=[_INF, -_INF, 0.0, -0.0]),
    _unary_float("Asinh", np.arcsinh, -10.0, 10.0, edges=[_INF, -_INF, 0.0, -0.0]),
    _unary_float("Acosh", np.arccosh, 1.05, 10.0, edges=[1.0, 0.5, _INF]),
    _unary_float("Atanh", np.arctanh, -0.95, 0.95, edges=[1.0, -1.0, 0.0, 2.0]),
    _unary_float("Erfc", _np_erfc, -3.0, 8.0, edges=[_INF, -_INF, 0.0]),
    _unary_float("Lgamma", _lgamma, 0.05, 12.0, edges=[0.0, -1.0, -2.5, 1.0, 2.0, _INF, -_INF]),
    _unary_float("Digamma", special.digamma, 0.05, 12.0, edges=[0.0, -1.0, -2.5, -0.5, 1.0, _INF]),
    OpRecord(
        "Polygamma",
        {"": ops.Polygamma},
        _polygamma_samples,
        _polygamma_ref,
        args=(Arg(), Arg()),
        # float16 rounds psi^(4) near x = 0.05 (about 1e9): its own ulp
        tols={"Float16": (2e-3, 1e-5), "Float32": (2e-6, 1e-5)},
        error_inputs=_polygamma_errors,
    ),
    _unary_float("Erfinv", special.erfinv, -0.99, 0.99, edges=[1.0, -1.0, 0.0, -0.0, 0.9999, 1.5, -2.0]),
    _unary_float("Rint", np.rint, -20.0, 20.0, edges=[0.5, 1.5, 2.5, -0.5, -1.5, -2.5, -0.0]),
    _unary_float("Inv", np.reciprocal, 0.25, 4.0, edges=[0.0, -0.0, -2.0, _INF]),
    OpRecord(
        "Trunc",
        {"": ops.Trunc},
        _edge_samples([0.5, -0.5, 1.99, -1.99, 7.0, 0.0]),
        lambda prim, x: np.trunc(x) if x.dtype.kind == "f" else x,
        args=(Arg(-20.0, 20.0),),
        kind="unary",
        error_inputs=lambda: [
            ErrorInput("int16-input", lambda: ops.Trunc()(_t((2,), mstype.int16)), TypeError, "input_x"),
            ErrorInput("bool-input", lambda: ops.Trunc()(_t((2,), mstype.bool_)), TypeError, "input_x"),
        ],
    ),
    OpRecord(
        "Invert",
        {"": ops.Invert},
        unary_samples,
        lambda prim, x: np.invert(x),
        args=(_BITS,),
        kind="unary",
        exact=True,
        error_inputs=_int_errors(ops.Invert, 1),
    ),
    _bitwise("BitwiseAnd", np.bitwise_and),
    _bitwise("BitwiseOr", np.bitwise_or),
    _bitwise("BitwiseXor", np.bitwise_xor),
    OpRecord(
        "SquaredDifference",
        {"": ops.SquaredDifference},
        binary_samples,
        _squared_difference,
        args=(Arg(), Arg()),
        kind="binary",
        error_inputs=_binary_errors(ops.SquaredDifference, "if"),
    ),
    _float_binary("Xdivy", _xdivy, Arg(0.5, 3.0), (_FLOAT_X, _FLOAT_Y)),
    _float_binary("Xlogy", _xlogy, Arg(0.1, 3.0), (_FLOAT_X, _FLOAT_Y)),
    _float_binary("DivNoNan", _div_no_nan, Arg(0.5, 3.0), ([1.0, 0.0, -2.0, _NAN, 3.0], [0.0, 0.0, -0.0, 0.0, 2.0])),
    OpRecord(
        "LogicalXor",
        {"": ops.LogicalXor},
        _logical_samples,
        lambda prim, x, y: np.logical_xor(x, y),
        args=(Arg(), Arg()),
        kind="binary",
        error_inputs=lambda: [
            ErrorInput("float-inputs", lambda: ops.LogicalXor()(_t((2,)), _t((2,))), TypeError, "x"),
            ErrorInput("wrong-arg-count", lambda: ops.LogicalXor()(_t((2,), mstype.bool_)), TypeError),
        ],
    ),
]
