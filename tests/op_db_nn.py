"""Sweep records (see op_db.py) for operators added after the first slice: nn ops.

Softmax, LogSoftmax, SoftmaxCrossEntropyWithLogits, SparseSoftmaxCrossEntropyWithLogits and the
optimizer updates ApplyGradientDescent, ApplyMomentum, Adam, ApplyRMSProp, ApplyCenteredRMSProp,
ApplyAdagrad and AdamWeightDecay.

The sweep compares one output Tensor per call and, for in-place ops, expects that output to be
the one Parameter the record names. So the two-output SoftmaxCrossEntropyWithLogits is swept
once per output (a variant per output), and ApplyMomentum and Adam, which write several
Parameters, are called through ``_InPlace``: it turns the written arguments into fresh Parameters,
checks that every in-place output is its Parameter, and returns the Parameter the variant names
(so ApplyMomentum's accumulation and Adam's m and v are compared with the reference too).
"""

from __future__ import annotations

import functools

import numpy as np
from op_db import LARGE, MATMUL_MKN, Arg, ErrorInput, OpRecord, Sample, _p, _t, make_array

from opforge import Parameter, Tensor, ops
from opforge import dtype as mstype
from opforge.dispatch.binding import written_positions
from opforge.errors import KernelError

# ---------------------------------------------------------------------------------------------
# NumPy references (float64)


def _softmax64(x, axis):
    if x.ndim == 0:
        return _softmax64(x.reshape(1), 0).reshape(())
    if x.size == 0:
        return x.copy()
    with np.errstate(all="ignore"):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return e / np.sum(e, axis=axis, keepdims=True)


def _log_softmax64(x, axis):
    if x.ndim == 0:
        return _log_softmax64(x.reshape(1), 0).reshape(())
    if x.size == 0:
        return x.copy()
    with np.errstate(all="ignore"):
        shifted = x - np.max(x, axis=axis, keepdims=True)
        return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def _axis_of(prim) -> int:
    axis = prim.axis
    return axis[0] if isinstance(axis, tuple) else axis


def _scalar(value) -> float:
    """A sample's scalar argument (Python number, 0-d or [1] array) as a float."""
    return float(np.asarray(value, np.float64).reshape(()))


# ---------------------------------------------------------------------------------------------
# Calling multi-output and multi-Parameter ops in the sweep


class _Output:
    """Calls ``prim`` and gives its output ``index`` (the sweep compares one Tensor)."""

    picks_output = True  # a call of ``prim`` itself, one output kept (the jit sweeps call ``prim``)

    def __init__(self, prim, index: int):
        self.__dict__.update(prim=prim, index=index)

    def __getattr__(self, name):
        return getattr(self.__dict__["prim"], name)

    def __call__(self, *args, **kwargs):
        out = self.prim(*args, **kwargs)
        assert isinstance(out, tuple) and len(out) == len(self.prim.output_names), f"{self.prim.name}: {out!r}"
        return out[self.index]


class _InPlace:
    """Calls ``prim`` with its argument positions ``writes`` turned into fresh Parameters (the
    sweep's Tensors are left untouched), checks that every in-place output is the Parameter it
    updates, and returns the Parameter at argument position ``param`` after the call."""

    def __init__(self, prim, writes: tuple, param: int):
        self.__dict__.update(prim=prim, writes=writes, param=param)

    def __getattr__(self, name):
        return getattr(self.__dict__["prim"], name)

    def __call__(self, *args):
        args = list(args)
        for i in self.writes:
            args[i] = Parameter(args[i], name=f"p{i}")  # a copy, on the Tensor's device
        out = self.prim(*args)
        outs = out if isinstance(out, tuple) else (out,)
        written = written_positions(self.prim._signature())
        for o, src in zip(range(len(outs)), written):  # output i is the i-th written argument
            assert outs[o] is args[src], f"{self.prim.name}: output {o} is not the Parameter it updates"
        return args[self.param]


# ---------------------------------------------------------------------------------------------
# Softmax, LogSoftmax

# (3, 33), (2, 1000), LARGE: rows of 32+ along the last axis take a GPU block each (not a multiple of it)
SOFTMAX_SHAPES = [
    (),
    (1,),
    (7,),
    (4, 5),
    (2, 1, 3),
    (2, 3, 4),
    (1, 1, 1, 3),
    (0,),
    (3, 0, 2),
    (0, 4),
    (3, 33),
    (2, 1000),
    (2, 2050),  # rows of a block's registers, not in packs for the 2- and 4-byte types
    (3, 4100),  # rows of a block of 1,024 threads, in packs
    LARGE,
]
SOFTMAX_LARGE_3D = (70, 4, 256)  # axis 1: the strided (column-block) path, in parallel

_INF, _NAN = np.inf, np.nan
# One row per case, softmax along the row.
SPECIAL_LOGITS = np.array(
    [
        [0.0, 1.0, 2.0, 3.0],
        [-_INF, 0.0, 1.0, -_INF],  # -inf: exp gives 0
        [-_INF, -_INF, -_INF, -_INF],  # all -inf: NaN, as the NumPy formula gives
        [_NAN, 0.0, 1.0, 2.0],
        [0.0, 1.0, _NAN, 2.0],
        [_INF, 0.0, 1.0, 2.0],  # +inf: NaN
        [1000.0, 0.0, -1000.0, 999.0],  # large logits: exp(x) would overflow without the max
        [-1000.0, -1000.5, -999.0, -1001.0],  # and underflow
        [5.0, 5.0, 5.0, 5.0],
    ]
)


def _softmax_samples(record, prim, ins, outs, rng):
    axis = _axis_of(prim)
    for shape in SOFTMAX_SHAPES + [SOFTMAX_LARGE_3D]:
        rank = max(len(shape), 1)
        if not -rank <= axis < rank:
            continue
        yield Sample((record.make_arg(0, shape, ins[0], rng),), desc=f"logits{list(shape)} axis={axis}")
    special = SPECIAL_LOGITS if axis in (1, -1) else SPECIAL_LOGITS.T  # each case lies along the axis
    yield Sample((special.astype(ins[0].np_dtype),), desc=f"-inf, NaN, +inf, large logits along axis {axis}")
    long = np.tile(SPECIAL_LOGITS, (1, 10))  # the same cases in rows of 40: the block-per-row path
    long = long if axis in (1, -1) else long.T
    yield Sample((long.astype(ins[0].np_dtype),), desc=f"-inf, NaN, +inf, large logits in rows of 40 along axis {axis}")


def _softmax_errors(prim_cls):
    name = prim_cls.__name__

    def errors():
        return [
            ErrorInput("axis-out-of-range", lambda: prim_cls(axis=2)(_t((2, 3))), ValueError, "axis"),
            ErrorInput("axis-out-of-range-negative", lambda: prim_cls(axis=-3)(_t((2, 3))), ValueError, "axis"),
            ErrorInput("axis-float", lambda: prim_cls(axis=1.0), TypeError, "axis"),
            ErrorInput("axis-bool", lambda: prim_cls(axis=True), TypeError, "axis"),
            ErrorInput("axis-list", lambda: prim_cls(axis=[0]), TypeError, "axis"),
            ErrorInput("axis-two-axes", lambda: prim_cls(axis=(0, 1)), ValueError, "tuple of one int"),
            ErrorInput("axis-empty-tuple", lambda: prim_cls(axis=()), ValueError, "tuple of one int"),
            ErrorInput("axis-tuple-of-float", lambda: prim_cls(axis=(0.0,)), TypeError, "axis"),
            ErrorInput("int32-logits", lambda: prim_cls()(_t((2, 3), mstype.int32)), TypeError, "logits"),
            ErrorInput("numpy-array-input", lambda: prim_cls()(np.ones((2, 3), np.float32)), TypeError, name),
            ErrorInput("wrong-arg-count", lambda: prim_cls()(_t((2,)), _t((2,))), TypeError),
        ]

    return errors


