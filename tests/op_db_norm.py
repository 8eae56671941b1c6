"""Sweep records (see op_db.py) of the norm helper's operators: the reductions ReduceMin, ReduceProd,
ReduceAll, ReduceAny (and later ones: Argmin, CumSum, the normalisations, Dropout, the losses).

Multi-output operators are swept once per output (a variant per output), as op_db_nn.py does.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from op_db import (
    LARGE,
    Arg,
    ErrorInput,
    OpRecord,
    Sample,
    _np_axis,
    _p,
    _reduce_errors,
    _reduce_samples,
    _t,
    make_array,
)
from op_db_math_array import _argmax_samples

from opforge import Parameter, Tensor, ops
from opforge import dtype as mstype
from opforge.errors import KernelNotFoundError

# ---------------------------------------------------------------------------------------------
# ReduceMin, ReduceProd, ReduceAll, ReduceAny


def _reduce_min_samples(record, prim, ins, outs, rng):
    yield from _reduce_samples(record, prim, ins, outs, rng)
    dtype = ins[0]
    x = make_array((4, 5), dtype, rng)
    x[1, 2] = x[3, 0] = 0 if dtype.kind == "u" else -7  # ties, below the samples' values
    yield Sample((x, 1), desc="ties")
    if dtype.kind == "f":
        v = np.array([[1.0, math.nan, 3.0], [math.inf, math.inf, math.inf], [-math.inf, 2.0, math.nan]])
        for axis in ((), 0, 1):
            yield Sample((v.astype(dtype.np_dtype), axis), desc=f"NaN propagates, infinities, axis={axis!r}")
        big = make_array(LARGE, dtype, rng)
        big[200, 17] = math.nan
        for axis in ((), 0, 1):
            yield Sample((big, axis), desc=f"one NaN in a large input, axis={axis!r}")
    else:
        info = np.iinfo(dtype.np_dtype)
        v = np.array([[info.max, info.max], [info.max, info.min]], dtype.np_dtype)
        yield Sample((v, 1), desc="integer extremes")


def _reduce_min_ref(prim, x, axis=()):
    if x.ndim == 0:
        return x
    return np.min(x, axis=_np_axis(axis), keepdims=prim.keep_dims)


def _reduce_min_errors():
    f = ops.ReduceMin
    return _reduce_errors(f, float_only=False)() + [
        ErrorInput("zero-size-axis", lambda: f()(_t((0, 3)), 0), ValueError, "minimum of no elements"),
        ErrorInput("zero-size-all-axes", lambda: f()(_t((2, 0))), ValueError, "zero-size axis"),
        ErrorInput("complex-input", lambda: f()(_t((2,), mstype.complex64)), TypeError, "input_x"),
    ]


def _prod_values(shape, dtype, rng):
    # Values near 1 in magnitude so products of a few hundred stay finite and meaningful.
    if dtype.kind == "f":
        x = rng.uniform(0.9, 1.1, size=shape) * rng.choice([-1.0, 1.0], size=shape)
        return np.asarray(x).astype(dtype.np_dtype).reshape(shape)
    return make_array(shape, dtype, rng, -3, 3)


def _reduce_prod_samples(record, prim, ins, outs, rng):
    dtype = ins[0]
    cases = [
        ((2, 3, 4), ()),
        ((2, 3, 4), 1),
        ((2, 3, 4), -1),
        ((2, 3, 4), (0, 2)),
        ((5,), 0),
        ((1, 4, 1), (0, 2)),
        ((), ()),
        ((), 0),
        ((0, 3), 1),
        ((0, 3), 0),  # an empty product is 1
        ((0, 3), ()),
        ((LARGE[0], 8), 1),
        ((8, LARGE[1]), 0),
        ((70, 4, 256), (0, 2)),
    ]
    for shape, axis in cases:
        yield Sample((_prod_values(shape, dtype, rng), axis), desc=f"x{list(shape)} axis={axis!r}")
    x = _prod_values((3, 4), dtype, rng)
    yield Sample((x,), desc="x[3, 4] axis omitted (every axis)")
    yield Sample((x,), kwargs={"axis": 1}, desc="x[3, 4] axis=1 by keyword")
    if dtype.kind == "i":
        info = np.iinfo(dtype.np_dtype)
        yield Sample((np.array([info.max, 3, info.max, -2], dtype.np_dtype), ()), desc="integer overflow wraps")
    else:
        v = np.array([[0.0, 2.0, math.inf], [math.nan, 1.0, 2.0], [-0.0, 3.0, 1.0]]).astype(dtype.np_dtype)
        yield Sample((v, 1), desc="zero times inf, NaN, -0.0")


def _reduce_prod_ref(prim, x, axis=()):
    if x.ndim == 0:
        return x
    with np.errstate(all="ignore"):
        if x.dtype.kind in "iu":
            return np.prod(x, axis=_np_axis(axis), keepdims=prim.keep_dims, dtype=x.dtype)
        return np.prod(x, axis=_np_axis(axis), keepdims=prim.keep_dims)


def _reduce_prod_errors():
    f = ops.ReduceProd
    return _reduce_errors(f, float_only=False)() + [
        ErrorInput("complex-input", lambda: f()(_t((2,), mstype.complex64)), TypeError, "input_x"),
    ]


def _bool_reduce_samples(record, prim, ins, outs, rng):
    cases = [
        ((2, 3, 4), ()),
        ((2, 3, 4), 1),
        ((2, 3, 4), -1),
        ((2, 3, 4), (0, 2)),
        ((5,), 0),
        ((1, 4, 1), (0, 2)),
        ((), ()),
        ((), 0),
        ((0, 3), 1),
        ((0, 3), 0),
        ((0, 3), ()),
        (LARGE, ()),
        (LARGE, 1),
        (LARGE, 0),
        ((70, 4, 256), (0, 2)),
    ]
    for p in (0.5, 0.02, 0.98):
        for shape, axis in cases:
            x = rng.uniform(size=shape) < p
            yield Sample((np.asarray(x),), kwargs={"axis": axis}, desc=f"x{list(shape)} axis={axis!r} P(True)={p}")
    yield Sample((np.ones(LARGE, np.bool_), ()), desc="all True")
    yield Sample((np.zeros(LARGE, np.bool_), ()), desc="all False")


def _logical_ref(fn):
    def ref(prim, x, axis=()):
        if x.ndim == 0:
            return x
        return fn(x, axis=_np_axis(axis), keepdims=prim.keep_dims)

    return ref


def _bool_reduce_errors(f):
    def errors():
        return [
            ErrorInput("float-input", lambda: f()(_t((2, 3)), ()), TypeError, "input_x"),
            ErrorInput("int32-input", lambda: f()(_t((2, 3), mstype.int32), ()), TypeError, "input_x"),
            ErrorInput("axis-out-of-range", lambda: f()(_t((2, 3), mstype.bool_), 2), ValueError, "axis"),
            ErrorInput("axis-twice", lambda: f()(_t((2, 3), mstype.bool_), (1, -1)), ValueError, "twice"),
            ErrorInput("keep_dims-int", lambda: f(keep_dims=1), TypeError, "keep_dims"),
        ]

    return errors


def _keep_dims_variants(cls):
    return {"keep_dims=False": cls, "keep_dims=True": lambda: cls(keep_dims=True)}


RECORDS = [
    OpRecord(
        "ReduceMin",
        _keep_dims_variants(ops.ReduceMin),
        _reduce_min_samples,
        _reduce_min_ref,
        exact=True,  # a minimum only selects: no rounding
        error_inputs=_reduce_min_errors,
    ),
    OpRecord(
        "ReduceProd",
        _keep_dims_variants(ops.ReduceProd),
        _reduce_prod_samples,
        _reduce_prod_ref,
        tols={"Float16": (2e-2, 1e-3), "BFloat16": (8e-2, 1e-2), "Float32": (1e-5, 1e-7)},
        error_inputs=_reduce_prod_errors,
    ),
    OpRecord(
        "ReduceAll",
        _keep_dims_variants(ops.ReduceAll),
        _bool_reduce_samples,
        _logical_ref(np.all),
        exact=True,
        error_inputs=_bool_reduce_errors(ops.ReduceAll),
    ),
    OpRecord(
        "ReduceAny",
        _keep_dims_variants(ops.ReduceAny),
        _bool_reduce_samples,
        _logical_ref(np.any),
        exact=True,
        error_inputs=_bool_reduce_errors(ops.ReduceAny),
    ),
]


# ---------------------------------------------------------------------------------------------
# BatchNorm, BatchNormGrad, LayerNorm, LayerNormGrad

_NORM_TOLS = {
    "Float16": (2e-2, 2e-2),
    "BFloat16": (8e-2, 8e-2),
    "Float32": (2e-5, 2e-5),
    "Float64": (1e-10, 1e-10),
}


class _Call:
    """Calls ``prim`` and gives its output ``index`` (the sweep compares one Tensor), like op_db_nn's
    ``_Output``; the bad-input campaign unwraps ``__dict__["prim"]`` and calls the primitive itself."""

    picks_output = True  # a call of ``prim`` itself, one output kept (the jit sweeps call ``prim``)

    def __init__(self, prim, index):
        self.__dict__.update(prim=prim, index=index)

    def __getattr__(self, name):
        return getattr(self.__dict__["prim"], name)

    def __call__(self, *args, **kwargs):
        out = self.prim(*args, **kwargs)
        assert isinstance(out, tuple) and len(out) == len(self.prim.output_names), f"{self.prim.name}: {out!r}"
        return out[self.index]


class _Training:
    """BatchNorm(is_training=True): the moving statistics (arguments 3 and 4) become fresh Parameters
    (copies, so the caller's inputs stay as they were), then output ``index``, or with "moving_mean" /
    "moving_variance" that Parameter after its in-place update.

    Training BatchNorm writes Parameters that are not its outputs, which the bad-input campaign's
    in-place model (output i is the i-th RW_WRITE argument) cannot describe, so the campaign calls this
    wrapper, not the primitive: its primitive is not ``__dict__["prim"]``, and ``_Training.of`` gives each
    primitive class a subclass carrying its ``__mindspore_signature__``, which the campaign reads."""

    @classmethod
    def of(cls, prim, index):
        sub = type(f"_Training{prim.name}", (cls,), {"__mindspore_signature__": type(prim).__mindspore_signature__})
        obj = sub.__new__(sub)
        obj.__dict__.update(_prim=prim, _index=index)
        return obj

    prim = property(lambda self: self.__dict__["_prim"])
    index = property(lambda self: self.__dict__["_index"])

    def __getattr__(self, name):
        return getattr(self.__dict__["_prim"], name)

    def __call__(self, *args, **kwargs):
        args = list(args)
        for i in (3, 4):  # the moving statistics, by position or by name
            name = self.prim.input_names[i]
            if i < len(args) and isinstance(args[i], Tensor):  # Parameters too: a copy on the Tensor's device
                args[i] = Parameter(args[i], name=f"moving{i}")
            elif isinstance(kwargs.get(name), Tensor):
                kwargs[name] = Parameter(kwargs[name], name=f"moving{i}")
        out = self.prim(*args, **kwargs)
        assert isinstance(out, tuple) and len(out) == len(self.prim.output_names), f"{self.prim.name}: {out!r}"
        if self.index in ("moving_mean", "moving_variance"):
            i = 3 if self.index == "moving_mean" else 4
            moving = args[i] if i < len(args) else kwargs[self.prim.input_names[i]]
            return Tensor(moving.asnumpy(), device=moving.device)
        return out[self.index]


def _outputs(factory, names, indices=None):
    indices = indices or range(len(names))

    def make(i):
        prim = factory()
        if prim.name == "BatchNorm" and prim.is_training:
            return _Training.of(prim, i)
        return _Call(prim, i)

    return {f"{names[i] if isinstance(i, int) else i}": (lambda i=i: make(i)) for i in indices}


def _bn_axes(x):
    return (0,) + tuple(range(2, x.ndim))


def _bn_channel(v, x):
    return v.reshape((1, -1) + (1,) * (x.ndim - 2))


def _bn_stats(prim, x, mean, var):
    if prim.is_training:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return x.mean(axis=_bn_axes(x)), x.var(axis=_bn_axes(x))
    return mean, var


def _bn_ref(prim, x, scale, bias, mean, var):
    m, v = _bn_stats(prim, x, mean, var)
    if prim.index in ("moving_mean", "moving_variance"):
        count = x.size // x.shape[1]
        mom = prim.momentum
        if prim.index == "moving_mean":
            return (1 - mom) * mean + mom * m
        return (1 - mom) * var + mom * v * (count / (count - 1) if count > 1 else 1.0)
    y = (x - _bn_channel(m, x)) / np.sqrt(_bn_channel(v, x) + prim.epsilon) * _bn_channel(scale, x)
    y = y + _bn_channel(bias, x)
    return (y, m, v, m, v)[prim.index]


BN_SHAPES = [(2, 3), (5, 4), (1, 3), (4, 3, 5, 5), (2, 3, 7), (3, 2, 2, 3, 2), (16, 8, 32, 32)]


def _positive(shape, dtype, rng):
    return make_array(shape, dtype, rng, 0.5, 2.0)


def _bn_samples(record, prim, ins, outs, rng):
    dtype = ins[0]
    shapes = BN_SHAPES + ([] if prim.is_training else [(0, 3), (0, 3, 2, 2)])
    for shape in shapes:
        c = shape[1]
        x = make_array(shape, dtype, rng, -3.0, 3.0)
        if not prim.is_training:
            x = (x + 2.0).astype(dtype.np_dtype)  # moving statistics that are not the batch's
        scale, bias = make_array((c,), dtype, rng), make_array((c,), dtype, rng)
        mean, var = make_array((c,), dtype, rng), _positive((c,), dtype, rng)
        yield Sample((x, scale, bias, mean, var), desc=f"x{list(shape)}")
    if dtype.kind == "f" and prim.is_training:
        x = (make_array((6, 2), dtype, rng, -1.0, 1.0) + 100.0).astype(dtype.np_dtype)
        yield Sample((x, *(make_array((2,), dtype, rng, 0.5, 1.0) for _ in range(4))), desc="offset 100: two-pass")


def _bn_errors():
    f = ops.BatchNorm
    x, c = _t((2, 3, 4, 4)), _t((3,))
    return [
        ErrorInput("scale-length", lambda: f()(x, _t((4,)), c, c, c), ValueError, "'scale' must have shape [3]"),
        ErrorInput("variance-2d", lambda: f()(x, c, c, c, _t((3, 1))), ValueError, "'variance'"),
        ErrorInput("x-rank-1", lambda: f()(_t((3,)), c, c, c, c), ValueError, "rank 2"),
        ErrorInput("str-scale", lambda: f()(x, "1", c, c, c), TypeError, "scale"),
        ErrorInput("int32-x", lambda: f()(*[_t(s, mstype.int32) for s in ((2, 3), (3,), (3,), (3,), (3,))]), TypeError),
        ErrorInput("epsilon-int", lambda: f(epsilon=1), TypeError, "epsilon"),
        ErrorInput("epsilon-zero", lambda: f(epsilon=0.0), ValueError, "epsilon"),
        ErrorInput("momentum-above-1", lambda: f(momentum=1.5), ValueError, "momentum"),
        ErrorInput("is_training-int", lambda: f(is_training=1), TypeError, "is_training"),
        ErrorInput("data_format-NHWC", lambda: f(data_format="NHWC"), ValueError, "NHWC"),
        ErrorInput("data_format-bad", lambda: f(data_format="NCDHW"), ValueError, "data_format"),
        ErrorInput(
            "training-mean-tensor", lambda: f(is_training=True)(x, c, c, c, _p((3,))), TypeError, "must be a Parameter"
        ),
        ErrorInput("wrong-arg-count", lambda: f()(x, c, c, c), TypeError),
    ]


def _bn_grad_ref(prim, dy, x, scale, mean, var):
    axes = _bn_axes(x)
    count = x.size // max(x.shape[1], 1)
    r = 1.0 / np.sqrt(var + prim.epsilon)
    xmu = x - _bn_channel(mean, x)
    dbias = dy.sum(axis=axes)
    dscale = (dy * xmu).sum(axis=axes) * r
    k = _bn_channel(scale * r, x)
    if prim.is_training and count:
        dx = k * (dy - _bn_channel(dbias, x) / count - xmu * _bn_channel(r * dscale, x) / count)
    else:
        dx = k * dy
    return (dx, dscale, dbias)[prim.index]


def _bn_grad_samples(record, prim, ins, outs, rng):
    dtype = ins[0]
    for shape in BN_SHAPES + [(0, 3)]:
        c = shape[1]
        x = make_array(shape, dtype, rng)
        mean = x.astype(np.float64).mean(axis=_bn_axes(x)) if x.size else np.zeros(c)
        args = (make_array(shape, dtype, rng), x, make_array((c,), dtype, rng), mean.astype(dtype.np_dtype))
        yield Sample((*args, _positive((c,), dtype, rng)), desc=f"x{list(shape)}")


def _bn_grad_errors():
    f = ops.BatchNormGrad
    x, c = _t((2, 3)), _t((3,))
    return [
        ErrorInput("dy-shape", lambda: f()(_t((2, 4)), x, c, c, c), ValueError, "same shape"),
        ErrorInput("scale-length", lambda: f()(x, x, _t((2,)), c, c), ValueError, "scale"),
        ErrorInput("dtype-mismatch", lambda: f()(x, x, c, c, _t((3,), mstype.float64)), TypeError),
        ErrorInput("epsilon-int", lambda: f(epsilon=1), TypeError, "epsilon"),
    ]


def _ln_axes(prim, x):
    nd = x.ndim
    return prim.begin_norm_axis % nd, prim.begin_params_axis % nd


def _ln_ref(prim, x, gamma, beta):
    norm_axis, _ = _ln_axes(prim, x)
    axes = tuple(range(norm_axis, x.ndim))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the mean of an empty row: NaN
        mean = x.mean(axis=axes, keepdims=True)
        var = x.var(axis=axes, keepdims=True)
        y = (x - mean) / np.sqrt(var + prim.epsilon) * gamma + beta
    return (y, mean, var)[prim.index]


# (2, 67) and (3, 1000): rows that take a GPU block each, not a multiple of the block's 256 threads.
LN_SHAPES = [(3, 4), (2, 3, 4), (2, 3, 4, 5), (4, 1), (1, 6), (2, 0), (0, 4), (5, 3, 1), LARGE, (64, 8, 128)]
LN_SHAPES += [(2, 67), (3, 1000), (2, 2050), (2, 5000)]  # rows in a warp's or a block's registers


def _ln_samples(record, prim, ins, outs, rng):
    dtype = ins[0]
    for shape in LN_SHAPES:
        nd = len(shape)
        if not (-nd <= prim.begin_norm_axis < nd and -nd <= prim.begin_params_axis < nd):
            continue
        _, params_axis = _ln_axes(prim, np.empty(shape))
        pshape = shape[params_axis:]
        x = make_array(shape, dtype, rng)
        yield Sample((x, make_array(pshape, dtype, rng), make_array(pshape, dtype, rng)), desc=f"x{list(shape)}")
    if dtype.kind == "f" and prim.begin_norm_axis in (1, -1) and prim.begin_params_axis in (1, -1):
        x = (make_array((3, 8), dtype, rng, -1.0, 1.0) + 50.0).astype(dtype.np_dtype)
        g, b = make_array((8,), dtype, rng), make_array((8,), dtype, rng)
        yield Sample((x, g, b), desc="offset 50: two-pass")
        x = (make_array((2, 300), dtype, rng, -1.0, 1.0) + 50.0).astype(dtype.np_dtype)
        g, b = make_array((300,), dtype, rng), make_array((300,), dtype, rng)
        yield Sample((x, g, b), desc="offset 50, rows of 300: two-pass block sums")
        yield Sample((np.full((2, 5), 3.0, dtype.np_dtype), g[:5], b[:5]), desc="constant rows: variance 0")


def _ln_errors():
    f = ops.LayerNorm
    x = _t((2, 3, 4))
    return [
        ErrorInput("gamma-shape", lambda: f()(x, _t((4,)), _t((3, 4))), ValueError, "'gamma' must have shape [3, 4]"),
        ErrorInput("beta-shape", lambda: f()(x, _t((3, 4)), _t((3,))), ValueError, "'beta'"),
        ErrorInput("begin_norm_axis-out-of-range", lambda: f(begin_norm_axis=3)(x, _t((3, 4)), _t((3, 4))), ValueError),
        ErrorInput("begin_norm_axis-float", lambda: f(begin_norm_axis=1.0), TypeError, "begin_norm_axis"),
        ErrorInput("epsilon-int", lambda: f(epsilon=1), TypeError, "epsilon"),
        ErrorInput("epsilon-negative", lambda: f(epsilon=-1.0), ValueError, "epsilon"),
        ErrorInput("str-gamma", lambda: f()(x, "1", _t((3, 4))), TypeError, "gamma"),
        ErrorInput("int32-input", lambda: f()(*[_t(s, mstype.int32) for s in ((2, 3), (3,), (3,))]), TypeError),
    ]


def _ln_grad_ref(prim, x, dy, var, mean, gamma):
    norm_axis, params_axis = _ln_axes(prim, x)
    axes = tuple(range(norm_axis, x.ndim))
    r = 1.0 / np.sqrt(var + prim.epsilon)
    xhat = (x - mean) * r
    g = dy * gamma
    with np.errstate(all="ignore"):
        dx = r * (g - g.mean(axis=axes, keepdims=True) - xhat * (g * xhat).mean(axis=axes, keepdims=True))
    lead = tuple(range(params_axis))
    return (dx, (dy * xhat).sum(axis=lead), dy.sum(axis=lead))[prim.index]


def _ln_grad_samples(record, prim, ins, outs, rng):
    dtype = ins[0]
    for shape in LN_SHAPES:
        nd = len(shape)
        if not (-nd <= prim.begin_norm_axis < nd and -nd <= prim.begin_params_axis < nd) or 0 in shape:
            continue
        norm_axis, params_axis = _ln_axes(prim, np.empty(shape))
        axes = tuple(range(norm_axis, nd))
        x = make_array(shape, dtype, rng)
        mean = x.astype(np.float64).mean(axis=axes, keepdims=True).astype(dtype.np_dtype)
        var = _positive(mean.shape, dtype, rng)
        args = (x, make_array(shape, dtype, rng), var, mean, make_array(shape[params_axis:], dtype, rng))
        yield Sample(args, desc=f"x{list(shape)}")


def _ln_grad_errors():
    f = ops.LayerNormGrad
    x, s = _t((2, 3)), _t((2, 1))
    return [
        ErrorInput("dy-shape", lambda: f()(x, _t((3, 2)), s, s, _t((3,))), ValueError, "'dy'"),
        ErrorInput("mean-shape", lambda: f()(x, x, s, _t((2,)), _t((3,))), ValueError, "'mean'"),
        ErrorInput("gamma-shape", lambda: f()(x, x, s, s, _t((2,))), ValueError, "'gamma'"),
        ErrorInput("dtype-mismatch", lambda: f()(x, x, s, s, _t((3,), mstype.float64)), TypeError),
    ]


_BN_OUT = ("y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2")
_BN_GRAD_OUT = ("dx", "dscale", "dbias")
_LN_OUT = ("y", "mean", "variance")


def _prefixed(prefix, variants):
    return {f"{prefix}/{k}": v for k, v in variants.items()}


def _bn_variants():
    out = _prefixed("inference", _outputs(ops.BatchNorm, _BN_OUT, (0, 1, 4)))
    train = lambda: ops.BatchNorm(is_training=True)  # noqa: E731
    out.update(_prefixed("training", _outputs(train, _BN_OUT, (0, 1, 2, 3, 4, "moving_mean", "moving_variance"))))
    out.update(
        _prefixed(
            "training,epsilon=1e-3,momentum=0.3",
            _outputs(lambda: ops.BatchNorm(True, 1e-3, 0.3), _BN_OUT, (0, "moving_variance")),
        )
    )
    return out


def _ln_variants():
    out = _prefixed("1,1", _outputs(ops.LayerNorm, _LN_OUT))
    out.update(_prefixed("-1,-1", _outputs(lambda: ops.LayerNorm(-1, -1), _LN_OUT, (0, 2))))
    out.update(_prefixed("2,1", _outputs(lambda: ops.LayerNorm(2, 1), _LN_OUT, (0,))))
    out.update(_prefixed("1,2", _outputs(lambda: ops.LayerNorm(1, 2), _LN_OUT, (0,))))
    out.update(_prefixed("1,1,epsilon=1e-3", _outputs(lambda: ops.LayerNorm(1, 1, 1e-3), _LN_OUT, (0,))))
    return out


def _ln_grad_variants():
    out = _prefixed("1,1", _outputs(ops.LayerNormGrad, _BN_GRAD_OUT))
    out.update(_prefixed("-1,-1", _outputs(lambda: ops.LayerNormGrad(-1, -1), _BN_GRAD_OUT)))
    out.update(_prefixed("2,1", _outputs(lambda: ops.LayerNormGrad(2, 1), _BN_GRAD_OUT)))
    out.update(_prefixed("1,2,epsilon=1e-3", _outputs(lambda: ops.LayerNormGrad(1, 2, 1e-3), _BN_GRAD_OUT)))
    return out


RECORDS += [
    OpRecord(
        "BatchNorm",
        _bn_variants(),
        _bn_samples,
        _bn_ref,
        args=(Arg(),) * 5,
        tols=_NORM_TOLS,
        error_inputs=_bn_errors,
    ),
    OpRecord(
        "BatchNormGrad",
        {
            **_prefixed("inference", _outputs(ops.BatchNormGrad, _BN_GRAD_OUT)),
            **_prefixed("training", _outputs(lambda: ops.BatchNormGrad(is_training=True), _BN_GRAD_OUT)),
        },
        _bn_grad_samples,
        _bn_grad_ref,
        args=(Arg(),) * 5,
        tols=_NORM_TOLS,
        error_inputs=_bn_grad_errors,
    ),
    OpRecord(
        "LayerNorm",
        _ln_variants(),
        _ln_samples,
        _ln_ref,
        args=(Arg(),) * 3,
        tols=_NORM_TOLS,
        error_inputs=_ln_errors,
    ),
    OpRecord(
        "LayerNormGrad",
        _ln_grad_variants(),
        _ln_grad_samples,
        _ln_grad_ref,
        args=(Arg(),) * 5,
        tols=_NORM_TOLS,
        error_inputs=_ln_grad_errors,
    ),
]


# ---------------------------------------------------------------------------------------------
# Argmin (ArgMax's samples: ties, NaN, extremes; the rule mirrored)


def _argmin_variants():
    out = {}
    for axis in (-1, 0, 1):
        for otype in (mstype.int32, mstype.int64):
            out[f"axis={axis} {otype}"] = lambda a=axis, t=otype: ops.Argmin(axis=a, output_type=t)
    return out


def _argmin_ref(prim, x):
    if x.ndim == 0:
        return np.array(0)
    return np.argmin(x, axis=prim.axis)


def _argmin_errors():
    f = ops.Argmin
    return [
        ErrorInput("axis-out-of-range", lambda: f(axis=2)(_t((2, 3))), ValueError, "axis"),
        ErrorInput("zero-size-axis", lambda: f()(_t((3, 0))), ValueError, "argmin of the zero-size axis"),
        ErrorInput("bool-input", lambda: f()(_t((3,), mstype.bool_)), TypeError, "'x'"),
        ErrorInput("output_type-float32", lambda: f(output_type=mstype.float32), TypeError, "output_type"),
        ErrorInput("axis-tuple", lambda: f(axis=(0,)), TypeError, "axis"),
        ErrorInput("uint64-no-lossless-kernel", lambda: f()(_t((3,), mstype.uint64)), KernelNotFoundError),
    ]


RECORDS.append(
    OpRecord("Argmin", _argmin_variants(), _argmax_samples, _argmin_ref, error_inputs=_argmin_errors),
)


# ---------------------------------------------------------------------------------------------
# CumSum

CUMSUM_CASES = [((), 0), ((7,), 0), ((4, 5), 1), ((4, 5), 0), ((2, 3, 4), -2), ((0, 3), 1), ((3, 0), 1), (LARGE, 1)]
CUMSUM_CASES += [(LARGE, 0), ((70, 4, 256), 1)]
# The CPU scans rows 8 at a time (13: a remainder) and columns in blocks of 64 (100: a partial block).
CUMSUM_CASES += [((13, 33), 1), ((5, 3, 100), 1)]


def _cumsum_samples(record, prim, ins, outs, rng):
    dtype = ins[0]
    for shape, axis in CUMSUM_CASES:
        yield Sample((make_array(shape, dtype, rng), axis), desc=f"x{list(shape)} axis={axis}")
    if dtype.kind == "i":
        info = np.iinfo(dtype.np_dtype)
        yield Sample((np.array([info.max, 1, info.max], dtype.np_dtype), 0), desc="integer overflow wraps")
    else:
        v = np.array([1.0, math.inf, 2.0, math.nan, 3.0]).astype(dtype.np_dtype)
        yield Sample((v, 0), desc="inf and NaN propagate")


def _cumsum_ref(prim, x, axis):
    if x.ndim == 0:
        return x if not prim.exclusive else np.zeros_like(x)
    y = np.flip(x, axis) if prim.reverse else x
    with np.errstate(all="ignore"):
        c = np.cumsum(y, axis=axis, dtype=x.dtype if x.dtype.kind in "iu" else None)
    if prim.exclusive and c.shape[axis]:  # shift by one: the sum of the elements before
        c = np.concatenate([np.zeros_like(np.take(c, [0], axis)), np.take(c, range(c.shape[axis] - 1), axis)], axis)
    return np.flip(c, axis) if prim.reverse else c


def _cumsum_mag(prim, x, axis):
    return _cumsum_ref(prim, np.abs(x.astype(np.float64)), axis)


def _cumprod_samples(record, prim, ins, outs, rng):
    dtype = ins[0]
    for shape, axis in CUMSUM_CASES:
        if dtype.kind == "i":
            x = rng.integers(-3, 4, size=shape)
        else:  # magnitudes about 1, so long products neither vanish nor overflow at once
            x = rng.uniform(0.8, 1.25, size=shape) * rng.choice([-1.0, 1.0], size=shape)
        yield Sample((np.asarray(x).astype(dtype.np_dtype), axis), desc=f"x{list(shape)} axis={axis}")
    if dtype.kind == "i":
        info = np.iinfo(dtype.np_dtype)
        yield Sample((np.array([info.max, 3, info.max], dtype.np_dtype), 0), desc="integer overflow wraps")
    else:
        v = np.array([2.0, math.inf, 0.0, math.nan, 3.0]).astype(dtype.np_dtype)
        yield Sample((v, 0), desc="inf, 0 and NaN propagate")


def _cumprod_ref(prim, x, axis):
    """Products in float64 (the kernels' double or float accumulator), rounded once; integers wrap."""
    if x.ndim == 0:
        return x if not prim.exclusive else np.ones_like(x)
    y = np.flip(x, axis) if prim.reverse else x
    with np.errstate(all="ignore"):
        c = np.cumprod(y, axis=axis, dtype=x.dtype if x.dtype.kind in "iu" else np.float64)
    if prim.exclusive and c.shape[axis]:  # shift by one: the product of the elements before
        c = np.concatenate([np.ones_like(np.take(c, [0], axis)), np.take(c, range(c.shape[axis] - 1), axis)], axis)
    return (np.flip(c, axis) if prim.reverse else c).astype(x.dtype)


# Cummax, Cummin

EXTREME_SCAN_SHAPES = [(7,), (4, 5), (2, 3, 4), (0, 3), (13, 33), LARGE]


def _extreme_scan_samples(record, prim, ins, outs, rng):
    dtype = ins[0]
    for shape in EXTREME_SCAN_SHAPES:
        if not -len(shape) <= prim.axis < len(shape):
            continue
        x = rng.integers(-4, 5, size=shape)  # small integers: many ties
        yield Sample((np.asarray(x).astype(dtype.np_dtype),), desc=f"x{list(shape)} (ties)")
        yield Sample((make_array(shape, dtype, rng),), desc=f"x{list(shape)}")
    if dtype.kind == "f" and prim.axis in (0, -1):
        v = np.array([1.0, math.nan, 3.0, -math.inf, math.inf, 2.0]).astype(dtype.np_dtype)
        yield Sample((v,), desc="a NaN stays the extreme")


def _extreme_scan_ref(prim, x):
    """Values and int64 positions, the latest on ties, a NaN kept from where it stands."""
    wants_max = prim.name == "Cummax"
    moved = np.moveaxis(x, prim.axis, -1)
    values, index = np.empty_like(moved), np.zeros(moved.shape, np.int64)
    for line in np.ndindex(moved.shape[:-1]):
        best, at = None, 0
        for t, v in enumerate(moved[line]):
            if best is None or (not np.isnan(best) and (np.isnan(v) or (v >= best if wants_max else v <= best))):
                best, at = v, t
            values[line + (t,)], index[line + (t,)] = best, at
    return np.moveaxis(values, -1, prim.axis), np.moveaxis(index, -1, prim.axis)


def _extreme_scan_errors(f):
    return lambda: [
        ErrorInput("axis-out-of-range", lambda: f(2)(_t((2, 3))), ValueError, "axis"),
        ErrorInput("axis-float", lambda: f(1.0), TypeError, "axis"),
        ErrorInput("0-d", lambda: f(0)(_t(())), ValueError, "input"),
        ErrorInput("bool-input", lambda: f(0)(_t((2,), mstype.bool_)), TypeError, "'input'"),
    ]


def _cumsum_errors(f=ops.CumSum):
    return [
        ErrorInput("axis-out-of-range", lambda: f()(_t((2, 3)), 2), ValueError, "axis"),
        ErrorInput("axis-float", lambda: f()(_t((2, 3)), 1.0), TypeError, "axis"),
        ErrorInput("axis-missing", lambda: f()(_t((2, 3))), TypeError),
        ErrorInput("exclusive-int", lambda: f(exclusive=1), TypeError, "exclusive"),
        ErrorInput("reverse-str", lambda: f(reverse="yes"), TypeError, "reverse"),
        ErrorInput("bool-input", lambda: f()(_t((2,), mstype.bool_), 0), TypeError, "'x'"),
    ]


# ---------------------------------------------------------------------------------------------
# Dropout, DropoutGrad: the reference re-implements the counter-based generator in NumPy

_U64 = (1 << 64) - 1


def _splitmix64(z):
    z = (z + np.uint64(0x9E3779B97F4A7C15)) & np.uint64(_U64)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _dropout_mask(shape, keep_prob, seed0, seed1):
    with np.errstate(over="ignore"):
        key = _splitmix64(_splitmix64(np.uint64(seed0 & _U64)) ^ np.uint64(seed1 & _U64))
        bits = _splitmix64(key ^ _splitmix64(np.arange(math.prod(shape), dtype=np.uint64)))
    u = (bits >> np.uint64(11)).astype(np.float64) * (1.0 / 2.0**53)
    return (u < keep_prob).reshape(shape)


def _dropout_ref(prim, x):
    mask = _dropout_mask(x.shape, prim.keep_prob, prim.Seed0, prim.Seed1)
    return (np.where(mask, x * (1.0 / prim.keep_prob), 0.0), mask.astype(np.float64))[prim.index]


def _dropout_samples(record, prim, ins, outs, rng):
    for shape in [(), (7,), (4, 5), (2, 3, 4), (0, 3), LARGE]:
        yield Sample((make_array(shape, ins[0], rng),), desc=f"x{list(shape)}")


def _dropout_errors():
    f = ops.Dropout
    return [
        ErrorInput("keep_prob-zero", lambda: f(keep_prob=0.0), ValueError, "keep_prob"),
        ErrorInput("keep_prob-above-1", lambda: f(keep_prob=1.5), ValueError, "keep_prob"),
        ErrorInput("keep_prob-int", lambda: f(keep_prob=1), TypeError, "keep_prob"),
        ErrorInput("Seed0-float", lambda: f(Seed0=1.0), TypeError, "Seed0"),
        ErrorInput("int32-input", lambda: f()(_t((2,), mstype.int32)), TypeError, "'x'"),
    ]


def _dropout_ext_ref(prim, x, seed, offset):
    mask = _dropout_mask(x.shape, 1.0 - prim.p, seed.item(), offset.item())
    return (np.where(mask, x * (1.0 / (1.0 - prim.p)), 0.0), mask.astype(np.float64))[prim.index]


def _dropout_ext_samples(record, prim, ins, outs, rng):
    seeds = [(0, 0), (3, 7), (-5, 2**40), (2**62, -1)]
    for shape, (seed, offset) in zip([(), (7,), (4, 5), (0, 3), LARGE, (2, 3, 4)], seeds * 2):
        counters = (np.array(seed, np.int64), np.array(offset, np.int64).reshape((1,) if shape == (7,) else ()))
        yield Sample((make_array(shape, ins[0], rng), *counters), desc=f"x{list(shape)} seed={seed} offset={offset}")


def _dropout_ext_errors():
    f = ops.DropoutExt
    i64 = mstype.int64
    return [
        ErrorInput("p-one", lambda: f(p=1.0), ValueError, "'p'"),
        ErrorInput("p-int", lambda: f(p=0), TypeError, "'p'"),
        ErrorInput("seed-int32", lambda: f()(_t((2,)), _t((), mstype.int32), _t((), i64)), TypeError, "'seed'"),
        ErrorInput("offset-two", lambda: f()(_t((2,)), _t((), i64), _t((2,), i64)), ValueError, "'offset'"),
        ErrorInput("int32-input", lambda: f()(_t((2,), mstype.int32), _t((), i64), _t((), i64)), TypeError, "'input'"),
    ]


def _dropout_grad_ref(prim, dy, mask):
    return dy * mask / prim.keep_prob


def _dropout_grad_samples(record, prim, ins, outs, rng):
    for shape in [(), (7,), (4, 5), (0, 3), LARGE]:
        mask = (rng.uniform(size=shape) < 0.5).astype(ins[0].np_dtype)
        yield Sample((make_array(shape, ins[0], rng), np.asarray(mask)), desc=f"dy{list(shape)}")


def _dropout_grad_errors():
    f = ops.DropoutGrad
    return [
        ErrorInput("shape-mismatch", lambda: f()(_t((2, 3)), _t((3, 2))), ValueError, "same shape"),
        ErrorInput("keep_prob-zero", lambda: f(keep_prob=0.0), ValueError, "keep_prob"),
        ErrorInput("int32-inputs", lambda: f()(_t((2,), mstype.int32), _t((2,), mstype.int32)), TypeError),
    ]


# ---------------------------------------------------------------------------------------------
# L2Loss, SmoothL1Loss, SmoothL1LossGrad

LOSS_SHAPES = [(), (7,), (4, 5), (2, 3, 4), (0, 3), LARGE]


def _l2_samples(record, prim, ins, outs, rng):
    for shape in LOSS_SHAPES:
        yield Sample((make_array(shape, ins[0], rng),), desc=f"x{list(shape)}")


def _smooth_l1(prim, d):
    a = np.abs(d)
    return np.where(a < prim.beta, 0.5 * d * d / prim.beta, a - 0.5 * prim.beta)


def _reduce_loss(prim, v):
    if prim.reduction == "none":
        return v
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(v.sum() if prim.reduction == "sum" else v.mean())


def _smooth_l1_ref(prim, x, y):
    return _reduce_loss(prim, _smooth_l1(prim, x - y))


def _smooth_l1_samples(record, prim, ins, outs, rng):
    for shape in LOSS_SHAPES:
        x, y = make_array(shape, ins[0], rng), make_array(shape, ins[0], rng)
        yield Sample((x, y), desc=f"x{list(shape)}")


def _smooth_l1_mag(prim, x, y):
    return _reduce_loss(prim, np.abs(_smooth_l1(prim, x - y)))


def _smooth_l1_errors():
    f = ops.SmoothL1Loss
    return [
        ErrorInput("shape-mismatch", lambda: f()(_t((2, 3)), _t((3, 2))), ValueError, "'labels'"),
        ErrorInput("beta-zero", lambda: f(beta=0.0), ValueError, "beta"),
        ErrorInput("beta-int", lambda: f(beta=1), TypeError, "beta"),
        ErrorInput("reduction-bad", lambda: f(reduction="avg"), ValueError, "reduction"),
        ErrorInput("int32-inputs", lambda: f()(_t((2,), mstype.int32), _t((2,), mstype.int32)), TypeError),
    ]


def _smooth_l1_grad_ref(prim, x, y, dout):
    g = np.clip((x - y) / prim.beta, -1.0, 1.0)
    if prim.reduction == "mean":
        return g * dout / max(x.size, 1)
    return g * dout


def _smooth_l1_grad_samples(record, prim, ins, outs, rng):
    for shape in LOSS_SHAPES:
        x, y = make_array(shape, ins[0], rng), make_array(shape, ins[0], rng)
        dout = make_array(shape if prim.reduction == "none" else (), ins[0], rng)
        yield Sample((x, y, dout), desc=f"x{list(shape)}")


def _smooth_l1_grad_errors():
    f = ops.SmoothL1LossGrad
    return [
        ErrorInput("dout-shape", lambda: f()(_t((2, 3)), _t((2, 3)), _t(())), ValueError, "'dout'"),
        ErrorInput("reduction-bad", lambda: f(reduction="avg"), ValueError, "reduction"),
    ]


def _reductions(cls, **attrs):
    return {r: (lambda r=r: cls(reduction=r, **attrs)) for r in ("none", "sum", "mean")}


RECORDS += [
    OpRecord(
        "CumSum",
        {
            "": ops.CumSum,
            "exclusive": lambda: ops.CumSum(exclusive=True),
            "reverse": lambda: ops.CumSum(reverse=True),
            "exclusive,reverse": lambda: ops.CumSum(True, True),
        },
        _cumsum_samples,
        _cumsum_ref,
        magnitude=_cumsum_mag,
        error_inputs=_cumsum_errors,
    ),
    *(
        OpRecord(
            name,
            {f"axis={a}": (lambda a=a, name=name: getattr(ops, name)(a)) for a in (0, 1, -1)},
            _extreme_scan_samples,
            _extreme_scan_ref,
            exact=True,
            error_inputs=_extreme_scan_errors(getattr(ops, name)),
        )
        for name in ("Cummax", "Cummin")
    ),
    OpRecord(
        "CumProd",
        {
            "": ops.CumProd,
            "exclusive": lambda: ops.CumProd(exclusive=True),
            "reverse": lambda: ops.CumProd(reverse=True),
            "exclusive,reverse": lambda: ops.CumProd(True, True),
        },
        _cumprod_samples,
        _cumprod_ref,
        error_inputs=lambda: _cumsum_errors(ops.CumProd),
    ),
    OpRecord(
        "Dropout",
        {
            **_outputs(ops.Dropout, ("output", "mask")),
            **_prefixed("keep_prob=0.8,Seed0=3,Seed1=7", _outputs(lambda: ops.Dropout(0.8, 3, 7), ("output", "mask"))),
            **_prefixed("keep_prob=1.0", _outputs(lambda: ops.Dropout(1.0, 1, 2), ("output",), (0,))),
        },
        _dropout_samples,
        _dropout_ref,
        error_inputs=_dropout_errors,
    ),
    OpRecord(
        "DropoutExt",
        {
            **_outputs(ops.DropoutExt, ("output", "mask")),
            **_prefixed("p=0.2", _outputs(lambda: ops.DropoutExt(0.2), ("output", "mask"))),
            **_prefixed("p=0.0", _outputs(lambda: ops.DropoutExt(0.0), ("output",), (0,))),
        },
        _dropout_ext_samples,
        _dropout_ext_ref,
        args=(Arg(), Arg(), Arg()),
        error_inputs=_dropout_ext_errors,
    ),
    OpRecord(
        "DropoutGrad",
        {"": ops.DropoutGrad, "keep_prob=0.8": lambda: ops.DropoutGrad(0.8)},
        _dropout_grad_samples,
        _dropout_grad_ref,
        args=(Arg(), Arg()),
        error_inputs=_dropout_grad_errors,
    ),
    OpRecord(
        "L2Loss",
        {"": ops.L2Loss},
        _l2_samples,
        lambda prim, x: np.asarray((x * x).sum() / 2),
        magnitude=lambda prim, x: np.asarray((x * x).sum() / 2),
        error_inputs=lambda: [ErrorInput("int32-input", lambda: ops.L2Loss()(_t((2,), mstype.int32)), TypeError)],
    ),
    OpRecord(
        "SmoothL1Loss",
        {**_reductions(ops.SmoothL1Loss), "beta=0.5,none": lambda: ops.SmoothL1Loss(beta=0.5)},
        _smooth_l1_samples,
        _smooth_l1_ref,
        args=(Arg(), Arg()),
        magnitude=_smooth_l1_mag,
        error_inputs=_smooth_l1_errors,
    ),
    OpRecord(
        "SmoothL1LossGrad",
        {**_reductions(ops.SmoothL1LossGrad), "beta=0.5,sum": lambda: ops.SmoothL1LossGrad(0.5, "sum")},
        _smooth_l1_grad_samples,
        _smooth_l1_grad_ref,
        args=(Arg(),) * 3,
        error_inputs=_smooth_l1_grad_errors,
    ),
]


# ---------------------------------------------------------------------------------------------
# BCEWithLogitsLoss, NLLLoss, NLLLossGrad


def _softplus(v):
    return np.logaddexp(0.0, v)


def _bce_terms(x, y, w, p):
    return w * ((1.0 - y) * x + (1.0 + (p - 1.0) * y) * _softplus(-x))


def _bce_ref(prim, x, y, w, p):
    return _reduce_loss(prim, _bce_terms(x, y, w, p))


def _bce_mag(prim, x, y, w, p):
    return _reduce_loss(prim, np.abs(_bce_terms(x, y, w, p)))


BCE_SHAPES = [((), ()), ((7,), (7,)), ((4, 5), (5,)), ((2, 3, 4), ()), ((0, 3), (3,)), (LARGE, (LARGE[-1],))]


def _bce_samples(record, prim, ins, outs, rng):
    dtype = ins[0]
    for shape, wshape in BCE_SHAPES:
        x = make_array(shape, dtype, rng, -6.0, 6.0)
        y = make_array(shape, dtype, rng, 0.0, 1.0)
        w, p = make_array(wshape, dtype, rng, 0.1, 2.0), make_array(wshape, dtype, rng, 0.1, 3.0)
        yield Sample((x, y, w, p), desc=f"x{list(shape)} weight{list(wshape)}")
    if dtype.kind == "f":
        x = np.array([-80.0, -20.0, 0.0, 20.0, 80.0]).astype(dtype.np_dtype)
        y = np.array([1.0, 0.0, 0.5, 1.0, 0.0]).astype(dtype.np_dtype)
        one = np.ones(5, dtype.np_dtype)
        yield Sample((x, y, one, one), desc="large logits: stable")


def _bce_errors():
    f = ops.BCEWithLogitsLoss
    x = _t((2, 3))
    return [
        ErrorInput("label-shape", lambda: f()(x, _t((3, 2)), _t((3,)), _t((3,))), ValueError, "'label'"),
        ErrorInput("weight-not-broadcast", lambda: f()(x, x, _t((2,)), _t((3,))), ValueError, "broadcast"),
        ErrorInput("pos_weight-bigger", lambda: f()(x, x, _t((3,)), _t((4, 2, 3))), ValueError, "pos_weight"),
        ErrorInput("reduction-bad", lambda: f(reduction="avg"), ValueError, "reduction"),
        ErrorInput("int32-inputs", lambda: f()(*[_t((2,), mstype.int32)] * 4), TypeError),
        ErrorInput("wrong-arg-count", lambda: f()(x, x, x), TypeError),
    ]


def _nll_ref(prim, x, t, w):
    x2 = x.reshape(-1, x.shape[-1])
    t = t.reshape(-1).astype(np.int64)
    keep = t != prim.ignore_index
    tk = np.where(keep, t, 0)
    wt = np.where(keep, w[tk], 0.0)
    losses = np.where(keep, -wt * x2[np.arange(len(tk)), tk], 0.0)  # an ignored row is 0, a NaN logit too
    total = wt.sum()
    if prim.reduction == "none":
        loss = losses.reshape(x.shape[:-1])
    elif prim.reduction == "sum":
        loss = np.asarray(losses.sum())
    else:
        with np.errstate(all="ignore"):
            loss = np.asarray(losses.sum() / total)
    return (loss, np.asarray(total))[prim.index]


def _nll_samples(record, prim, ins, outs, rng):
    dtype, ldtype = ins[0], ins[1]
    for n, c in ((4, 3), (1, 5), (7, 1), (0, 3), (300, 10)):
        x = make_array((n, c), dtype, rng)
        t = rng.integers(0, c, n).astype(ldtype.np_dtype)
        yield Sample((x, t, make_array((c,), dtype, rng, 0.2, 2.0)), desc=f"logits[{n}, {c}]")
    x = make_array((5, 4), dtype, rng)
    ig = prim.ignore_index
    t = np.array([0, ig, 3, 1, ig], ldtype.np_dtype)
    yield Sample((x, t, make_array((4,), dtype, rng, 0.2, 2.0)), desc="ignored rows")
    yield Sample(
        (make_array((4,), dtype, rng), np.array(2, ldtype.np_dtype), make_array((4,), dtype, rng, 0.2, 2.0)),
        desc="1-D logits",
    )


def _nll_errors():
    f = ops.NLLLoss
    x, w = _t((3, 4)), _t((4,))
    labels = Tensor(np.array([0, 1, 2], np.int32))
    return [
        ErrorInput("label-out-of-range", lambda: f()(x, Tensor(np.array([0, 4, 1], np.int32)), w), Exception, "labels"),
        ErrorInput("labels-shape", lambda: f()(x, Tensor(np.array([0, 1], np.int32)), w), ValueError, "'labels'"),
        ErrorInput("weight-shape", lambda: f()(x, labels, _t((3,))), ValueError, "'weight'"),
        ErrorInput("logits-3d", lambda: f()(_t((2, 3, 4)), labels, w), ValueError, "1-D or 2-D"),
        ErrorInput("float-labels", lambda: f()(x, _t((3,)), w), TypeError, "labels"),
        ErrorInput("reduction-bad", lambda: f(reduction="avg"), ValueError, "reduction"),
        ErrorInput("ignore_index-float", lambda: f(ignore_index=1.0), TypeError, "ignore_index"),
    ]


def _nll_grad_ref(prim, x, g, t, w, total):
    x2 = x.reshape(-1, x.shape[-1])
    t = t.reshape(-1).astype(np.int64)
    out = np.zeros_like(x2)
    for i, k in enumerate(t):
        if k == prim.ignore_index:
            continue
        gi = g.reshape(-1)[i] if prim.reduction == "none" else g.reshape(-1)[0]
        if prim.reduction == "mean":
            gi = gi / total.reshape(-1)[0]
        out[i, k] = -w[k] * gi
    return out.reshape(x.shape)


def _nll_grad_samples(record, prim, ins, outs, rng):
    dtype, ldtype = ins[0], ins[2]
    for n, c in ((4, 3), (1, 5), (0, 3), (300, 10)):
        x = make_array((n, c), dtype, rng)
        t = rng.integers(0, c, n).astype(ldtype.np_dtype)
        if n > 2:
            t[1] = prim.ignore_index
        g = make_array((n,) if prim.reduction == "none" else (), dtype, rng)
        total = make_array((), dtype, rng, 0.5, 3.0)
        yield Sample((x, g, t, make_array((c,), dtype, rng, 0.2, 2.0), total), desc=f"logits[{n}, {c}]")


def _nll_grad_errors():
    f = ops.NLLLossGrad
    return [
        ErrorInput(
            "weight-shape", lambda: f()(_t((3, 4)), _t(()), Tensor(np.zeros(3, np.int32)), _t((3,)), _t(())), ValueError
        ),
        ErrorInput("float-labels", lambda: f()(_t((3, 4)), _t(()), _t((3,)), _t((4,)), _t(())), TypeError, "labels"),
    ]


RECORDS += [
    OpRecord(
        "BCEWithLogitsLoss",
        {**_reductions(ops.BCEWithLogitsLoss)},
        _bce_samples,
        _bce_ref,
        args=(Arg(),) * 4,
        magnitude=_bce_mag,
        error_inputs=_bce_errors,
    ),
    OpRecord(
        "NLLLoss",
        {
            **_prefixed("mean", _outputs(ops.NLLLoss, ("loss", "total_weight"))),
            **_prefixed("sum", _outputs(lambda: ops.NLLLoss("sum"), ("loss",), (0,))),
            **_prefixed("none,ignore_index=2", _outputs(lambda: ops.NLLLoss("none", 2), ("loss", "total_weight"))),
        },
        _nll_samples,
        _nll_ref,
        args=(Arg(),) * 3,
        tols=_NORM_TOLS,
        error_inputs=_nll_errors,
    ),
    OpRecord(
        "NLLLossGrad",
        {**_reductions(ops.NLLLossGrad), "sum,ignore_index=1": lambda: ops.NLLLossGrad("sum", 1)},
        _nll_grad_samples,
        _nll_grad_ref,
        args=(Arg(),) * 5,
        error_inputs=_nll_grad_errors,
    ),
]