# ---------------------------------------------------------------------------------------------
# SoftmaxCrossEntropyWithLogits (dense labels)

SCE_SHAPES = [(1, 1), (3, 5), (8, 10), (2, 1), (0, 4), (4, 0), LARGE, (3, 1000)]  # 1000: a GPU block per row
SCE_SPECIAL_LOGITS = np.array(
    [
        [1000.0, 0.0, -1000.0, 999.0],
        [-1000.0, -1000.5, -999.0, -1001.0],
        [-_INF, 0.0, 1.0, 2.0],  # the label on -inf is > 0: the loss is +inf
        [2.0, 2.0, 2.0, 2.0],
    ]
)
SCE_SPECIAL_LABELS = np.array([[0.5, 0.0, 0.25, 0.25], [0.0, 0.0, 1.0, 0.0], [0.5, 0.5, 0.0, 0.0], [0.25] * 4])


def _probabilities(shape, rng) -> np.ndarray:
    p = rng.random(shape) + 0.05
    return p / p.sum(axis=-1, keepdims=True) if p.size else p


def _sce_samples(record, prim, ins, outs, rng):
    dtype = ins[0]
    for shape in SCE_SHAPES:
        logits = make_array(shape, dtype, rng, -4.0, 4.0)
        labels = _probabilities(shape, rng).astype(dtype.np_dtype)
        yield Sample((logits, labels), desc=f"logits{list(shape)} labels: probabilities")
    logits = make_array((6, 5), dtype, rng, -4.0, 4.0)
    onehot = np.eye(5)[rng.integers(0, 5, 6)].astype(dtype.np_dtype)
    yield Sample((logits, onehot), desc="logits[6, 5] labels: one-hot")
    yield Sample(
        (SCE_SPECIAL_LOGITS.astype(dtype.np_dtype), SCE_SPECIAL_LABELS.astype(dtype.np_dtype)),
        desc="large logits, -inf logits",
    )
    yield Sample(
        (
            np.tile(SCE_SPECIAL_LOGITS, (1, 25)).astype(dtype.np_dtype),
            (np.tile(SCE_SPECIAL_LABELS, (1, 25)) / 25).astype(dtype.np_dtype),
        ),
        desc="large logits, -inf logits in rows of 100 (a GPU block per row)",
    )


def _sce_ref(prim, logits, labels):
    log_softmax = _log_softmax64(logits, 1)
    if prim.index == 0:
        with np.errstate(all="ignore"):
            return -np.sum(labels * log_softmax, axis=1)
    return _softmax64(logits, 1) - labels


def _sce_errors():
    f = ops.SoftmaxCrossEntropyWithLogits
    return [
        ErrorInput("1d-logits", lambda: f()(_t((3,)), _t((3,))), ValueError, "2-D"),
        ErrorInput("3d-logits", lambda: f()(_t((2, 3, 4)), _t((2, 3, 4))), ValueError, "2-D"),
        ErrorInput("labels-shape", lambda: f()(_t((2, 3)), _t((2, 4))), ValueError, "labels"),
        ErrorInput("dtype-mismatch", lambda: f()(_t((2, 3)), _t((2, 3), mstype.float64)), TypeError, "same dtype"),
        ErrorInput("int-labels", lambda: f()(_t((2, 3)), _t((2, 3), mstype.int32)), TypeError, "labels"),
        ErrorInput("int-logits", lambda: f()(_t((2, 3), mstype.int32), _t((2, 3), mstype.int32)), TypeError, "logits"),
        ErrorInput("wrong-arg-count", lambda: f()(_t((2, 3))), TypeError),
    ]


# ---------------------------------------------------------------------------------------------
# SparseSoftmaxCrossEntropyWithLogits (class-index labels)

SPARSE_SHAPES = [(1, 1), (3, 5), (8, 10), (5, 1), (0, 4), (0, 0), (1000, 70), LARGE, (3, 1000)]


def _sparse_samples(record, prim, ins, outs, rng):
    dtype, label_dtype = ins
    for n, c in SPARSE_SHAPES:
        logits = make_array((n, c), dtype, rng, -4.0, 4.0)
        labels = rng.integers(0, max(c, 1), n).astype(label_dtype.np_dtype)
        yield Sample((logits, labels), desc=f"logits[{n}, {c}]")
    labels = np.array([2, 0, 1, 3], label_dtype.np_dtype)  # never on the -inf logit
    yield Sample((SCE_SPECIAL_LOGITS.astype(dtype.np_dtype), labels), desc="large logits, -inf logits")
    wide = np.tile(SCE_SPECIAL_LOGITS, (1, 25)).astype(dtype.np_dtype)  # rows of 100: a GPU block per row
    yield Sample((wide, (labels + 96).astype(label_dtype.np_dtype)), desc="large logits, -inf logits in rows of 100")
    c = 7
    yield Sample((make_array((3, c), dtype, rng), np.array([0, c - 1, 0], label_dtype.np_dtype)), desc="labels 0, C-1")


def _sparse_ref(prim, logits, labels):
    n, c = logits.shape
    if prim.is_grad:
        if n == 0:
            return np.zeros((0, c))
        return (_softmax64(logits, 1) - np.eye(c)[labels]) / n
    if n == 0:
        return np.array(np.nan)  # the mean of no losses
    return np.mean(-_log_softmax64(logits, 1)[np.arange(n), labels])


def _sparse_errors():
    f = ops.SparseSoftmaxCrossEntropyWithLogits

    def labels(values, dtype=np.int32):
        return Tensor(np.array(values, dtype))

    return [
        ErrorInput("1d-logits", lambda: f()(_t((3,)), labels([0, 1, 2])), ValueError, "2-D"),
        ErrorInput("2d-labels", lambda: f()(_t((2, 3)), labels([[0], [1]])), ValueError, "labels"),
        ErrorInput("batch-mismatch", lambda: f()(_t((2, 3)), labels([0, 1, 2])), ValueError, "labels"),
        ErrorInput("float-labels", lambda: f()(_t((2, 3)), _t((2,))), TypeError, "labels"),
        ErrorInput("int8-labels", lambda: f()(_t((2, 3)), labels([0, 1], np.int8)), TypeError, "labels"),
        ErrorInput("int-logits", lambda: f()(_t((2, 3), mstype.int32), labels([0, 1])), TypeError, "logits"),
        ErrorInput("is_grad-int", lambda: f(is_grad=1), TypeError, "is_grad"),
        ErrorInput("label-equals-C", lambda: f()(_t((2, 3)), labels([0, 3])), KernelError, "labels[1] = 3"),
        ErrorInput("label-negative", lambda: f()(_t((2, 3)), labels([-1, 0])), KernelError, "labels[0] = -1"),
        ErrorInput(
            "label-huge-int64",
            lambda: f(is_grad=True)(_t((2, 3)), labels([0, 2**40], np.int64)),
            KernelError,
            "[0, 3)",
        ),
        ErrorInput("labels-for-no-classes", lambda: f()(_t((2, 0)), labels([0, 0])), KernelError, "[0, 0)"),
        ErrorInput("wrong-arg-count", lambda: f()(_t((2, 3))), TypeError),
    ]


# ---------------------------------------------------------------------------------------------
# Optimizer updates

OPT_SHAPES = [(), (0,), (7,), (4, 5), (2, 3, 4), LARGE]


def _scalar_forms(value: float, dtype, i: int):
    """``value`` as a 0-d array, a [1] array or a Python float, in turn (all exact in float16)."""
    form = i % 3
    if form == 0:
        return np.array(value, dtype.np_dtype)
    if form == 1:
        return np.array([value], dtype.np_dtype)
    return value


def _gd_samples(record, prim, ins, outs, rng):
    dtype = ins[0]
    for i, shape in enumerate(OPT_SHAPES):
        var, delta = make_array(shape, dtype, rng), make_array(shape, dtype, rng)
        alpha = _scalar_forms(0.25, dtype, i)
        yield Sample((var, alpha, delta), desc=f"var{list(shape)} alpha={type(alpha).__name__}")
    yield Sample((make_array((3,), dtype, rng), 1, make_array((3,), dtype, rng)), desc="alpha=Python int")


def _gd_ref(prim, var, alpha, delta):
    return var - _scalar(alpha) * delta


def _gd_errors():
    f = ops.ApplyGradientDescent
    return [
        ErrorInput("var-not-parameter", lambda: f()(_t((2,)), 0.1, _t((2,))), TypeError, "Parameter"),
        ErrorInput("delta-shape", lambda: f()(_p((2, 3)), 0.1, _t((3, 2))), ValueError, "delta"),
        ErrorInput("alpha-shape", lambda: f()(_p((2,)), _t((2,)), _t((2,))), ValueError, "alpha"),
        ErrorInput("lossy-delta", lambda: f()(_p((2,)), 0.1, _t((2,), mstype.float64)), TypeError, "losslessly"),
        ErrorInput("alpha-str", lambda: f()(_p((2,)), "0.1", _t((2,))), TypeError, "alpha"),
        ErrorInput("int32-var", lambda: f()(_p((2,), mstype.int32), 1, _t((2,), mstype.int32)), TypeError, "var"),
        ErrorInput("wrong-arg-count", lambda: f()(_p((2,)), 0.1), TypeError, "missing"),
    ]


def _fused_gd_samples(record, prim, ins, outs, rng):
    ta, tb = prim.transpose_a, prim.transpose_b
    for i, (m, k, n) in enumerate([*MATMUL_MKN, (8, 16, 64)]):  # [8, 64]: C computed transposed (NT)
        a = make_array((k, m) if ta else (m, k), ins[0], rng, -2, 2)
        b = make_array((n, k) if tb else (k, n), ins[0], rng, -2, 2)
        var = make_array((m, n), ins[0], rng)
        yield Sample((var, _scalar_forms(0.25, ins[0], i), a, b), desc=f"m={m} k={k} n={n}")


def _fused_gd_operands(prim, a, b):
    return (a.T if prim.transpose_a else a), (b.T if prim.transpose_b else b)


def _fused_gd_ref(prim, var, alpha, a, b):
    a, b = _fused_gd_operands(prim, a, b)
    return var - _scalar(alpha) * (a @ b)


def _fused_gd_mag(prim, var, alpha, a, b):
    a, b = _fused_gd_operands(prim, np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64)))
    return np.abs(var) + abs(_scalar(alpha)) * (a @ b)


def _fused_gd_errors():
    f = ops.FusedMatMulApplyGradientDescent
    return [
        ErrorInput("var-not-parameter", lambda: f()(_t((2, 2)), 0.1, _t((2, 3)), _t((3, 2))), TypeError, "Parameter"),
        ErrorInput("var-shape", lambda: f()(_p((2, 3)), 0.1, _t((2, 3)), _t((3, 2))), ValueError, "var"),
        ErrorInput("inner-mismatch", lambda: f()(_p((2, 2)), 0.1, _t((2, 3)), _t((4, 2))), ValueError, "inner"),
        ErrorInput("alpha-shape", lambda: f()(_p((2, 2)), _t((2,)), _t((2, 3)), _t((3, 2))), ValueError, "alpha"),
        ErrorInput(
            "float16",
            lambda: f()(_p((2, 2), mstype.float16), 0.1, *[_t(s, mstype.float16) for s in [(2, 3), (3, 2)]]),
            TypeError,
            "Float16",
        ),
        ErrorInput("transpose_a-int", lambda: f(transpose_a=1), TypeError, "transpose_a"),
    ]


def _momentum_samples(record, prim, ins, outs, rng):
    dtype = ins[0]
    for i, shape in enumerate(OPT_SHAPES):
        var, acc, grad = (make_array(shape, dtype, rng) for _ in range(3))
        lr, momentum = _scalar_forms(0.125, dtype, i), _scalar_forms(0.875, dtype, i + 1)
        yield Sample((var, acc, lr, grad, momentum), desc=f"variable{list(shape)}")


def _momentum_ref(prim, variable, accumulation, learning_rate, gradient, momentum):
    lr, mom = _scalar(learning_rate), _scalar(momentum)
    grad = gradient * prim.gradient_scale
    acc = accumulation * mom + grad
    if prim.param == 1:
        return acc
    return variable - lr * (grad + mom * acc if prim.use_nesterov else acc)


def _momentum_errors():
    f = ops.ApplyMomentum
    g = _t((2,))
    return [
        ErrorInput("variable-not-parameter", lambda: f()(_t((2,)), _p((2,)), 0.1, g, 0.9), TypeError, "Parameter"),
        ErrorInput(
            "accumulation-not-parameter", lambda: f()(_p((2,)), _t((2,)), 0.1, g, 0.9), TypeError, "accumulation"
        ),
        ErrorInput(
            "accumulation-dtype",
            lambda: f()(_p((2,)), _p((2,), mstype.float16), 0.1, g, 0.9),
            TypeError,
            "dtype of 'variable'",
        ),
        ErrorInput("accumulation-shape", lambda: f()(_p((2,)), _p((3,)), 0.1, g, 0.9), ValueError, "accumulation"),
        ErrorInput("gradient-shape", lambda: f()(_p((2,)), _p((2,)), 0.1, _t((2, 1)), 0.9), ValueError, "gradient"),
        ErrorInput("learning_rate-shape", lambda: f()(_p((2,)), _p((2,)), g, g, 0.9), ValueError, "learning_rate"),
        ErrorInput("momentum-str", lambda: f()(_p((2,)), _p((2,)), 0.1, g, "0.9"), TypeError, "momentum"),
        ErrorInput(
            "lossy-gradient", lambda: f()(_p((2,)), _p((2,)), 0.1, _t((2,), mstype.float64), 0.9), TypeError, "lossless"
        ),
        ErrorInput("use_nesterov-str", lambda: f(use_nesterov="yes"), TypeError, "use_nesterov"),
        ErrorInput("use_locking-int", lambda: f(use_locking=0), TypeError, "use_locking"),
        ErrorInput("gradient_scale-int", lambda: f(gradient_scale=1), TypeError, "gradient_scale"),
        ErrorInput("wrong-arg-count", lambda: f()(_p((2,)), _p((2,)), 0.1, g), TypeError, "missing"),
    ]


# Values exact in float16, so Python floats (converted to the dtype) match the float64 reference.
ADAM_SCALARS = {
    "beta1_power": 0.875**2,
    "beta2_power": 0.96875**2,
    "lr": 0.0625,
    "beta1": 0.875,
    "beta2": 0.96875,
    "epsilon": 2.0**-20,
}


def _adam_samples(record, prim, ins, outs, rng):
    dtype = ins[0]
    for i, shape in enumerate(OPT_SHAPES):
        var, m, grad = (
            make_array(shape, dtype, rng),
            make_array(shape, dtype, rng, -1, 1),
            make_array(shape, dtype, rng),
        )
        v = make_array(shape, dtype, rng, 0.01, 1.0)
        scalars = [_scalar_forms(value, dtype, i + k) for k, value in enumerate(ADAM_SCALARS.values())]
        yield Sample((var, m, v, *scalars, grad), desc=f"var{list(shape)}")


def _adam_ref(prim, var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, gradient):
    b1p, b2p, lr, b1, b2, eps = (_scalar(s) for s in (beta1_power, beta2_power, lr, beta1, beta2, epsilon))
    lr_t = lr * np.sqrt(1.0 - b2p) / (1.0 - b1p)
    m = m + (gradient - m) * (1.0 - b1)
    v = v + (gradient * gradient - v) * (1.0 - b2)
    step = m * b1 + (1.0 - b1) * gradient if prim.use_nesterov else m
    var = var - lr_t * step / (np.sqrt(v) + eps)
    return (var, m, v)[prim.param]


def _adam_errors():
    f = ops.Adam

    def call(var=None, m=None, v=None, beta1=0.9, gradient=None, prim=None):
        var = _p((2,)) if var is None else var
        m = _p((2,)) if m is None else m
        v = _p((2,)) if v is None else v
        gradient = _t((2,)) if gradient is None else gradient
        return (prim or f())(var, m, v, 0.9, 0.999, 0.01, beta1, 0.999, 1e-8, gradient)

    return [
        ErrorInput("var-not-parameter", lambda: call(var=_t((2,))), TypeError, "Parameter"),
        ErrorInput("m-not-parameter", lambda: call(m=_t((2,))), TypeError, "'m'"),
        ErrorInput("v-not-parameter", lambda: call(v=_t((2,))), TypeError, "'v'"),
        ErrorInput("m-dtype", lambda: call(m=_p((2,), mstype.float16)), TypeError, "dtype of 'var'"),
        ErrorInput("v-dtype", lambda: call(v=_p((2,), mstype.float64)), TypeError, "dtype of 'var'"),
        ErrorInput("v-shape", lambda: call(v=_p((3,))), ValueError, "'v'"),
        ErrorInput("gradient-shape", lambda: call(gradient=_t((2, 2))), ValueError, "gradient"),
        ErrorInput("beta1-shape", lambda: call(beta1=_t((2,))), ValueError, "beta1"),
        ErrorInput("beta1-str", lambda: call(beta1="0.9"), TypeError, "beta1"),
        ErrorInput(
            "int32-var",
            lambda: f()(*[_p((2,), mstype.int32) for _ in range(3)], 1, 1, 1, 1, 1, 1, _t((2,), mstype.int32)),
            TypeError,
            "var",
        ),
        ErrorInput("use_nesterov-int", lambda: f(use_nesterov=1), TypeError, "use_nesterov"),
        ErrorInput("use_locking-str", lambda: f(use_locking="no"), TypeError, "use_locking"),
        ErrorInput("wrong-arg-count", lambda: f()(_p((2,)), _p((2,)), _p((2,))), TypeError, "missing"),
    ]


# ---------------------------------------------------------------------------------------------
# The records


def _softmax_variants(prim_cls):
    return {
        "axis=-1": prim_cls,
        "axis=0": lambda: prim_cls(axis=0),
        "axis=1": lambda: prim_cls(axis=1),
        "axis=(-2,)": lambda: prim_cls(axis=(-2,)),
    }


def _momentum(param, **attrs):
    return _InPlace(ops.ApplyMomentum(**attrs), writes=(0, 1), param=param)


def _adam(param, **attrs):
    return _InPlace(ops.Adam(**attrs), writes=(0, 1, 2), param=param)


RECORDS: list = [
    OpRecord(
        "Softmax",
        _softmax_variants(ops.Softmax),
        _softmax_samples,
        lambda prim, x: _softmax64(x, _axis_of(prim)),
        error_inputs=_softmax_errors(ops.Softmax),
    ),
    OpRecord(
        "LogSoftmax",
        _softmax_variants(ops.LogSoftmax),
        _softmax_samples,
        lambda prim, x: _log_softmax64(x, _axis_of(prim)),
        error_inputs=_softmax_errors(ops.LogSoftmax),
    ),
    OpRecord(
        "SoftmaxCrossEntropyWithLogits",
        {
            "loss": lambda: _Output(ops.SoftmaxCrossEntropyWithLogits(), 0),
            "backprop": lambda: _Output(ops.SoftmaxCrossEntropyWithLogits(), 1),
        },
        _sce_samples,
        _sce_ref,
        args=(Arg(),) * 2,
        error_inputs=_sce_errors,
    ),
    OpRecord(
        "SparseSoftmaxCrossEntropyWithLogits",
        {
            "is_grad=False": ops.SparseSoftmaxCrossEntropyWithLogits,
            "is_grad=True": lambda: ops.SparseSoftmaxCrossEntropyWithLogits(is_grad=True),
        },
        _sparse_samples,
        _sparse_ref,
        args=(Arg(),) * 2,
        error_inputs=_sparse_errors,
    ),
    OpRecord(
        "ApplyGradientDescent",
        {"": ops.ApplyGradientDescent},
        _gd_samples,
        _gd_ref,
        args=(Arg(),) * 3,
        params=(0,),
        error_inputs=_gd_errors,
    ),
    OpRecord(
        "FusedMatMulApplyGradientDescent",
        {
            "NN": ops.FusedMatMulApplyGradientDescent,
            "TN": lambda: ops.FusedMatMulApplyGradientDescent(transpose_a=True),
            "NT": lambda: ops.FusedMatMulApplyGradientDescent(transpose_b=True),
            "TT": lambda: ops.FusedMatMulApplyGradientDescent(transpose_a=True, transpose_b=True),
        },
        _fused_gd_samples,
        _fused_gd_ref,
        args=(Arg(),) * 4,
        params=(0,),
        magnitude=_fused_gd_mag,
        mag_tols={"Float32": 1e-5},  # BLAS sums k products in float32
        error_inputs=_fused_gd_errors,
    ),
    OpRecord(
        "ApplyMomentum",
        {
            "variable": lambda: _momentum(0),
            "accumulation": lambda: _momentum(1),
            "use_nesterov=True/variable": lambda: _momentum(0, use_nesterov=True),
            "use_nesterov=True/accumulation": lambda: _momentum(1, use_nesterov=True),
            "gradient_scale=0.5/variable": lambda: _momentum(0, gradient_scale=0.5),
            "gradient_scale=0.5,use_nesterov=True/variable": lambda: _momentum(
                0, use_nesterov=True, gradient_scale=0.5
            ),
        },
        _momentum_samples,
        _momentum_ref,
        args=(Arg(),) * 5,
        error_inputs=_momentum_errors,
    ),
    OpRecord(
        "Adam",
        {
            f"{'use_nesterov=True/' if nesterov else ''}{name}": functools.partial(_adam, param, use_nesterov=nesterov)
            for nesterov in (False, True)
            for param, name in enumerate(("var", "m", "v"))
        },
        _adam_samples,
        _adam_ref,
        args=(Arg(),) * 10,
        error_inputs=_adam_errors,
    ),
]


# -- ApplyRMSProp, ApplyCenteredRMSProp, ApplyAdagrad, AdamWeightDecay ---------------------------

# Scalars exact in float16, so Python floats (converted to the dtype) match the float64 reference.
RMS_SCALARS = {"learning_rate": 0.0625, "decay": 0.875, "momentum": 0.5, "epsilon": 2.0**-10}
AWD_SCALARS = {"lr": 0.0625, "beta1": 0.875, "beta2": 0.96875, "epsilon": 2.0**-20, "decay": 0.125}


def _scalar_args(values: dict, dtype, i: int) -> list:
    return [_scalar_forms(value, dtype, i + k) for k, value in enumerate(values.values())]


def _rms_prop_samples(record, prim, ins, outs, rng):
    dtype = ins[0]
    for i, shape in enumerate(OPT_SHAPES):
        var, mom, grad = (make_array(shape, dtype, rng) for _ in range(3))
        ms = make_array(shape, dtype, rng, 0.01, 1.0)
        lr, decay, momentum, eps = _scalar_args(RMS_SCALARS, dtype, i)
        yield Sample((var, ms, mom, lr, grad, decay, momentum, eps), desc=f"var{list(shape)}")


def _rms_prop_ref(prim, var, ms, mom, lr, grad, decay, momentum, epsilon):
    lr, decay, momentum, epsilon = (_scalar(s) for s in (lr, decay, momentum, epsilon))
    ms = ms * decay + (1.0 - decay) * grad * grad
    mom = mom * momentum + lr * grad / np.sqrt(ms + epsilon)
    return (var - mom, ms, mom)[prim.param]


def _centered_samples(record, prim, ins, outs, rng):
    dtype = ins[0]
    for i, shape in enumerate(OPT_SHAPES):
        var, mom, grad = (make_array(shape, dtype, rng) for _ in range(3))
        mg = make_array(shape, dtype, rng, -1.0, 1.0)
        # mean_square >= mean_gradient ** 2 (a variance), so ms - mg ** 2 + epsilon stays positive.
        ms = np.asarray(mg.astype(np.float64) ** 2 + make_array(shape, dtype, rng, 0.05, 1.0)).astype(mg.dtype)
        lr, decay, momentum, eps = _scalar_args(RMS_SCALARS, dtype, i)
        yield Sample((var, mg, ms, mom, grad, lr, decay, momentum, eps), desc=f"var{list(shape)}")


def _centered_ref(prim, var, mg, ms, mom, grad, lr, decay, momentum, epsilon):
    lr, decay, momentum, epsilon = (_scalar(s) for s in (lr, decay, momentum, epsilon))
    mg = mg * decay + (1.0 - decay) * grad
    ms = ms * decay + (1.0 - decay) * grad * grad
    mom = mom * momentum + lr * grad / np.sqrt(ms - mg * mg + epsilon)
    return (var - mom, mg, ms, mom)[prim.param]


def _adagrad_samples(record, prim, ins, outs, rng):
    dtype = ins[0]
    for i, shape in enumerate(OPT_SHAPES):
        var, grad = make_array(shape, dtype, rng), make_array(shape, dtype, rng)
        accum = make_array(shape, dtype, rng, 0.1, 1.0)
        yield Sample((var, accum, _scalar_forms(0.125, dtype, i), grad), desc=f"var{list(shape)}")


def _adagrad_ref(prim, var, accum, lr, grad):
    if prim.update_slots:
        accum = accum + grad * grad
    return (var - _scalar(lr) * grad / np.sqrt(accum), accum)[prim.param]


def _awd_samples(record, prim, ins, outs, rng):
    dtype = ins[0]
    for i, shape in enumerate(OPT_SHAPES):
        var, m, grad = (
            make_array(shape, dtype, rng),
            make_array(shape, dtype, rng, -1, 1),
            make_array(shape, dtype, rng),
        )
        v = make_array(shape, dtype, rng, 0.01, 1.0)
        yield Sample((var, m, v, *_scalar_args(AWD_SCALARS, dtype, i), grad), desc=f"var{list(shape)}")


def _awd_ref(prim, var, m, v, lr, beta1, beta2, epsilon, decay, gradient):
    lr, b1, b2, eps, decay = (_scalar(s) for s in (lr, beta1, beta2, epsilon, decay))
    m = b1 * m + (1.0 - b1) * gradient
    v = b2 * v + (1.0 - b2) * gradient * gradient
    return (var - lr * (m / (np.sqrt(v) + eps) + decay * var), m, v)[prim.param]


def _new_optimizer_errors(prim_cls, n_states: int, build, attr: str, scalar: str):
    """Errors every one of these updates raises: ``build(states, grad, scalar_value)`` calls the op with
    ``states`` (var first) and one scalar argument (``scalar``) replaced."""
    states = lambda *kinds: [_p((2,)) if k == "p" else k for k in kinds]  # noqa: E731
    good = ["p"] * n_states
    return [
        ErrorInput(
            "var-not-parameter",
            lambda: build(prim_cls(), states(_t((2,)), *good[1:]), _t((2,)), 0.1),
            TypeError,
            "Parameter",
        ),
        ErrorInput(
            "state-dtype",
            lambda: build(prim_cls(), states(*good[:-1], _p((2,), mstype.float16)), _t((2,)), 0.1),
            TypeError,
            "dtype of 'var'",
        ),
        ErrorInput(
            "state-shape",
            lambda: build(prim_cls(), states(*good[:-1], _p((3,))), _t((2,)), 0.1),
            ValueError,
            "shape of 'var'",
        ),
        ErrorInput(
            "grad-shape", lambda: build(prim_cls(), states(*good), _t((2, 1)), 0.1), ValueError, "shape of 'var'"
        ),
        ErrorInput(f"{scalar}-shape", lambda: build(prim_cls(), states(*good), _t((2,)), _t((2,))), ValueError, scalar),
        ErrorInput(f"{scalar}-str", lambda: build(prim_cls(), states(*good), _t((2,)), "0.1"), TypeError, scalar),
        ErrorInput(f"{attr}-int", lambda: prim_cls(**{attr: 1}), TypeError, attr),
        ErrorInput("wrong-arg-count", lambda: prim_cls()(_p((2,)), _p((2,))), TypeError, "missing"),
    ]


def _rms_prop_errors():
    return _new_optimizer_errors(
        ops.ApplyRMSProp, 3, lambda f, s, g, x: f(*s, 0.1, g, x, 0.5, 1e-10), "use_locking", "decay"
    )


def _centered_errors():
    return _new_optimizer_errors(
        ops.ApplyCenteredRMSProp, 4, lambda f, s, g, x: f(*s, g, 0.1, 0.9, x, 1e-10), "use_locking", "momentum"
    )


def _adagrad_errors():
    return _new_optimizer_errors(ops.ApplyAdagrad, 2, lambda f, s, g, x: f(*s, x, g), "update_slots", "lr")


def _awd_errors():
    return _new_optimizer_errors(
        ops.AdamWeightDecay, 3, lambda f, s, g, x: f(*s, 0.01, 0.9, 0.999, 1e-6, x, g), "use_locking", "decay"
    )


def _in_place_variants(prim_cls, names: tuple, attrs=({},)) -> dict:
    """One variant per written Parameter (and attr set): the sweep compares that Parameter."""
    writes = tuple(range(len(names)))
    variants = {}
    for attr in attrs:
        prefix = "".join(f"{k}={v}/" for k, v in attr.items())
        for param, name in enumerate(names):
            variants[prefix + name] = functools.partial(
                lambda p, a: _InPlace(prim_cls(**a), writes=writes, param=p), param, attr
            )
    return variants


RECORDS += [
    OpRecord(
        "ApplyRMSProp",
        _in_place_variants(ops.ApplyRMSProp, ("var", "mean_square", "moment")),
        _rms_prop_samples,
        _rms_prop_ref,
        args=(Arg(),) * 8,
        error_inputs=_rms_prop_errors,
    ),
    OpRecord(
        "ApplyCenteredRMSProp",
        _in_place_variants(ops.ApplyCenteredRMSProp, ("var", "mean_gradient", "mean_square", "moment")),
        _centered_samples,
        _centered_ref,
        args=(Arg(),) * 9,
        error_inputs=_centered_errors,
    ),
    OpRecord(
        "ApplyAdagrad",
        _in_place_variants(ops.ApplyAdagrad, ("var", "accum"), ({}, {"update_slots": False})),
        _adagrad_samples,
        _adagrad_ref,
        args=(Arg(),) * 4,
        error_inputs=_adagrad_errors,
    ),
    OpRecord(
        "AdamWeightDecay",
        _in_place_variants(ops.AdamWeightDecay, ("var", "m", "v")),
        _awd_samples,
        _awd_ref,
        args=(Arg(),) * 9,
        error_inputs=_awd_errors,
    ),
]


# -- LSTMLayer / LSTMLayerGrad: one layer and direction over a sequence ---------------------------

LSTM_SHAPES = [(5, 3, 4, 6), (1, 1, 1, 1), (0, 2, 3, 4), (7, 2, 3, 33), (3, 2, 0, 4), (2, 0, 3, 4), (2, 2, 3, 0)]
# (seq, batch, input, hidden): empty inputs, batches and hidden states included
_LSTM_OUT = ("y", "h_n", "c_n", "gates", "c")
_LSTM_GRAD_OUT = ("dx", "dh0", "dc0", "dw_ih", "dw_hh", "dbias")


def _sigmoid64(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm_forward_ref(x, h0, c0, w_ih, w_hh, bias, reverse=False):
    """NumPy's LSTM layer: (y, h_n, c_n, activated gates, c) in float64."""
    seq, hidden = x.shape[0], h0.shape[1]
    y = np.zeros((seq, *h0.shape))
    gates = np.zeros((seq, h0.shape[0], 4 * hidden))
    cs = np.zeros_like(y)
    h, c = h0.astype(np.float64), c0.astype(np.float64)
    for k in range(seq):
        t = seq - 1 - k if reverse else k
        z = x[t] @ w_ih.T + h @ w_hh.T + bias
        i, f, o = _sigmoid64(z[:, :hidden]), _sigmoid64(z[:, hidden : 2 * hidden]), _sigmoid64(z[:, 3 * hidden :])
        g = np.tanh(z[:, 2 * hidden : 3 * hidden])
        c = f * c + i * g
        h = o * np.tanh(c)
        y[t], cs[t], gates[t] = h, c, np.concatenate([i, f, g, o], axis=1)
    return y, h, c, gates, cs


def lstm_backward_ref(x, h0, c0, w_ih, w_hh, y, gates, cs, dy, dh_n, dc_n, reverse=False):
    seq, hidden = x.shape[0], h0.shape[1]
    order = list(range(seq - 1, -1, -1)) if reverse else list(range(seq))
    dx, dw_ih, dw_hh = np.zeros_like(x, np.float64), np.zeros_like(w_ih, np.float64), np.zeros_like(w_hh, np.float64)
    dbias = np.zeros(4 * hidden)
    dh, dc = dh_n.astype(np.float64), dc_n.astype(np.float64)
    for k in range(seq - 1, -1, -1):
        t = order[k]
        h_prev = h0 if k == 0 else y[order[k - 1]]
        c_prev = c0 if k == 0 else cs[order[k - 1]]
        i, f, g, o = (gates[t][:, j * hidden : (j + 1) * hidden] for j in range(4))
        tc = np.tanh(cs[t])
        dh_t = dy[t] + dh
        dct = dc + dh_t * o * (1 - tc * tc)
        dz = np.concatenate([dct * g * i * (1 - i), dct * c_prev * f * (1 - f), dct * i * (1 - g * g),
                             dh_t * tc * o * (1 - o)], axis=1)  # fmt: skip
        dc = dct * f
        dh = dz @ w_hh
        dx[t] = dz @ w_ih
        dw_ih += dz.T @ x[t]
        dw_hh += dz.T @ h_prev
        dbias += dz.sum(0)
    return dx, dh, dc, dw_ih, dw_hh, dbias


def _lstm_inputs(shape, dtype, rng):
    seq, batch, inp, hidden = shape
    sizes = [
        (seq, batch, inp),
        (batch, hidden),
        (batch, hidden),
        (4 * hidden, inp),
        (4 * hidden, hidden),
        (4 * hidden,),
    ]
    return [make_array(s, dtype, rng, -1.0, 1.0) for s in sizes]


def _lstm_samples(record, prim, ins, outs, rng):
    for shape in LSTM_SHAPES:
        yield Sample(tuple(_lstm_inputs(shape, ins[0], rng)), desc=f"(seq, batch, input, hidden)={shape}")


def _lstm_grad_samples(record, prim, ins, outs, rng):
    for shape in LSTM_SHAPES:
        x, h0, c0, w_ih, w_hh, bias = _lstm_inputs(shape, ins[0], rng)
        y, _, _, gates, cs = lstm_forward_ref(x, h0, c0, w_ih, w_hh, bias, prim.reverse)
        seq, batch, _, hidden = shape
        dy = make_array((seq, batch, hidden), ins[0], rng)
        dh_n, dc_n = make_array((batch, hidden), ins[0], rng), make_array((batch, hidden), ins[0], rng)
        saved = [a.astype(ins[0].np_dtype) for a in (y, gates, cs)]
        yield Sample((x, h0, c0, w_ih, w_hh, *saved, dy, dh_n, dc_n), desc=f"(seq, batch, input, hidden)={shape}")


def _lstm_errors():
    f = ops.LSTMLayer
    good = [(5, 3, 4), (3, 6), (3, 6), (24, 4), (24, 6), (24,)]
    bad_bias = [*good[:5], (23,)]
    return [
        ErrorInput("bias-shape", lambda: f()(*[_t(s) for s in bad_bias]), ValueError, "'bias' must have shape"),
        ErrorInput("x-rank", lambda: f()(*[_t(s) for s in [(5, 4), *good[1:]]]), ValueError, "'x' must be"),
        ErrorInput("int", lambda: f()(*[_t(s, mstype.int32) for s in good]), TypeError, "LSTMLayer"),
        ErrorInput("reverse", lambda: f(reverse=1), TypeError, "reverse"),
    ]


def _no_dx_variants(make, names) -> dict:
    """A layer grad's ``compute_dx=False`` variants, one per output: dx is zeros, the rest as computed."""
    return {f"no_dx,{name}": (lambda k=k: _Output(make(), k)) for k, name in enumerate(names)}


def _layer_grad_output(prim, grads):
    """Output ``prim.index`` of a layer grad's reference: dx is zeros when the primitive does not compute it."""
    if prim.index == 0 and not prim.compute_dx:
        return np.zeros_like(grads[0])
    return grads[prim.index]


RECORDS += [
    OpRecord(
        "LSTMLayer",
        {
            **{f"{name}": (lambda k=k: _Output(ops.LSTMLayer(), k)) for k, name in enumerate(_LSTM_OUT)},
            **{
                f"reverse,{name}": (lambda k=k: _Output(ops.LSTMLayer(True), k)) for k, name in enumerate(_LSTM_OUT[:3])
            },
        },
        _lstm_samples,
        lambda prim, *args: lstm_forward_ref(*args, reverse=prim.reverse)[prim.index],
        args=(Arg(),) * 6,
        tols={"Float32": (2e-5, 2e-6)},
        error_inputs=_lstm_errors,
    ),
    OpRecord(
        "LSTMLayerGrad",
        {
            **{f"{name}": (lambda k=k: _Output(ops.LSTMLayerGrad(), k)) for k, name in enumerate(_LSTM_GRAD_OUT)},
            **{
                f"reverse,{name}": (lambda k=k: _Output(ops.LSTMLayerGrad(True), k))
                for k, name in enumerate(_LSTM_GRAD_OUT)
            },
            **_no_dx_variants(lambda: ops.LSTMLayerGrad(compute_dx=False), _LSTM_GRAD_OUT),
        },
        _lstm_grad_samples,
        lambda prim, *args: _layer_grad_output(prim, lstm_backward_ref(*args, reverse=prim.reverse)),
        args=(Arg(),) * 11,
        tols={"Float32": (1e-4, 1e-5)},
    ),
]


# -- GRULayer / RNNLayer and their grads ---------------------------------------------------------

RNN_SHAPES = LSTM_SHAPES
_GRU_OUT = ("y", "h_n", "gates")
_GRU_GRAD_OUT = ("dx", "dh0", "dw_ih", "dw_hh", "db_ih", "db_hh")
_RNN_GRAD_OUT = ("dx", "dh0", "dw_ih", "dw_hh", "dbias")


def _order(seq, reverse):
    return list(range(seq - 1, -1, -1)) if reverse else list(range(seq))


def gru_forward_ref(x, h0, w_ih, w_hh, b_ih, b_hh, reverse=False):
    """NumPy's GRU layer (gates r, z, n): (y, h_n, saved gates [r, z, n, h W_hn^T + b_hn]) in float64."""
    seq, hidden = x.shape[0], h0.shape[1]
    y = np.zeros((seq, *h0.shape))
    gates = np.zeros((seq, h0.shape[0], 4 * hidden))
    h = h0.astype(np.float64)
    for t in _order(seq, reverse):
        gi, gh = x[t] @ w_ih.T + b_ih, h @ w_hh.T + b_hh
        r = _sigmoid64(gi[:, :hidden] + gh[:, :hidden])
        z = _sigmoid64(gi[:, hidden : 2 * hidden] + gh[:, hidden : 2 * hidden])
        n = np.tanh(gi[:, 2 * hidden :] + r * gh[:, 2 * hidden :])
        h = (1 - z) * n + z * h
        y[t], gates[t] = h, np.concatenate([r, z, n, gh[:, 2 * hidden :]], axis=1)
    return y, h, gates


def gru_backward_ref(x, h0, w_ih, w_hh, y, gates, dy, dh_n, reverse=False):
    seq, hidden = x.shape[0], h0.shape[1]
    order = _order(seq, reverse)
    dx, dw_ih, dw_hh = np.zeros_like(x, np.float64), np.zeros_like(w_ih, np.float64), np.zeros_like(w_hh, np.float64)
    db_ih, db_hh = np.zeros(3 * hidden), np.zeros(3 * hidden)
    dh = dh_n.astype(np.float64)
    for k in range(seq - 1, -1, -1):
        t = order[k]
        h_prev = h0 if k == 0 else y[order[k - 1]]
        r, z, n, ghn = (gates[t][:, j * hidden : (j + 1) * hidden] for j in range(4))
        dh_t = dy[t] + dh
        dn = dh_t * (1 - z) * (1 - n * n)
        dz = dh_t * (h_prev - n) * z * (1 - z)
        dr = dn * ghn * r * (1 - r)
        dgi, dgh = np.concatenate([dr, dz, dn], axis=1), np.concatenate([dr, dz, dn * r], axis=1)
        dh = dh_t * z + dgh @ w_hh
        dx[t] = dgi @ w_ih
        dw_ih += dgi.T @ x[t]
        dw_hh += dgh.T @ h_prev
        db_ih += dgi.sum(0)
        db_hh += dgh.sum(0)
    return dx, dh, dw_ih, dw_hh, db_ih, db_hh


def _rnn_act(z, nonlinearity):
    return np.maximum(z, 0) if nonlinearity == "relu" else np.tanh(z)


def rnn_forward_ref(x, h0, w_ih, w_hh, bias, reverse=False, nonlinearity="tanh"):
    """NumPy's plain RNN layer: (y, h_n) in float64."""
    y = np.zeros((x.shape[0], *h0.shape))
    h = h0.astype(np.float64)
    for t in _order(x.shape[0], reverse):
        h = _rnn_act(x[t] @ w_ih.T + h @ w_hh.T + bias, nonlinearity)
        y[t] = h
    return y, h


def rnn_backward_ref(x, h0, w_ih, w_hh, y, dy, dh_n, reverse=False, nonlinearity="tanh"):
    order = _order(x.shape[0], reverse)
    dx, dw_ih, dw_hh = np.zeros_like(x, np.float64), np.zeros_like(w_ih, np.float64), np.zeros_like(w_hh, np.float64)
    dbias = np.zeros(w_ih.shape[0])
    dh = dh_n.astype(np.float64)
    for k in range(x.shape[0] - 1, -1, -1):
        t = order[k]
        h_prev = h0 if k == 0 else y[order[k - 1]]
        d_act = (y[t] > 0).astype(np.float64) if nonlinearity == "relu" else 1 - y[t] * y[t]
        dz = (dy[t] + dh) * d_act
        dh = dz @ w_hh
        dx[t] = dz @ w_ih
        dw_ih += dz.T @ x[t]
        dw_hh += dz.T @ h_prev
        dbias += dz.sum(0)
    return dx, dh, dw_ih, dw_hh, dbias


def rnn_layer_inputs(shape, n_gates, n_vectors, dtype, rng):
    """x, h0, w_ih, w_hh and n_vectors bias vectors of a GRU (n_gates 3) or RNN (1) layer in U(-1, 1)."""
    seq, batch, inp, hidden = shape
    sizes = [(seq, batch, inp), (batch, hidden), (n_gates * hidden, inp), (n_gates * hidden, hidden)]
    sizes += [(n_gates * hidden,)] * n_vectors
    return [make_array(s, dtype, rng, -1.0, 1.0) for s in sizes]


def _gru_samples(record, prim, ins, outs, rng):
    for shape in RNN_SHAPES:
        yield Sample(tuple(rnn_layer_inputs(shape, 3, 2, ins[0], rng)), desc=f"(seq, batch, input, hidden)={shape}")


def _gru_grad_samples(record, prim, ins, outs, rng):
    for shape in RNN_SHAPES:
        x, h0, w_ih, w_hh, b_ih, b_hh = rnn_layer_inputs(shape, 3, 2, ins[0], rng)
        y, _, gates = gru_forward_ref(x, h0, w_ih, w_hh, b_ih, b_hh, prim.reverse)
        seq, batch, _, hidden = shape
        dy, dh_n = make_array((seq, batch, hidden), ins[0], rng), make_array((batch, hidden), ins[0], rng)
        saved = [a.astype(ins[0].np_dtype) for a in (y, gates)]
        yield Sample((x, h0, w_ih, w_hh, *saved, dy, dh_n), desc=f"(seq, batch, input, hidden)={shape}")


def _rnn_samples(record, prim, ins, outs, rng):
    for shape in RNN_SHAPES:
        yield Sample(tuple(rnn_layer_inputs(shape, 1, 1, ins[0], rng)), desc=f"(seq, batch, input, hidden)={shape}")


def _rnn_grad_samples(record, prim, ins, outs, rng):
    for shape in RNN_SHAPES:
        x, h0, w_ih, w_hh, bias = rnn_layer_inputs(shape, 1, 1, ins[0], rng)
        y, _ = rnn_forward_ref(x, h0, w_ih, w_hh, bias, prim.reverse, prim.nonlinearity)
        seq, batch, _, hidden = shape
        dy, dh_n = make_array((seq, batch, hidden), ins[0], rng), make_array((batch, hidden), ins[0], rng)
        yield Sample(
            (x, h0, w_ih, w_hh, y.astype(ins[0].np_dtype), dy, dh_n), desc=f"(seq, batch, input, hidden)={shape}"
        )


def _gru_errors():
    f = ops.GRULayer
    good = [(5, 3, 4), (3, 6), (18, 4), (18, 6), (18,), (18,)]
    return [
        ErrorInput(
            "b_hh-shape", lambda: f()(*[_t(s) for s in [*good[:5], (17,)]]), ValueError, "'b_hh' must have shape"
        ),
        ErrorInput(
            "w_ih-rows", lambda: f()(*[_t(s) for s in [good[0], good[1], (17, 4), *good[3:]]]), ValueError, "'w_ih'"
        ),
        ErrorInput("int", lambda: f()(*[_t(s, mstype.int32) for s in good]), TypeError, "GRULayer"),
        ErrorInput("reverse", lambda: f(reverse="yes"), TypeError, "reverse"),
    ]


def _rnn_errors():
    f = ops.RNNLayer
    good = [(5, 3, 4), (3, 6), (6, 4), (6, 6), (6,)]
    return [
        ErrorInput("h0-shape", lambda: f()(*[_t(s) for s in [good[0], (2, 6), *good[2:]]]), ValueError, "'h0' must"),
        ErrorInput("x-rank", lambda: f()(*[_t(s) for s in [(5, 4), *good[1:]]]), ValueError, "'x' must be"),
        ErrorInput("nonlinearity", lambda: f(nonlinearity="sigmoid"), ValueError, "'nonlinearity' must be"),
        ErrorInput("float16", lambda: f()(*[_t(s, mstype.float16) for s in good]), TypeError, "RNNLayer"),
    ]


def _rnn_variants(make, names, acts=("tanh", "relu")):
    """``{variant: factory}`` over the directions and activations of an RNN primitive, one per output."""
    variants = {}
    for reverse in (False, True):
        for act in acts:
            for k, name in enumerate(names):
                label = ",".join(p for p in ("reverse" if reverse else "", act if act != "tanh" else "", name) if p)
                variants[label] = lambda k=k, r=reverse, a=act: _Output(make(r, a), k)
    return variants


RECORDS += [
    OpRecord(
        "GRULayer",
        _rnn_variants(lambda r, a: ops.GRULayer(r), _GRU_OUT, acts=("tanh",)),
        _gru_samples,
        lambda prim, *args: gru_forward_ref(*args, reverse=prim.reverse)[prim.index],
        args=(Arg(),) * 6,
        tols={"Float32": (2e-5, 2e-6)},
        error_inputs=_gru_errors,
    ),
    OpRecord(
        "GRULayerGrad",
        {
            **_rnn_variants(lambda r, a: ops.GRULayerGrad(r), _GRU_GRAD_OUT, acts=("tanh",)),
            **_no_dx_variants(lambda: ops.GRULayerGrad(compute_dx=False), _GRU_GRAD_OUT),
        },
        _gru_grad_samples,
        lambda prim, *args: _layer_grad_output(prim, gru_backward_ref(*args, reverse=prim.reverse)),
        args=(Arg(),) * 8,
        tols={"Float32": (1e-4, 1e-5)},
    ),
    OpRecord(
        "RNNLayer",
        _rnn_variants(lambda r, a: ops.RNNLayer(r, a), ("y", "h_n")),
        _rnn_samples,
        lambda prim, *args: rnn_forward_ref(*args, reverse=prim.reverse, nonlinearity=prim.nonlinearity)[prim.index],
        args=(Arg(),) * 5,
        tols={"Float32": (1e-4, 2e-4)},  # relu lets the values (and the rounding of their sums) grow
        error_inputs=_rnn_errors,
    ),
    OpRecord(
        "RNNLayerGrad",
        {
            **_rnn_variants(lambda r, a: ops.RNNLayerGrad(r, a), _RNN_GRAD_OUT),
            **_no_dx_variants(lambda: ops.RNNLayerGrad(compute_dx=False), _RNN_GRAD_OUT),
        },
        _rnn_grad_samples,
        lambda prim, *args: _layer_grad_output(
            prim, rnn_backward_ref(*args, reverse=prim.reverse, nonlinearity=prim.nonlinearity)
        ),
        args=(Arg(),) * 7,
        tols={"Float32": (3e-4, 1e-4)},
    ),
]
