"""The gradient database: one ``GradRecord`` per operator that has a bprop.

``tests/test_grad_sweep.py`` takes every operator name in ``bprop_getters.names()`` and looks it
up here; an operator with a bprop and no record fails. A record says how to build the primitive
(one or more attr variants), which float64 sample inputs to differentiate at, and which inputs are
differentiable. The sweep projects each output on a fixed random tensor ``r`` (the loss is
``sum(out * r)``, so ``r`` is the sensitivity) and compares the gradients the engine returns with
central finite differences of that loss; ``second_order`` records also compare grad of grad with
finite differences of the first-order gradient.

Conventions
-----------
* ``GradSample.args`` are passed in order: an ``np.ndarray`` becomes a ``Tensor``, anything else
  (an axis, a shape, a dtype, a Python scalar) is passed as it is.
* ``diff``: positions of the inputs the finite differences perturb; by default every float array.
  Sample values keep a margin from kinks (0 for ReLU, ties for Maximum), so the function is smooth
  within ``eps`` of every sample.
* ``zero`` records are operators whose gradients are zero by definition (comparisons, indices,
  constants): their bprop must return exact zeros of each tensor input's shape and dtype, and
  ``None`` for the other inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
from op_db import OP_DB, make_array

from opforge import Tensor, ops
from opforge import dtype as mstype

F64 = mstype.float64


@dataclass
class GradSample:
    args: tuple
    desc: str = ""
    diff: Optional[tuple] = None  # positions to differentiate; None: every float ndarray
    eps: float = 1e-6
    tols: Optional[tuple] = None  # (rtol, atol) overriding the record's

    def __post_init__(self):
        # NumPy scalars (what 0-d computations return) become 0-d arrays, so they turn into Tensors.
        self.args = tuple(np.asarray(a) if isinstance(a, np.generic) else a for a in self.args)


@dataclass
class GradRecord:
    name: str
    variants: dict  # variant name -> zero-argument primitive factory
    samples: Callable  # (prim, rng) -> iterable of GradSample
    zero: bool = False  # gradients are exact zeros by definition
    second_order: bool = False  # also check grad of grad
    rtol: float = 1e-5
    atol: float = 1e-6

    def sample_list(self, prim, rng) -> list:
        return list(self.samples(prim, rng))


# ---------------------------------------------------------------------------------------------
# Value helpers


def uniform(shape, low=-2.0, high=2.0, rng=None) -> np.ndarray:
    return make_array(shape, F64, rng, low, high)


def away_from(shape, rng, points=(0.0,), margin=0.1, low=-2.0, high=2.0) -> np.ndarray:
    """Uniform values in [low, high] at least ``margin`` from every point in ``points``."""
    x = rng.uniform(low, high, size=shape)
    for p in points:
        near = np.abs(x - p) < margin
        x = np.where(near, p + np.where(x >= p, margin, -margin) * 1.5, x)
    return np.asarray(x, np.float64)


def signed(shape, rng, low=0.2, high=2.0) -> np.ndarray:
    """|x| in [low, high] with a random sign (nonzero, away from 0)."""
    return np.asarray(rng.uniform(low, high, size=shape) * rng.choice([-1.0, 1.0], size=shape), np.float64)


def _domain(name: str):
    """(low, high) of an op's first input in the forward sweep's record (tests/op_db.py)."""
    rec = OP_DB.get(name)
    if rec is None:
        return -2.0, 2.0
    return rec.args[0].low, rec.args[0].high


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _elu(alpha):
    return lambda x: np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0.0)))


def _variants(factory_name: str, **named_attrs) -> dict:
    """``{"": ops.X}`` or ``{label: lambda: ops.X(**attrs)}``, resolved when the op exists."""

    def make(attrs):
        return lambda: getattr(ops, factory_name)(**attrs)

    if not named_attrs:
        return {"": make({})}
    return {label: make(attrs) for label, attrs in named_attrs.items()}


# ---------------------------------------------------------------------------------------------
# Sample generators

SHAPES = [(), (5,), (3, 4), (2, 3, 2)]


def unary(low=-2.0, high=2.0, kinks=None):
    def samples(prim, rng):
        for shape in SHAPES:
            if kinks is None:
                x = uniform(shape, low, high, rng)
            else:
                x = away_from(shape, rng, kinks, low=low, high=high)
            yield GradSample((x,), f"x{list(shape)}")

    return samples


def _polygamma_grad_samples(prim, rng):
    for n in (0, 1, 3):
        yield GradSample((np.asarray(n, np.int64), uniform((5,), 0.3, 4.0, rng=rng)), f"a={n}")


def unary_in_domain(name, kinks=None):
    low, high = _domain(name)
    return unary(max(low, -3.0), min(high, 3.0), kinks)


BINARY_SHAPES = [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (3,)), ((2, 3), ())]


def apart(xs, ys, rng, make_x, make_y, gap=0.15):
    """x and y drawn until every broadcast pair differs by at least ``gap`` (no ties at kinks)."""
    for _ in range(1000):
        x, y = make_x(xs, rng), make_y(ys, rng)
        if np.all(np.abs(np.subtract(x, y)) >= gap):
            return x, y
    raise AssertionError(f"could not draw x{list(xs)} and y{list(ys)} apart")


def binary(make_x=None, make_y=None, ties=False):
    """Broadcasting pairs, then a weak Python scalar on either side. ``ties``: keep x and y apart."""
    make_x = make_x or (lambda s, rng: uniform(s, rng=rng))
    make_y = make_y or (lambda s, rng: uniform(s, rng=rng))

    def samples(prim, rng):
        for xs, ys in BINARY_SHAPES:
            if ties:
                x, y = apart(xs, ys, rng, make_x, make_y)
            else:
                x, y = make_x(xs, rng), make_y(ys, rng)
            yield GradSample((x, y), f"x{list(xs)} y{list(ys)}")
        x, _ = apart((3, 4), (), rng, make_x, lambda s, r: np.float64(0.75)) if ties else (make_x((3, 4), rng), 0)
        yield GradSample((x, 0.75), "x[3, 4] y=Python 0.75")
        _, y = apart((), (5,), rng, lambda s, r: np.float64(0.75), make_y) if ties else (0, make_y((5,), rng))
        yield GradSample((0.75, y), "x=Python 0.75 y[5]")

    return samples


def _matmul_samples(prim, rng):
    for m, k, n in [(3, 4, 5), (1, 3, 2), (4, 1, 3)]:
        a = (k, m) if prim.transpose_a else (m, k)
        b = (n, k) if prim.transpose_b else (k, n)
        yield GradSample((uniform(a, rng=rng), uniform(b, rng=rng)), f"a{list(a)} b{list(b)}")


def _bias_add_samples(prim, rng):
    shapes = [
        ((4, 3), 3),
        ((2, 3, 4), 3 if prim.data_format == "NCHW" else 4),
        ((2, 3, 2, 2), 3 if prim.data_format == "NCHW" else 2),
    ]
    for xs, c in shapes:
        yield GradSample((uniform(xs, rng=rng), uniform((c,), rng=rng)), f"x{list(xs)} bias[{c}]")


REDUCE_AXES = [(), 1, -1, (0, 2), [2, 0], (1,)]


def _reduce_samples(prim, rng):
    for axis in REDUCE_AXES:
        yield GradSample((uniform((2, 3, 4), rng=rng), axis), f"x[2, 3, 4] axis={axis!r}")
    yield GradSample((uniform((), rng=rng), ()), "x[] axis=()")
    yield GradSample((uniform((5,), rng=rng), 0), "x[5] axis=0")


def _reduce_max_samples(prim, rng):
    # Distinct values (no ties) so the max is differentiable; ties are in test_autodiff.
    for axis in REDUCE_AXES:
        x = rng.permutation(24).reshape(2, 3, 4) * 0.25 + rng.uniform(-0.01, 0.01, (2, 3, 4))
        yield GradSample((x, axis), f"x[2, 3, 4] axis={axis!r}")
    yield GradSample((np.float64(rng.uniform()).reshape(()), ()), "x[] axis=()")


def _cast_samples(prim, rng):
    x = uniform((3, 4), rng=rng)
    yield GradSample((x, mstype.float64), "float64->float64")
    # Cast is linear: a coarse, exactly representable step keeps float32 rounding out of the differences.
    yield GradSample((x, mstype.float32), "float64->float32", eps=2.0**-4, tols=(1e-5, 2e-5))
    yield GradSample((x.astype(np.float32), mstype.float64), "float32->float64", eps=2.0**-4, tols=(1e-5, 1e-5))
    # To an integer dtype the output is piecewise constant: no gradient flows (values away from integers).
    xi = np.round(uniform((3, 4), rng=rng)) + rng.uniform(-0.3, 0.3, (3, 4))
    yield GradSample((xi, mstype.int32), "float64->int32 (zero gradient)")


def _reshape_samples(prim, rng):
    for xs, shape in [((2, 3, 4), (6, 4)), ((2, 3, 4), (-1,)), ((6,), (1, 2, 3)), ((), (1, 1)), ((1, 4), (4,))]:
        yield GradSample((uniform(xs, rng=rng), shape), f"x{list(xs)} -> {shape}")


def _grad_op_samples(make_y, y_first: bool, kinks_y=None):
    """Samples for an activation grad op: (dy, y) or (y, dy); y from the forward on random x."""

    def samples(prim, rng):
        for shape in [(5,), (3, 4), ()]:
            y = make_y(shape, rng)
            dy = uniform(shape, rng=rng)
            yield GradSample((y, dy) if y_first else (dy, y), f"{list(shape)}")

    return samples


def _elu_grad_y(shape, rng, alpha=1.0):
    return _elu(alpha)(signed(shape, rng, 0.2, 2.0))


# Softmax family --------------------------------------------------------------------------------


def _softmax_samples(prim, rng):
    axis = prim.axis if hasattr(prim, "axis") else -1
    axis = axis[0] if isinstance(axis, (tuple, list)) else axis
    for shape in [(5,), (3, 4), (2, 3, 4)]:
        if -len(shape) <= axis < len(shape):
            yield GradSample((uniform(shape, -3.0, 3.0, rng),), f"x{list(shape)}")


def _labels_dist(n, c, rng):
    p = rng.uniform(0.1, 1.0, size=(n, c))
    return p / p.sum(axis=1, keepdims=True)


def _sce_samples(prim, rng):
    for n, c in [(4, 3), (1, 5), (3, 2)]:
        yield GradSample((uniform((n, c), -3.0, 3.0, rng), _labels_dist(n, c, rng)), f"logits[{n}, {c}]")


def _sparse_sce_samples(prim, rng):
    for n, c in [(4, 3), (1, 5), (3, 2)]:
        labels = rng.integers(0, c, size=(n,)).astype(np.int32)
        yield GradSample((uniform((n, c), -3.0, 3.0, rng), labels), f"logits[{n}, {c}] int32 labels", diff=(0,))


# Comparison, selection and array ops -----------------------------------------------------------


def _max_min_grad_samples(prim, rng):
    # (x, y, dout): x and y apart (no ties), dout in the broadcast shape.
    for xs, ys in [((3, 4), (3, 4)), ((2, 3), (3,)), ((3, 1), (1, 2))]:
        x, y = apart(xs, ys, rng, lambda s, r: uniform(s, rng=r), lambda s, r: uniform(s, rng=r))
        dout = uniform(np.broadcast_shapes(xs, ys), rng=rng)
        yield GradSample((x, y, dout), f"x{list(xs)} y{list(ys)}")


def _sqrt_samples(prim, rng):
    for shape in SHAPES:
        yield GradSample((rng.uniform(0.3, 4.0, shape),), f"x{list(shape)}")


def _sqrt_grad_samples(prim, rng):
    for shape in [(5,), (3, 4)]:
        yield GradSample((rng.uniform(0.3, 3.0, shape), uniform(shape, rng=rng)), f"{list(shape)}")


def _transpose_samples(prim, rng):
    for xs, perm in [((2, 3, 4), (2, 0, 1)), ((2, 3, 4), (1, 2, 0)), ((3, 4), (1, 0)), ((5,), (0,)), ((), ())]:
        yield GradSample((uniform(xs, rng=rng), perm), f"x{list(xs)} perm={perm}")


def _expand_dims_samples(prim, rng):
    for xs, axis in [((2, 3), 0), ((2, 3), -1), ((2, 3), 1), ((), 0)]:
        yield GradSample((uniform(xs, rng=rng), axis), f"x{list(xs)} axis={axis}")


def _squeeze_samples(prim, rng):
    for xs in [(2, 1, 3, 1), (1,), (1, 4)]:
        axis = prim.axis if hasattr(prim, "axis") else ()
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        if all(-len(xs) <= a < len(xs) and xs[a] == 1 for a in axes):
            yield GradSample((uniform(xs, rng=rng),), f"x{list(xs)}")


def _broadcast_to_samples(prim, rng):
    shape = tuple(prim.shape)
    for xs in [(3,), (1, 3), (2, 1, 1), ()]:
        try:
            np.broadcast_shapes(xs, shape)
        except ValueError:
            continue
        if np.broadcast_shapes(xs, shape) == shape:
            yield GradSample((uniform(xs, rng=rng),), f"x{list(xs)} -> {list(shape)}")


def _zeros_like_samples(prim, rng):
    yield GradSample((uniform((3, 4), rng=rng),), "float64 [3, 4]")
    yield GradSample((np.arange(6, dtype=np.int32).reshape(2, 3),), "int32 [2, 3]")


def _equal_samples(prim, rng):
    x = uniform((3, 4), rng=rng)
    yield GradSample((x, np.where(rng.random((3, 4)) < 0.5, x, x + 1.0)), "float64 [3, 4]")
    yield GradSample((uniform((2, 3), rng=rng), 0.5), "x[2, 3], Python 0.5")
    yield GradSample((np.arange(4, dtype=np.int32), np.arange(4, dtype=np.int32)[::-1].copy()), "int32 [4]")


def _fill_samples(prim, rng):
    yield GradSample((mstype.float64, (2, 3), 1.5), "float64 (2, 3) 1.5")
    yield GradSample((mstype.float32, (4,), 0.0), "float32 (4,) 0.0")


def _argmax_samples(prim, rng):
    yield GradSample((uniform((3, 4), rng=rng),), "x[3, 4]")
    yield GradSample((np.array([[3, 1], [0, 7]], np.int32),), "int32 x[2, 2]")


def _nms_with_mask_samples(prim, rng):
    corner = rng.uniform(0, 10, (6, 2))
    boxes = np.concatenate([corner, corner + rng.uniform(1, 5, (6, 2)), rng.uniform(0, 1, (6, 1))], 1)
    yield GradSample((boxes.astype(np.float32),), "bboxes[6, 5]")


def _roi_align_grad_samples(prim, rng):
    """ROIAlign is linear in the features (and ROIAlignGrad in dy): finite differences are exact for any RoIs,
    which get no gradient (``diff`` leaves them out)."""
    shape = (2, 3, 6, 7)
    rois = np.array([[0, 0.5, 1.2, 4.1, 5.3], [1, -1.5, 2.0, 3.0, 7.5], [1, 2.2, 0.3, 6.6, 4.4]])
    ph, pw = prim.pooled_height, prim.pooled_width
    if prim.name == "ROIAlign":
        yield GradSample((uniform(shape, rng=rng), rois), f"features{list(shape)} 3 RoIs", diff=(0,))
    else:
        yield GradSample((uniform((3, 3, ph, pw), rng=rng), rois, shape), f"dy[3, 3, {ph}, {pw}]", diff=(0,))


_ROI_GRAD_ATTRS = {
    "2x2 sample_num=2": {"pooled_height": 2, "pooled_width": 2, "spatial_scale": 1.0},
    "3x2 sample_num=0 roi_end_mode=0": {
        "pooled_height": 3, "pooled_width": 2, "spatial_scale": 0.8, "sample_num": 0, "roi_end_mode": 0,
    },
}  # fmt: skip


def _one_hot_samples(prim, rng):
    indices = np.array([0, 2, 1, 3], np.int32)
    on = np.array(1.0)
    off = np.array(0.0)
    yield GradSample((indices, 4, on, off), "indices[4] depth=4, 0-d tensor values")
    yield GradSample((indices.reshape(2, 2), 5, 1.0, 0.0), "indices[2, 2] depth=5, Python values")


# -- the second batch of elementwise ops (grad_elemwise_ops.py) ------------------------------------


def _remainder_samples(prim, rng):
    """x / y at least 0.1 from an integer, so x mod y is smooth within eps (y away from 0)."""

    def draw(xs, ys):
        for _ in range(1000):
            x, y = uniform(xs, -3.0, 3.0, rng), signed(ys, rng, 0.5, 2.0)
            frac = np.abs(np.asarray(x / y) - np.round(x / y))
            if np.all(frac >= 0.1):
                return x, y
        raise AssertionError("could not draw x / y away from integers")

    for xs, ys in BINARY_SHAPES:
        yield GradSample(draw(xs, ys), f"x{list(xs)} y{list(ys)}")
    x, _ = draw((3, 4), ())
    x = np.where(np.abs(x / 0.75 - np.round(x / 0.75)) < 0.1, x + 0.15, x)
    yield GradSample((x, 0.75), "x[3, 4] y=Python 0.75")


def _pow_samples(prim, rng):
    yield from binary(lambda s, r: uniform(s, 0.3, 2.5, r), lambda s, r: uniform(s, -2.0, 2.0, r))(prim, rng)


def _zero_unary_samples(prim, rng):
    yield GradSample((away_from((3, 4), rng, (-2.0, -1.0, 0.0, 1.0, 2.0), margin=0.1, low=-2.5, high=2.5),), "x[3, 4]")
    yield GradSample((np.array([1.5, -0.5]),), "x[2]")


def _zero_compare_samples(prim, rng):
    x = uniform((3, 4), rng=rng)
    yield GradSample((x, np.where(rng.random((3, 4)) < 0.5, x, x + 1.0)), "float64 [3, 4]")
    yield GradSample((uniform((2, 3), rng=rng), 0.5), "x[2, 3], Python 0.5")
    yield GradSample((np.arange(4, dtype=np.int32), np.arange(4, dtype=np.int32)[::-1].copy()), "int32 [4]")


def _zero_logical_samples(prim, rng):
    a, b = rng.random((3, 4)) < 0.5, rng.random((4,)) < 0.5
    if prim.name == "LogicalNot":
        yield GradSample((a,), "bool [3, 4]")
    else:
        yield GradSample((a, b), "bool [3, 4], [4]")


def _act_grad_samples(kinks=None):
    """(dy, x) for SoftplusGrad, HSigmoidGrad, HSwishGrad: x in [-4, 4] away from the kinks."""

    def samples(prim, rng):
        for shape in [(5,), (3, 4), ()]:
            x = uniform(shape, -4.0, 4.0, rng) if kinks is None else away_from(shape, rng, kinks, low=-4.0, high=4.0)
            yield GradSample((uniform(shape, rng=rng), x), f"{list(shape)}")

    return samples


def _gelu_grad_samples(prim, rng):
    for shape in [(5,), (3, 4), ()]:
        x = uniform(shape, -3.0, 3.0, rng)
        y = 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))
        yield GradSample((uniform(shape, rng=rng), x, np.asarray(y)), f"{list(shape)}")


def _floor_div_grad_samples(prim, rng):
    yield from _remainder_samples(prim, rng)


ELEMWISE_GRAD_RECORDS = [
    GradRecord("Abs", _variants("Abs"), unary(kinks=(0.0,)), second_order=True),
    GradRecord(
        "AbsGrad",
        _variants("AbsGrad"),
        _grad_op_samples(lambda s, rng: signed(s, rng, 0.2, 2.0), y_first=True),
        second_order=True,
    ),
    GradRecord("Erf", _variants("Erf"), unary(), second_order=True),
    GradRecord("Pow", _variants("Pow"), _pow_samples, second_order=True),
    GradRecord("Atan2", _variants("Atan2"), binary(make_y=lambda s, rng: signed(s, rng, 0.5, 2.0)), second_order=True),
    GradRecord("Div", _variants("Div"), binary(make_y=lambda s, rng: signed(s, rng, 0.5, 2.0)), second_order=True),
    GradRecord("Mod", _variants("Mod"), _remainder_samples, second_order=True),
    GradRecord("FloorMod", _variants("FloorMod"), _remainder_samples, second_order=True),
    GradRecord("GeLU", _variants("GeLU"), unary(-3.0, 3.0), second_order=True),
    GradRecord("Softplus", _variants("Softplus"), unary(-4.0, 4.0), second_order=True),
    GradRecord("HSigmoid", _variants("HSigmoid"), unary(-4.0, 4.0, kinks=(-3.0, 3.0)), second_order=True),
    GradRecord("ReLU6", _variants("ReLU6"), unary(-2.0, 8.0, kinks=(0.0, 6.0)), second_order=True),
    GradRecord("ReLU6Grad", _variants("ReLU6Grad"), _act_grad_samples((0.0, 6.0)), second_order=True),
    GradRecord("HSwish", _variants("HSwish"), unary(-4.0, 4.0, kinks=(-3.0, 3.0)), second_order=True),
    GradRecord("GeLUGrad", _variants("GeLUGrad"), _gelu_grad_samples, second_order=True),
    GradRecord("SoftplusGrad", _variants("SoftplusGrad"), _act_grad_samples(), second_order=True),
    GradRecord("HSigmoidGrad", _variants("HSigmoidGrad"), _act_grad_samples((-3.0, 3.0)), second_order=True),
    GradRecord("HSwishGrad", _variants("HSwishGrad"), _act_grad_samples((-3.0, 3.0)), second_order=True),
    *(GradRecord(n, _variants(n), _zero_unary_samples, zero=True) for n in ("Floor", "Ceil", "Round", "Sign")),
    *(GradRecord(n, _variants(n), _zero_unary_samples, zero=True) for n in ("IsNan", "IsFinite")),
    GradRecord("FloorDiv", _variants("FloorDiv"), _floor_div_grad_samples, zero=True),
    *(
        GradRecord(n, _variants(n), _zero_compare_samples, zero=True)
        for n in ("Greater", "GreaterEqual", "Less", "LessEqual", "NotEqual")
    ),
    *(GradRecord(n, _variants(n), _zero_logical_samples, zero=True) for n in ("LogicalNot", "LogicalAnd", "LogicalOr")),
]


# The third elementwise batch (math_ext_ops): smooth ones in their domains, the rest zero.
def _positive(s, rng):
    return uniform(s, 0.5, 2.0, rng)


def _int_pair_samples(prim, rng):
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    if prim.name == "Invert":
        yield GradSample((x,), "int32 [3, 4]")
    else:
        yield GradSample((x, np.arange(4, dtype=np.int32)), "int32 [3, 4], [4]")


MATH_EXT_GRAD_RECORDS = [
    GradRecord("Sinh", _variants("Sinh"), unary(), second_order=True),
    GradRecord("Cosh", _variants("Cosh"), unary(), second_order=True),
    GradRecord("Tan", _variants("Tan"), unary(-1.2, 1.2), second_order=True),
    GradRecord("Asin", _variants("Asin"), unary(-0.8, 0.8), second_order=True),
    GradRecord("ACos", _variants("ACos"), unary(-0.8, 0.8), second_order=True),
    GradRecord("Atan", _variants("Atan"), unary(), second_order=True),
    GradRecord("Asinh", _variants("Asinh"), unary(), second_order=True),
    GradRecord("Acosh", _variants("Acosh"), unary(1.2, 3.0), second_order=True),
    GradRecord("Atanh", _variants("Atanh"), unary(-0.8, 0.8), second_order=True),
    GradRecord("Erfc", _variants("Erfc"), unary(), second_order=True),
    GradRecord("Lgamma", _variants("Lgamma"), unary(0.3, 4.0), second_order=True),
    GradRecord("Digamma", _variants("Digamma"), unary(0.3, 4.0), second_order=True),
    GradRecord("Polygamma", _variants("Polygamma"), _polygamma_grad_samples, second_order=True),
    GradRecord("Erfinv", _variants("Erfinv"), unary(-0.9, 0.9), second_order=True),
    GradRecord("Inv", _variants("Inv"), unary(0.5, 2.0), second_order=True),
    GradRecord("SquaredDifference", _variants("SquaredDifference"), binary(), second_order=True),
    GradRecord("Xdivy", _variants("Xdivy"), binary(make_y=lambda s, rng: signed(s, rng, 0.5, 2.0)), second_order=True),
    GradRecord("Xlogy", _variants("Xlogy"), binary(make_y=_positive), second_order=True),
    GradRecord("DivNoNan", _variants("DivNoNan"), binary(make_y=lambda s, rng: signed(s, rng, 0.5, 2.0))),
    *(GradRecord(n, _variants(n), _zero_unary_samples, zero=True) for n in ("Rint", "Trunc")),
    *(
        GradRecord(n, _variants(n), _int_pair_samples, zero=True)
        for n in ("Invert", "BitwiseAnd", "BitwiseOr", "BitwiseXor")
    ),
    GradRecord("LogicalXor", _variants("LogicalXor"), _zero_logical_samples, zero=True),
]

# ---------------------------------------------------------------------------------------------
# The norm helper's operators (reductions, normalisations, dropout, losses): samples


def _reduce_prod_samples(prim, rng):
    yield from _reduce_samples(prim, rng)
    x = uniform((3, 4), rng=rng)
    x[0, 1] = 0.0  # one zero in row 0: only that element gets a gradient
    x[2, 0] = x[2, 3] = 0.0  # two zeros in row 2: no gradient in that row
    yield GradSample((x, 1), "x[3, 4] axis=1 with zeros")


class _MovingAsParameters:
    """Calls BatchNorm(is_training=True) with its moving statistics (arguments 3 and 4) as fresh
    Parameters, as training requires; y does not depend on them, so their gradients are zero."""

    def __init__(self, prim):
        self.prim = prim

    def __getattr__(self, name):
        return getattr(self.prim, name)

    def __call__(self, *args):
        from opforge import Parameter

        args = list(args)
        for i in (3, 4):
            args[i] = Parameter(args[i].asnumpy(), name=f"moving{i}")
        return self.prim(*args)


class _LstmResults:
    """LSTMLayer's results (y, h_n, c_n): its other outputs (the activated gates, every c) are saved for the
    backward pass and take no gradient."""

    def __init__(self, prim):
        self.prim = prim

    def __getattr__(self, name):
        return getattr(self.prim, name)

    def __call__(self, *args):
        return self.prim(*args)[:3]


def _lstm_samples(prim, rng):
    for seq, batch, inp, hidden in ((4, 2, 3, 5), (1, 1, 2, 1)):
        sizes = [
            (seq, batch, inp),
            (batch, hidden),
            (batch, hidden),
            (4 * hidden, inp),
            (4 * hidden, hidden),
            (4 * hidden,),
        ]
        yield GradSample(
            tuple(uniform(s, rng=rng) for s in sizes), f"seq={seq} batch={batch} input={inp} hidden={hidden}"
        )


class _LeadingResults:
    """A primitive's first ``n`` results: the rest (GRULayer's saved gates) are for the backward pass and
    take no gradient."""

    def __init__(self, prim, n):
        self.prim, self.n = prim, n

    def __getattr__(self, name):
        return getattr(self.prim, name)

    def __call__(self, *args):
        return self.prim(*args)[: self.n]


def _recurrent_samples(n_gates, n_vectors):
    """GRU (3 gates, 2 bias vectors) or RNN (1 gate, 1 vector) layer inputs in U(-1, 1)."""

    def samples(prim, rng):
        for seq, batch, inp, hidden in ((4, 2, 3, 5), (1, 1, 2, 1)):
            sizes = [(seq, batch, inp), (batch, hidden), (n_gates * hidden, inp), (n_gates * hidden, hidden)]
            sizes += [(n_gates * hidden,)] * n_vectors
            yield GradSample(
                tuple(uniform(s, -1.0, 1.0, rng=rng) for s in sizes),
                f"seq={seq} batch={batch} input={inp} hidden={hidden}",
            )

    return samples


def _batch_norm_samples(prim, rng):
    for shape in ((4, 3), (2, 3, 2, 2), (3, 2, 5)):
        c = shape[1]
        args = (uniform(shape, rng=rng), uniform((c,), rng=rng), uniform((c,), rng=rng), uniform((c,), rng=rng))
        yield GradSample((*args, uniform((c,), 0.5, 2.0, rng)), f"x{list(shape)}")


class _AttentionOutput:
    """ScaledDotProductAttention's output alone: softmax_lse is a statistic saved for the backward pass and
    takes no gradient."""

    def __init__(self, prim):
        self.prim = prim

    def __getattr__(self, name):
        return getattr(self.prim, name)

    def __call__(self, *args):
        return self.prim(*args)[:1]


def _attention_samples(prim, rng):
    # Lq != Lk, D not a multiple of the vector width; (2, 2, 40, 70): more than one query and key block
    # (32 and 64) with partial last blocks. The mask is not differentiated (its gradient is zero).
    for b, h, lq, lk, d, dv, mask_shape in (
        (1, 2, 3, 5, 3, 2, (1, 1, 1, 1)),
        (2, 1, 4, 4, 5, 5, (2, 1, 4, 4)),
        (1, 2, 40, 70, 3, 2, (1, 2, 1, 70)),
    ):
        args = (
            uniform((b, h, lq, d), rng=rng),
            uniform((b, h, lk, d), rng=rng),
            uniform((b, h, lk, dv), rng=rng),
            uniform(mask_shape, rng=rng),
        )
        yield GradSample(
            args, f"q[{b}, {h}, {lq}, {d}] k[.., {lk}, ..] v[.., {dv}] mask{list(mask_shape)}", diff=(0, 1, 2)
        )


def _layer_norm_samples(prim, rng):
    for shape in ((3, 4), (2, 3, 4), (2, 2, 3, 2)):
        nd = len(shape)
        if max(prim.begin_norm_axis, prim.begin_params_axis) >= nd:
            continue
        params_axis = prim.begin_params_axis % nd
        pshape = shape[params_axis:]
        x = uniform(shape, rng=rng)
        yield GradSample((x, uniform(pshape, rng=rng), uniform(pshape, rng=rng)), f"x{list(shape)}")


def _cumsum_samples(prim, rng):
    yield GradSample((uniform((3, 4), rng=rng), 1), "x[3, 4] axis=1")
    yield GradSample((uniform((2, 3, 4), rng=rng), -3), "x[2, 3, 4] axis=-3")
    yield GradSample((uniform((5,), rng=rng), 0), "x[5] axis=0")


def _extreme_scan_grad_samples(prim, rng):
    # distinct values (a tie's gradient goes to one of the tied elements)
    for shape in ((3, 4), (2, 3, 4)):
        if -len(shape) <= prim.axis < len(shape):
            yield GradSample((_distinct(shape, rng),), f"x{list(shape)}")


def _cumprod_samples(prim, rng):
    # Away from 0 (the gradient divides by x), of either sign.
    for shape, axis in (((3, 4), 1), ((2, 3, 4), -3), ((5,), 0)):
        x = rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)
        yield GradSample((x, axis), f"x{list(shape)} axis={axis}")


def _dropout_ext_samples(prim, rng):
    for shape, offset in (((7,), 0), ((3, 4), 11)):
        seeds = (np.array(3, np.int64), np.array(offset, np.int64))
        yield GradSample((uniform(shape, rng=rng), *seeds), f"x{list(shape)}, seeds (3, {offset})", diff=(0,))


def _dropout_grad_samples(prim, rng):
    mask = (rng.uniform(size=(3, 4)) < 0.5).astype(np.float64)
    yield GradSample((uniform((3, 4), rng=rng), mask), "dy[3, 4], a 0/1 mask")


def _smooth_l1_samples(prim, rng):
    for shape in ((7,), (3, 4)):
        x = uniform(shape, rng=rng)
        # |x - y| away from beta (the kink of the second derivative; the first is smooth).
        d = away_from(shape, rng, (-prim.beta, prim.beta), margin=0.05, low=-2.0, high=2.0)
        yield GradSample((x, x - d), f"x{list(shape)}")


def _bce_samples(prim, rng):
    x = uniform((3, 4), -3.0, 3.0, rng)
    y = uniform((3, 4), 0.0, 1.0, rng)
    yield GradSample((x, y, uniform((3, 4), 0.5, 2.0, rng), uniform((3, 4), 0.5, 2.0, rng)), "all [3, 4]")
    yield GradSample((x, y, uniform((4,), 0.5, 2.0, rng), uniform((), 0.5, 2.0, rng)), "weight [4], pos_weight []")


def _nll_samples(prim, rng):
    # Only logits are differentiated: labels are indices, weight gets no gradient by definition.
    t = np.array([0, 2, 1, 2, 0], np.int32)
    yield GradSample((uniform((5, 3), rng=rng), t, uniform((3,), 0.5, 2.0, rng)), "logits[5, 3]", diff=(0,))


def _bool_samples(prim, rng):
    yield GradSample((rng.uniform(size=(3, 4)) < 0.5, 1), "bool x[3, 4] axis=1")
    yield GradSample((rng.uniform(size=(5,)) < 0.5, ()), "bool x[5] axis=()")


# ---------------------------------------------------------------------------------------------
# The database


GRAD_DB_LIST = [
    # -- activations (grad_nn_ops.py) ------------------------------------------------------
    GradRecord("ReLU", _variants("ReLU"), unary(kinks=(0.0,)), second_order=True),
    GradRecord(
        "Elu",
        _variants("Elu", **{"alpha=1.0": {}, "alpha=0.7": {"alpha": 0.7}, "alpha=0.0": {"alpha": 0.0}}),
        unary(kinks=(0.0,)),
        second_order=True,
    ),
    GradRecord("Sigmoid", _variants("Sigmoid"), unary(-4.0, 4.0), second_order=True),
    GradRecord("Tanh", _variants("Tanh"), unary(-2.0, 2.0), second_order=True),
    GradRecord(
        "BiasAdd", _variants("BiasAdd", NCHW={}, NHWC={"data_format": "NHWC"}), _bias_add_samples, second_order=True
    ),
    GradRecord(
        "Softmax", _variants("Softmax", **{"axis=-1": {}, "axis=0": {"axis": 0}}), _softmax_samples, second_order=True
    ),
    GradRecord(
        "LogSoftmax",
        _variants("LogSoftmax", **{"axis=-1": {}, "axis=0": {"axis": 0}}),
        _softmax_samples,
        second_order=True,
    ),
    GradRecord(
        "SoftmaxCrossEntropyWithLogits", _variants("SoftmaxCrossEntropyWithLogits"), _sce_samples, second_order=True
    ),
    GradRecord(
        "SparseSoftmaxCrossEntropyWithLogits",
        _variants("SparseSoftmaxCrossEntropyWithLogits", loss={}, **{"is_grad=True": {"is_grad": True}}),
        _sparse_sce_samples,
        second_order=True,
    ),
    # -- activation grads (second order) ---------------------------------------------------
    GradRecord(
        "ReluGrad",
        _variants("ReluGrad"),
        _grad_op_samples(lambda s, rng: signed(s, rng, 0.1, 3.0), y_first=False),
    ),
    GradRecord(
        "EluGrad",
        _variants("EluGrad", **{"alpha=1.0": {}, "alpha=0.5": {"alpha": 0.5}}),
        lambda prim, rng: _grad_op_samples(lambda s, r: _elu_grad_y(s, r, prim.alpha), y_first=False)(prim, rng),
    ),
    GradRecord(
        "SigmoidGrad",
        _variants("SigmoidGrad"),
        _grad_op_samples(lambda s, rng: _sigmoid(uniform(s, -3.0, 3.0, rng)), y_first=True),
        second_order=True,
    ),
    GradRecord(
        "TanhGrad",
        _variants("TanhGrad"),
        _grad_op_samples(lambda s, rng: np.tanh(uniform(s, -2.0, 2.0, rng)), y_first=True),
        second_order=True,
    ),
    # -- math (grad_math_ops.py) -------------------------------------------------------------
    GradRecord("Add", _variants("Add"), binary(), second_order=True),
    GradRecord("Sub", _variants("Sub"), binary(), second_order=True),
    GradRecord("Mul", _variants("Mul"), binary(), second_order=True),
    GradRecord(
        "RealDiv", _variants("RealDiv"), binary(make_y=lambda s, rng: signed(s, rng, 0.5, 2.0)), second_order=True
    ),
    GradRecord("Neg", _variants("Neg"), unary(), second_order=True),
    GradRecord("Exp", _variants("Exp"), unary_in_domain("Exp"), second_order=True),
    GradRecord("Log", _variants("Log"), unary(0.2, 5.0), second_order=True),
    GradRecord("Sin", _variants("Sin"), unary(), second_order=True),
    GradRecord("Cos", _variants("Cos"), unary(), second_order=True),
    GradRecord("Log1p", _variants("Log1p"), unary(-0.5, 3.0), second_order=True),
    GradRecord("Expm1", _variants("Expm1"), unary_in_domain("Expm1"), second_order=True),
    GradRecord("Reciprocal", _variants("Reciprocal"), unary(0.5, 3.0), second_order=True),
    GradRecord("Rsqrt", _variants("Rsqrt"), unary(0.5, 3.0), second_order=True),
    GradRecord(
        "MatMul",
        _variants(
            "MatMul",
            NN={},
            TN={"transpose_a": True},
            NT={"transpose_b": True},
            TT={"transpose_a": True, "transpose_b": True},
        ),
        _matmul_samples,
        second_order=True,
    ),
    GradRecord(
        "ReduceSum",
        _variants("ReduceSum", **{"keep_dims=False": {}, "keep_dims=True": {"keep_dims": True}}),
        _reduce_samples,
        second_order=True,
    ),
    GradRecord(
        "ReduceMean",
        _variants("ReduceMean", **{"keep_dims=False": {}, "keep_dims=True": {"keep_dims": True}}),
        _reduce_samples,
        second_order=True,
    ),
    GradRecord(
        "ReduceMax",
        _variants("ReduceMax", **{"keep_dims=False": {}, "keep_dims=True": {"keep_dims": True}}),
        _reduce_max_samples,
        second_order=True,
    ),
    # -- the norm helper's operators: reductions, normalisations, dropout, losses ------------
    GradRecord(
        "ReduceMin",
        _variants("ReduceMin", **{"keep_dims=False": {}, "keep_dims=True": {"keep_dims": True}}),
        _reduce_max_samples,
        second_order=True,
    ),
    GradRecord(
        "ReduceProd",
        _variants("ReduceProd", **{"keep_dims=False": {}, "keep_dims=True": {"keep_dims": True}}),
        _reduce_prod_samples,
    ),
    GradRecord("ReduceAll", _variants("ReduceAll"), _bool_samples, zero=True),
    GradRecord("ReduceAny", _variants("ReduceAny"), _bool_samples, zero=True),
    GradRecord(
        "BatchNorm",
        {
            "inference": lambda: ops.BatchNorm(),
            "training": lambda: _MovingAsParameters(ops.BatchNorm(is_training=True)),
            "training,epsilon=1e-3": lambda: _MovingAsParameters(ops.BatchNorm(True, 1e-3, 0.3)),
        },
        _batch_norm_samples,
        rtol=1e-5,
        atol=1e-6,
    ),
    GradRecord(
        "LayerNorm",
        _variants(
            "LayerNorm",
            **{
                "1,1": {},
                "-1,-1": {"begin_norm_axis": -1, "begin_params_axis": -1},
                "2,1": {"begin_norm_axis": 2, "begin_params_axis": 1},
                "1,2,epsilon=1e-3": {"begin_norm_axis": 1, "begin_params_axis": 2, "epsilon": 1e-3},
            },
        ),
        _layer_norm_samples,
    ),
    GradRecord(
        "ScaledDotProductAttention",
        {
            "": lambda: _AttentionOutput(ops.ScaledDotProductAttention(0.5)),
            "causal": lambda: _AttentionOutput(ops.ScaledDotProductAttention(0.7, is_causal=True)),
            "keep_prob=0.8": lambda: _AttentionOutput(ops.ScaledDotProductAttention(0.5, 0.8, False, 3, 4)),
        },
        _attention_samples,
    ),
    GradRecord(
        "LSTMLayer",
        {"": lambda: _LstmResults(ops.LSTMLayer()), "reverse": lambda: _LstmResults(ops.LSTMLayer(True))},
        _lstm_samples,
    ),
    GradRecord(
        "GRULayer",
        {"": lambda: _LeadingResults(ops.GRULayer(), 2), "reverse": lambda: _LeadingResults(ops.GRULayer(True), 2)},
        _recurrent_samples(3, 2),
    ),
    GradRecord(
        "RNNLayer",
        {
            "": lambda: ops.RNNLayer(),
            "reverse": lambda: ops.RNNLayer(True),
            "relu": lambda: ops.RNNLayer(nonlinearity="relu"),
            "reverse,relu": lambda: ops.RNNLayer(True, "relu"),
        },
        _recurrent_samples(1, 1),
    ),
    GradRecord("Argmin", _variants("Argmin", **{"axis=-1": {}, "axis=0": {"axis": 0}}), _argmax_samples, zero=True),
    GradRecord(
        "CumSum",
        _variants(
            "CumSum",
            **{
                "": {},
                "exclusive": {"exclusive": True},
                "reverse": {"reverse": True},
                "both": {"exclusive": True, "reverse": True},
            },
        ),
        _cumsum_samples,
        second_order=True,
    ),
    *(
        GradRecord(
            name,
            _variants(name, **{f"axis={a}": {"axis": a} for a in (0, -1)}),
            _extreme_scan_grad_samples,
            second_order=True,
        )
        for name in ("Cummax", "Cummin")
    ),
    GradRecord(
        "CumProd",
        _variants(
            "CumProd",
            **{
                "": {},
                "exclusive": {"exclusive": True},
                "reverse": {"reverse": True},
                "both": {"exclusive": True, "reverse": True},
            },
        ),
        _cumprod_samples,
        second_order=True,
    ),
    GradRecord(
        "Dropout",
        _variants("Dropout", **{"keep_prob=0.5": {}, "keep_prob=0.8": {"keep_prob": 0.8, "Seed0": 3, "Seed1": 4}}),
        unary(),
    ),
    GradRecord("DropoutExt", _variants("DropoutExt", **{"p=0.5": {}, "p=0.2": {"p": 0.2}}), _dropout_ext_samples),
    GradRecord(
        "DropoutGrad", _variants("DropoutGrad", **{"": {}, "keep_prob=0.8": {"keep_prob": 0.8}}), _dropout_grad_samples
    ),
    GradRecord("L2Loss", _variants("L2Loss"), unary(), second_order=True),
    GradRecord(
        "SmoothL1Loss",
        _variants(
            "SmoothL1Loss", **{r: {"reduction": r} for r in ("none", "sum", "mean")}, **{"beta=0.5": {"beta": 0.5}}
        ),
        _smooth_l1_samples,
    ),
    GradRecord(
        "BCEWithLogitsLoss",
        _variants("BCEWithLogitsLoss", **{r: {"reduction": r} for r in ("none", "sum", "mean")}),
        _bce_samples,
    ),
    GradRecord(
        "NLLLoss",
        _variants(
            "NLLLoss",
            **{
                "mean": {},
                "sum": {"reduction": "sum"},
                "none,ignore_index=1": {"reduction": "none", "ignore_index": 1},
            },
        ),
        _nll_samples,
    ),
    # -- end of the norm helper's block ----------------------------------------------------
    GradRecord("Maximum", _variants("Maximum"), binary(ties=True), second_order=True),
    GradRecord("Minimum", _variants("Minimum"), binary(ties=True), second_order=True),
    GradRecord(
        "MaximumGrad",
        _variants("MaximumGrad", **{"": {}, "grad_x=False": {"grad_x": False}, "grad_y=False": {"grad_y": False}}),
        _max_min_grad_samples,
        second_order=True,
    ),
    GradRecord(
        "MinimumGrad",
        _variants("MinimumGrad", **{"": {}, "grad_x=False": {"grad_x": False}}),
        _max_min_grad_samples,
        second_order=True,
    ),
    GradRecord("Square", _variants("Square"), unary(), second_order=True),
    GradRecord("Sqrt", _variants("Sqrt"), _sqrt_samples, second_order=True),
    GradRecord("SqrtGrad", _variants("SqrtGrad"), _sqrt_grad_samples, second_order=True),
    GradRecord("Equal", _variants("Equal"), _equal_samples, zero=True),
    *ELEMWISE_GRAD_RECORDS,
    *MATH_EXT_GRAD_RECORDS,
    # -- array (grad_array_ops.py) -----------------------------------------------------------
    GradRecord("Cast", _variants("Cast"), _cast_samples, second_order=True),
    GradRecord("Reshape", _variants("Reshape"), _reshape_samples, second_order=True),
    GradRecord("Transpose", _variants("Transpose"), _transpose_samples, second_order=True),
    GradRecord("ExpandDims", _variants("ExpandDims"), _expand_dims_samples, second_order=True),
    GradRecord(
        "Squeeze",
        _variants("Squeeze", **{"axis=()": {}, "axis=1": {"axis": 1}, "axis=(0,)": {"axis": (0,)}}),
        _squeeze_samples,
        second_order=True,
    ),
    GradRecord(
        "BroadcastTo",
        _variants("BroadcastTo", **{"[2, 3]": {"shape": (2, 3)}, "[2, 4, 3]": {"shape": (2, 4, 3)}}),
        _broadcast_to_samples,
        second_order=True,
    ),
    GradRecord("ZerosLike", _variants("ZerosLike"), _zeros_like_samples, zero=True),
    GradRecord("OnesLike", _variants("OnesLike"), _zeros_like_samples, zero=True),
    GradRecord("Fill", _variants("Fill"), _fill_samples, zero=True),
    GradRecord("Argmax", _variants("Argmax", **{"axis=-1": {}, "axis=0": {"axis": 0}}), _argmax_samples, zero=True),
    GradRecord("OneHot", _variants("OneHot", **{"axis=-1": {}, "axis=0": {"axis": 0}}), _one_hot_samples, zero=True),
    GradRecord("NMSWithMask", _variants("NMSWithMask"), _nms_with_mask_samples, zero=True),
    *(
        GradRecord(name, _variants(name, **_ROI_GRAD_ATTRS), _roi_align_grad_samples, second_order=True)
        for name in ("ROIAlign", "ROIAlignGrad")
    ),
]


# ---------------------------------------------------------------------------------------------
# Convolution and pooling (bprop/grad_conv_ops.py)

_CONV_GRAD_ATTRS = {
    "valid k3": {"out_channel": 2, "kernel_size": 3},
    "same s2 group2": {"out_channel": 4, "kernel_size": (3, 2), "pad_mode": "same", "stride": 2, "group": 2},
    "pad d2": {"out_channel": 3, "kernel_size": 2, "pad_mode": "pad", "pad": (1, 0, 2, 1), "dilation": 2},
}


def _conv_grad_shapes(prim):
    from opforge.geometry import conv_output_and_pads

    c = 2 * prim.group
    x_shape = (2, c, 5, 6)
    w_shape = (prim.out_channel, 2, *prim.kernel_size)
    t, b, left, right = prim.padding
    oh = conv_output_and_pads("", 5, prim.kernel_size[0], prim.stride[2], prim.dilation[2], prim.pad_mode, (t, b))[0]
    ow = conv_output_and_pads(
        "", 6, prim.kernel_size[1], prim.stride[3], prim.dilation[3], prim.pad_mode, (left, right)
    )[0]
    return x_shape, w_shape, (2, prim.out_channel, oh, ow)


def _conv2d_grad_samples(prim, rng):
    x_shape, w_shape, _ = _conv_grad_shapes(prim)
    yield GradSample((uniform(x_shape, rng=rng), uniform(w_shape, rng=rng)), f"x{list(x_shape)} w{list(w_shape)}")


def _conv2d_input_grad_samples(prim, rng):
    x_shape, w_shape, y_shape = _conv_grad_shapes(prim)
    yield GradSample((uniform(y_shape, rng=rng), uniform(w_shape, rng=rng), x_shape), f"dy{list(y_shape)}")


def _conv2d_filter_grad_samples(prim, rng):
    x_shape, w_shape, y_shape = _conv_grad_shapes(prim)
    yield GradSample((uniform(y_shape, rng=rng), uniform(x_shape, rng=rng), w_shape), f"dy{list(y_shape)}")


_POOL_GRAD_ATTRS = {
    "k2 s2 valid": {"kernel_size": 2, "strides": 2},
    "k3 s1 same": {"kernel_size": 3, "strides": 1, "pad_mode": "same"},
    "k(3,2) s(2,1) same": {"kernel_size": (3, 2), "strides": (2, 1), "pad_mode": "same"},
}


def _distinct(shape, rng):
    """Values at least 0.05 apart, so each window's maximum is unique within eps."""
    n = int(np.prod(shape))
    return np.asarray(rng.permutation(n) * 0.05 - n * 0.025, np.float64).reshape(shape)


def _pool_grad_samples_fd(prim, rng):
    yield GradSample((_distinct((2, 2, 5, 6), rng),), "x[2, 2, 5, 6]")


def _avg_pool_grad_grad_samples(prim, rng):
    from opforge.geometry import conv_output_and_pads

    x_shape = (2, 2, 5, 6)
    oh = conv_output_and_pads("", 5, prim.kernel_size[2], prim.strides[2], 1, prim.pad_mode)[0]
    ow = conv_output_and_pads("", 6, prim.kernel_size[3], prim.strides[3], 1, prim.pad_mode)[0]
    y = (2, 2, oh, ow)
    yield GradSample((uniform(x_shape, rng=rng), uniform(y, rng=rng), uniform(y, rng=rng)), f"x{list(x_shape)}")


def _max_pool_grad_grad_samples(prim, rng):
    """MaxPoolGrad(x, out, dout): x with distinct values (the maxima stay put within eps)."""
    from opforge.geometry import conv_output_and_pads

    x_shape = (2, 2, 5, 6)
    oh = conv_output_and_pads("", 5, prim.kernel_size[2], prim.strides[2], 1, prim.pad_mode)[0]
    ow = conv_output_and_pads("", 6, prim.kernel_size[3], prim.strides[3], 1, prim.pad_mode)[0]
    y = (2, 2, oh, ow)
    yield GradSample((_distinct(x_shape, rng), uniform(y, rng=rng), uniform(y, rng=rng)), f"x{list(x_shape)}")


def _max_pool_grad_grad_grad_samples(prim, rng):
    """MaxPoolGradGrad(x, out, grad): grad has x's shape."""
    from opforge.geometry import conv_output_and_pads

    x_shape = (2, 2, 5, 6)
    oh = conv_output_and_pads("", 5, prim.kernel_size[2], prim.strides[2], 1, prim.pad_mode)[0]
    ow = conv_output_and_pads("", 6, prim.kernel_size[3], prim.strides[3], 1, prim.pad_mode)[0]
    y = (2, 2, oh, ow)
    yield GradSample((_distinct(x_shape, rng), uniform(y, rng=rng), uniform(x_shape, rng=rng)), f"x{list(x_shape)}")


GRAD_DB_LIST += [
    GradRecord("Conv2D", _variants("Conv2D", **_CONV_GRAD_ATTRS), _conv2d_grad_samples, second_order=True),
    GradRecord(
        "Conv2DBackpropInput",
        _variants("Conv2DBackpropInput", **_CONV_GRAD_ATTRS),
        _conv2d_input_grad_samples,
        second_order=True,
    ),
    GradRecord(
        "Conv2DBackpropFilter",
        _variants("Conv2DBackpropFilter", **_CONV_GRAD_ATTRS),
        _conv2d_filter_grad_samples,
        second_order=True,
    ),
    GradRecord("MaxPool", _variants("MaxPool", **_POOL_GRAD_ATTRS), _pool_grad_samples_fd, second_order=True),
    GradRecord("AvgPool", _variants("AvgPool", **_POOL_GRAD_ATTRS), _pool_grad_samples_fd, second_order=True),
    GradRecord("AvgPoolGrad", _variants("AvgPoolGrad", **_POOL_GRAD_ATTRS), _avg_pool_grad_grad_samples),
    GradRecord(
        "MaxPoolGrad", _variants("MaxPoolGrad", **_POOL_GRAD_ATTRS), _max_pool_grad_grad_samples, second_order=True
    ),
    GradRecord(
        "MaxPoolGradGrad",
        _variants("MaxPoolGradGrad", **_POOL_GRAD_ATTRS),
        _max_pool_grad_grad_grad_samples,
        second_order=True,
    ),
]


# AdaptiveAvgPool2D (overlapping windows: 5 -> 3; larger outputs: 3 -> 5) and its gradient, linear in dy.
_ADAPTIVE_GRAD_SIZES = {"(3, 2)": (3, 2), "(None, 5)": (None, 5), "1": 1}


def _adaptive_pool_grad_samples(prim, rng):
    yield GradSample((uniform((2, 2, 5, 4), rng=rng),), "x[2, 2, 5, 4]")
    yield GradSample((uniform((2, 5, 3), rng=rng),), "x[2, 5, 3]")


def _adaptive_pool_grad_grad_samples(prim, rng):
    yield GradSample((uniform((2, 2, 3, 2), rng=rng), (2, 2, 5, 4)), "dy[2, 2, 3, 2] x[2, 2, 5, 4]")
    yield GradSample((uniform((2, 4, 5), rng=rng), (2, 3, 3)), "dy[2, 4, 5] x[2, 3, 3]")


GRAD_DB_LIST += [
    GradRecord(
        "AdaptiveAvgPool2D",
        _variants("AdaptiveAvgPool2D", **{k: {"output_size": v} for k, v in _ADAPTIVE_GRAD_SIZES.items()}),
        _adaptive_pool_grad_samples,
        second_order=True,
    ),
    GradRecord("AdaptiveAvgPool2DGrad", _variants("AdaptiveAvgPool2DGrad"), _adaptive_pool_grad_grad_samples),
]


# Data movement (helper "array": Concat, Stack, Split, Unstack, Slice, StridedSlice, their grads,
# ReverseV2, Tile, Select). Tuple-taking ops are differentiated through a wrapper taking the
# elements as arguments.


def _tuple_op(factory):
    return lambda: lambda *xs: factory()(xs)


def _parts_samples(shapes_list):
    def samples(prim, rng):
        for shapes in shapes_list:
            yield GradSample(tuple(uniform(s, rng=rng) for s in shapes), f"{[list(s) for s in shapes]}")

    return samples


def _one_input(shapes):
    def samples(prim, rng):
        for shape in shapes:
            yield GradSample((uniform(shape, rng=rng),), f"x{list(shape)}")

    return samples


def _slice_grad_samples(prim, rng):
    for shape, begin, size in [((4, 5), (1, 2), (2, 3)), ((5,), (0,), (-1,)), ((2, 3, 4), (1, 0, 1), (1, -1, 2))]:
        x = uniform(shape, rng=rng)
        yield GradSample((x, begin, size), f"x{list(shape)} begin={begin} size={size}")


def _slice_grad_grad_samples(prim, rng):
    for shape, begin, size, dy in [((4, 5), (1, 2), (2, 3), (2, 3)), ((5,), (1,), (-1,), (4,))]:
        yield GradSample((uniform(dy, rng=rng), uniform(shape, rng=rng), begin, size), f"x{list(shape)}", diff=(0,))


_STRIDED = [  # masks, shape, begin, end, strides
    ({}, (7,), (1,), (6,), (2,)),
    ({}, (4, 5), (3, 4), (0, 0), (-1, -2)),
    ({"shrink_axis_mask": 1, "end_mask": 2}, (4, 5), (1, 0), (0, 0), (1, 1)),
    ({"ellipsis_mask": 1, "new_axis_mask": 2}, (2, 3, 4), (0, 0, 1), (0, 0, 3), (1, 1, 1)),
]


def _strided_samples_for(masks):
    def samples(prim, rng):
        for m, shape, begin, end, strides in _STRIDED:
            if m == masks:
                yield GradSample((uniform(shape, rng=rng), begin, end, strides), f"x{list(shape)}")

    return samples


def _strided_grad_samples_for(masks):
    def samples(prim, rng):
        for m, shape, begin, end, strides in _STRIDED:
            if m == masks:
                dy = ops.StridedSlice(**m)(_zeros(shape), begin, end, strides)
                yield GradSample((uniform(dy.shape, rng=rng), shape, begin, end, strides), f"x{list(shape)}")

    return samples


def _zeros(shape):
    return Tensor(np.zeros(shape, np.float64))


def _tile_samples(prim, rng):
    for shape, multiples in [((3,), (2,)), ((2, 3), (2, 1)), ((2, 3), (1, 2, 2)), ((), (3,))]:
        yield GradSample((uniform(shape, rng=rng), multiples), f"x{list(shape)} multiples={multiples}")


def _select_samples(prim, rng):
    for shape in [(5,), (3, 4), ()]:
        cond = np.asarray(rng.random(shape) < 0.5)
        yield GradSample((cond, uniform(shape, rng=rng), uniform(shape, rng=rng)), f"{list(shape)}")


def _set_masks(prim) -> dict:
    names = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")
    return {k: getattr(prim, k) for k in names if getattr(prim, k)}


def _strided_key(m) -> str:
    return ",".join(f"{k}={v}" for k, v in m.items()) or "no masks"


def _bmm_samples(prim, rng):
    ta, tb = prim.transpose_a, prim.transpose_b
    for bx, by, m, k, n in [((2,), (2,), 2, 3, 2), ((2, 1), (3,), 2, 2, 3), ((), (2,), 3, 2, 2)]:
        a = uniform(bx + ((k, m) if ta else (m, k)), rng=rng)
        b = uniform(by + ((n, k) if tb else (k, n)), rng=rng)
        yield GradSample((a, b), f"x{list(a.shape)} y{list(b.shape)}")


def _gather_samples(prim, rng):
    for pshape, idx, axis in [
        ((5,), [0, 3, 3], 0),
        ((4, 3), [[1, 0], [3, 1]], 0),
        ((2, 4, 3), [2, 2, 0], 1),
        ((3, 4), 1, -1),
    ]:
        yield GradSample(
            (uniform(pshape, rng=rng), np.asarray(idx, np.int32), axis), f"params{list(pshape)} axis={axis}"
        )


def _gather_nd_samples(prim, rng):
    for xshape, idx in [((4, 3), [[1, 2], [1, 2], [0, 0]]), ((3, 4), [[2], [0]]), ((2, 3, 2), [[[1, 0]], [[0, 2]]])]:
        yield GradSample((uniform(xshape, rng=rng), np.asarray(idx, np.int64)), f"x{list(xshape)}")


def _tensor_scatter_samples(prim, rng):
    # Repeated rows where each row's gradient is exact with them (Add, Sub, Div); distinct rows otherwise
    # (of equal rows Update reads only the last; Mul's bprop, as MindSpore's, assumes distinct rows). Div
    # divides by updates away from 0; Max and Min's random operands have no ties.
    if prim.name[len("TensorScatter") :] in ("Add", "Sub", "Div"):
        cases = [((4, 3), [[1, 2], [1, 2], [0, 0]]), ((3, 4), [[2], [2]])]
    else:
        cases = [((4, 3), [[1, 2], [0, 1], [0, 0]]), ((3, 4), [[2], [0]])]
    low = 0.5 if "Div" in prim.name else -2.0
    for xshape, idx in cases:
        idx = np.asarray(idx, np.int64)
        updates = uniform(idx.shape[:-1] + xshape[idx.shape[-1] :], low=low, rng=rng)
        yield GradSample((uniform(xshape, rng=rng), idx, updates), f"x{list(xshape)} indices{list(idx.shape)}")


def _segment_grad_samples(prim, rng):
    for xshape, ids, n in [((4,), [0, 2, 0, 1], 3), ((3, 2), [1, 1, 0], 2), ((2, 2, 2), [[0, 1], [3, 1]], 4)]:
        yield GradSample((uniform(xshape, rng=rng), np.asarray(ids, np.int32), n), f"x{list(xshape)} n={n}")


def _distinct(shape, rng):
    """Values at least 0.1 apart (no ties, so the order is the same within eps)."""
    n = int(np.prod(shape))
    return np.asarray(rng.permutation(n) * 0.3 + rng.uniform(-0.05, 0.05, n), np.float64).reshape(shape)


def _topk_samples(prim, rng):
    for shape, k in [((5,), 2), ((3, 4), 3), ((2, 2, 3), 3)]:
        yield GradSample((_distinct(shape, rng), k), f"x{list(shape)} k={k}")


def _sort_grad_samples(prim, rng):
    for shape in [(5,), (3, 4), (2, 3, 2)]:
        if prim.axis < len(shape):
            yield GradSample((_distinct(shape, rng),), f"x{list(shape)}")


def _well_conditioned_samples(prim, rng):
    for shape in [(3, 3), (2, 2, 2), (1, 1)]:
        n = shape[-1]
        x = uniform(shape, -1.0, 1.0, rng=rng) + n * np.eye(n) * np.where(
            rng.uniform(size=shape[:-2] + (1, 1)) < 0.5, -1, 1
        )
        yield GradSample((x,), f"x{list(shape)}")


class _SymmetricCholesky:
    """Cholesky of (x + x^T) / 2 + n I: the gradient of a symmetric input, which Cholesky's bprop gives (the
    kernel reads one triangle, so finite differences of x itself see each off-diagonal pair once)."""

    def __init__(self, upper):
        self.prim = ops.Cholesky(upper)
        self.name = "Cholesky"

    def __call__(self, x):
        n = x.shape[-1]
        sym = ops.add(ops.mul(ops.add(x, ops.swapaxes(x, -1, -2)), 0.5), Tensor(n * np.eye(n), x.dtype))
        return self.prim(sym)


def _cholesky_samples(prim, rng):
    for shape in [(3, 3), (2, 2, 2), (1, 1)]:
        yield GradSample((uniform(shape, -1.0, 1.0, rng=rng),), f"x{list(shape)}")


def _decomposition_samples(prim, rng):
    """Tall, square and wide matrices (Qr: M >= N; full factorizations: square only, where their gradient is
    defined); random ones have distinct, nonzero singular values and a nonsingular R."""
    shapes = [(4, 3), (3, 3), (2, 4, 2)] + ([] if prim.name == "Qr" else [(3, 4)])
    for shape in shapes:
        if prim.full_matrices and shape[-1] != shape[-2]:
            continue
        yield GradSample((uniform(shape, rng=rng),), f"x{list(shape)}")


class _CtcLossOnly:
    """CTCLoss's loss output: its gradient output is a value of the call, not differentiated (as MindSpore's)."""

    def __init__(self, **attrs):
        self.prim = ops.CTCLoss(**attrs)
        self.name = "CTCLoss"

    def __call__(self, x, indices, values, seq_len):
        return self.prim(x, indices, values, seq_len)[0]


def _ctc_samples(prim, rng):
    indices = np.array([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]], np.int64)
    values = np.array([1, 1, 0, 2, 0], np.int32)
    yield GradSample((uniform((7, 2, 4), rng=rng), indices, values, np.array([7, 5], np.int32)), "x[7, 2, 4]")


def _eigh_grad_samples(prim, rng):
    """Matrices with eigenvalues well apart (the gradient of v divides by their gaps); the two triangles
    differ, so the gradient of the triangle not read (zero) is checked too."""
    for shape in [(3, 3), (2, 4, 4), (1, 1)]:
        n = shape[-1]
        yield GradSample((uniform(shape, -0.5, 0.5, rng=rng) + np.diag(np.arange(n) * 2.0),), f"x{list(shape)}")


def _pivoting_samples(prim, rng):
    """Well-conditioned matrices with their rows reversed: the factorization swaps rows (its largest entries
    are off the diagonal), the same swaps for small changes of the entries."""
    for sample in _well_conditioned_samples(prim, rng):
        (x,) = sample.args
        yield GradSample((np.ascontiguousarray(x[..., ::-1, :]),), sample.desc + " rows reversed")


def _solve_grad_samples(prim, rng):
    for shape, k in [((3, 3), 2), ((2, 2, 2), 1), ((1, 1), 3)]:
        n = shape[-1]
        a = uniform(shape, -1.0, 1.0, rng=rng) + n * np.eye(n)
        yield GradSample((a, uniform(shape[:-1] + (k,), rng=rng)), f"matrix{list(shape)} K={k}")


LINALG_GRAD_RECORDS = [
    GradRecord(
        "MatrixInverse",
        _variants("MatrixInverse", **{"adjoint=False": {}, "adjoint=True": {"adjoint": True}}),
        _well_conditioned_samples,
        second_order=True,
    ),
    GradRecord("MatrixDeterminant", _variants("MatrixDeterminant"), _well_conditioned_samples, second_order=True),
    GradRecord("LogMatrixDeterminant", _variants("LogMatrixDeterminant"), _well_conditioned_samples, second_order=True),
    GradRecord(
        "Cholesky",
        {"upper=False": lambda: _SymmetricCholesky(False), "upper=True": lambda: _SymmetricCholesky(True)},
        _cholesky_samples,
    ),
    GradRecord(
        "CTCLoss",
        {"": lambda: _CtcLossOnly(), "ctc_merge_repeated=False": lambda: _CtcLossOnly(ctc_merge_repeated=False)},
        _ctc_samples,
    ),
    GradRecord("Qr", _variants("Qr", reduced={}, full_matrices={"full_matrices": True}), _decomposition_samples),
    GradRecord(
        "Svd",
        _variants("Svd", reduced={}, full_matrices={"full_matrices": True}, s_only={"compute_uv": False}),
        _decomposition_samples,
    ),
    GradRecord(
        "Eigh",
        _variants("Eigh", lower={}, upper={"lower": False}, w_only={"compute_eigenvectors": False}),
        _eigh_grad_samples,
    ),
    GradRecord("Lu", _variants("Lu"), _pivoting_samples),
    GradRecord(
        "MatrixSolve",
        _variants("MatrixSolve", **{"adjoint=False": {}, "adjoint=True": {"adjoint": True}}),
        _solve_grad_samples,
        second_order=True,
    ),
    GradRecord(
        "MatrixTriangularSolve",
        _variants(
            "MatrixTriangularSolve",
            lower={},
            upper={"lower": False},
            lower_adjoint={"adjoint": True},
            upper_adjoint={"lower": False, "adjoint": True},
        ),
        _solve_grad_samples,
        second_order=True,
    ),
]


ARRAY_GRAD_RECORDS = [
    GradRecord("Range", _variants("Range"), lambda prim, rng: [GradSample((0, 5, 1), "0..5")], zero=True),
    GradRecord("TopK", _variants("TopK"), _topk_samples, second_order=True),
    GradRecord(
        "Sort",
        {
            "axis=-1": lambda: ops.Sort(),
            "axis=0 descending": lambda: ops.Sort(0, True),
            "axis=1": lambda: ops.Sort(1),
        },
        _sort_grad_samples,
        second_order=True,
    ),
    GradRecord("Gather", _variants("Gather"), _gather_samples, second_order=True),
    GradRecord("GatherNd", _variants("GatherNd"), _gather_nd_samples, second_order=True),
    GradRecord("TensorScatterUpdate", _variants("TensorScatterUpdate"), _tensor_scatter_samples, second_order=True),
    *(
        GradRecord(name, _variants(name), _tensor_scatter_samples, second_order="Max" not in name and "Min" not in name)
        for name in ("TensorScatterAdd", "TensorScatterSub", "TensorScatterMul", "TensorScatterDiv")
        + ("TensorScatterMax", "TensorScatterMin")
    ),
    GradRecord("UnsortedSegmentSum", _variants("UnsortedSegmentSum"), _segment_grad_samples, second_order=True),
    GradRecord(
        "AddN",
        {"": _tuple_op(lambda: ops.AddN())},
        _parts_samples([((2, 3),), ((2, 3), (2, 3)), ((3,), (3,), (3,))]),
        second_order=True,
    ),
    GradRecord(
        "BatchMatMul",
        _variants(
            "BatchMatMul",
            NN={},
            TN={"transpose_a": True},
            NT={"transpose_b": True},
            TT={"transpose_a": True, "transpose_b": True},
        ),
        _bmm_samples,
        second_order=True,
    ),
    GradRecord(
        "Concat",
        {"axis=0": _tuple_op(lambda: ops.Concat(0)), "axis=-1": _tuple_op(lambda: ops.Concat(-1))},
        _parts_samples([((2, 3), (2, 3)), ((2, 3), (2, 3), (2, 3))]),
        second_order=True,
    ),
    GradRecord(
        "Stack",
        {"axis=0": _tuple_op(lambda: ops.Stack(0)), "axis=1": _tuple_op(lambda: ops.Stack(1))},
        _parts_samples([((2, 3), (2, 3)), ((3,), (3,), (3,))]),
        second_order=True,
    ),
    GradRecord(
        "Split",
        {"axis=0 n=2": lambda: ops.Split(0, 2), "axis=1 n=3": lambda: ops.Split(1, 3)},
        _one_input([(4, 3), (2, 6)]),
        second_order=True,
    ),
    GradRecord(
        "Unstack",
        {"axis=0": lambda: ops.Unstack(0), "axis=-1": lambda: ops.Unstack(-1)},
        _one_input([(3, 2), (2, 3, 2)]),
        second_order=True,
    ),
    GradRecord("Slice", _variants("Slice"), _slice_grad_samples, second_order=True),
    GradRecord("SliceGrad", _variants("SliceGrad"), _slice_grad_grad_samples, second_order=True),
    GradRecord(
        "StridedSlice",
        {_strided_key(m): (lambda m=m: ops.StridedSlice(**m)) for m, *_ in _STRIDED},
        lambda prim, rng: _strided_samples_for(_set_masks(prim))(prim, rng),
        second_order=True,
    ),
    GradRecord(
        "StridedSliceGrad",
        {_strided_key(m): (lambda m=m: ops.StridedSliceGrad(**m)) for m, *_ in _STRIDED},
        lambda prim, rng: _strided_grad_samples_for(_set_masks(prim))(prim, rng),
        second_order=True,
    ),
    GradRecord(
        "ReverseV2",
        {"axis=(0,)": lambda: ops.ReverseV2((0,)), "axis=(0, -1)": lambda: ops.ReverseV2((0, -1))},
        _one_input([(3, 4), (2, 3, 2)]),
        second_order=True,
    ),
    GradRecord("Tile", _variants("Tile"), _tile_samples, second_order=True),
    GradRecord(
        "Pad", {"((1,0),(2,1))": lambda: ops.Pad(((1, 0), (2, 1)))}, _one_input([(3, 4), (2, 1)]), second_order=True
    ),
    GradRecord("Select", _variants("Select"), _select_samples, second_order=True),
]

GRAD_DB_LIST = GRAD_DB_LIST + ARRAY_GRAD_RECORDS + LINALG_GRAD_RECORDS

# Conj (complex branch): on float64 samples it is the identity, so its bprop conj(dout) is dout. The
# complex gradients of the holomorphic ops (dx = dout * conj(f'(x))) are checked against finite
# differences of a real loss in tests/test_complex.py.
COMPLEX_GRAD_RECORDS = [GradRecord("Conj", _variants("Conj"), unary(), second_order=True)]
GRAD_DB_LIST = GRAD_DB_LIST + COMPLEX_GRAD_RECORDS

# The collectives, in the world of one rank that tests/op_db_comm.py starts (each is an identity there):
# their bprops are collectives too. Send's needs a second rank to send the gradient back, so it is
# checked under mpiexec instead (GRAD_ELSEWHERE); Receive has no input to differentiate.
COMM_GRAD_RECORDS = [
    GradRecord(
        "AllReduce",
        {op: (lambda op=op: ops.AllReduce(op)) for op in ("sum", "max", "min")},
        _one_input([(3, 4), (5,), ()]),
        second_order=True,
    ),
    GradRecord("AllGather", _variants("AllGather"), _one_input([(3, 4), (5,)]), second_order=True),
    GradRecord("ReduceScatter", _variants("ReduceScatter"), _one_input([(3, 4), (5,)]), second_order=True),
    GradRecord(
        "Broadcast",
        {"root_rank=0": _tuple_op(lambda: ops.Broadcast(0))},
        _parts_samples([((2, 3),), ((2, 3), (3,))]),
        second_order=True,
    ),
    GradRecord(
        "AlltoAll",
        {"0->1": lambda: ops.AlltoAll(1, 0, 1), "-1->0": lambda: ops.AlltoAll(1, -1, 0)},
        _one_input([(3, 4), (2, 3, 2)]),
        second_order=True,
    ),
]
GRAD_DB_LIST = GRAD_DB_LIST + COMM_GRAD_RECORDS

# -- the activations of MindSpore's nn list (bprops composed in grad_nn_activation_ops.py) -----------
_SHRINK_KINKS = (-1.5, -0.5, 0.5, 1.5)  # +-lambd of both variants
NN_ACTIVATION_GRAD_RECORDS = [
    GradRecord("SeLU", _variants("SeLU"), unary(-3.0, 3.0, kinks=(0.0,)), second_order=True),
    GradRecord(
        "CeLU",
        _variants("CeLU", **{"alpha=1.0": {}, "alpha=0.5": {"alpha": 0.5}, "alpha=-2.0": {"alpha": -2.0}}),
        unary(-3.0, 3.0, kinks=(0.0,)),
        second_order=True,
    ),
    GradRecord("Softsign", _variants("Softsign"), unary(-4.0, 4.0, kinks=(0.0,)), second_order=True),
    GradRecord(
        "HShrink",
        _variants("HShrink", **{"lambd=0.5": {}, "lambd=1.5": {"lambd": 1.5}}),
        unary(-3.0, 3.0, kinks=_SHRINK_KINKS),
        second_order=True,
    ),
    GradRecord(
        "SoftShrink",
        _variants("SoftShrink", **{"lambd=0.5": {}, "lambd=1.5": {"lambd": 1.5}}),
        unary(-3.0, 3.0, kinks=_SHRINK_KINKS),
        second_order=True,
    ),
    GradRecord("Mish", _variants("Mish"), unary(-4.0, 4.0), second_order=True),
]
GRAD_DB_LIST = GRAD_DB_LIST + NN_ACTIVATION_GRAD_RECORDS
# Operators whose gradients are checked elsewhere, where they can run.
GRAD_ELSEWHERE = {"Send": "tests/mpi_scripts/collectives.py under mpiexec -n 2 and -n 3 (tests/test_communication.py)"}

GRAD_DB: dict = {r.name: r for r in GRAD_DB_LIST}
assert len(GRAD_DB) == len(GRAD_DB_LIST), "two gradient records for one op"

# Operators that are not differentiable by design (in-place updates): they have no bprop, and using
# them inside differentiated code raises a TypeError naming them.
NON_DIFFERENTIABLE = {
    "Assign",
    "AssignSub",
    "ApplyGradientDescent",
    "FusedMatMulApplyGradientDescent",
    "ApplyMomentum",
    "Adam",
    "ApplyRMSProp",
    "ApplyCenteredRMSProp",
    "ApplyAdagrad",
    "AdamWeightDecay",
    "ScatterUpdate",
    "ScatterNdUpdate",
    *(f"{spelling}{r}" for spelling in ("Scatter", "ScatterNd") for r in ("Add", "Sub", "Mul", "Div", "Max", "Min")),
}
# Grad operators whose own gradient (a second order of BatchNorm, LayerNorm, SmoothL1Loss, NLLLoss, the
# recurrent layers) is not implemented: differentiating through one raises a TypeError naming it.
NON_DIFFERENTIABLE |= {"BatchNormGrad", "LayerNormGrad", "SmoothL1LossGrad", "NLLLossGrad"}
NON_DIFFERENTIABLE |= {"LSTMLayerGrad", "GRULayerGrad", "RNNLayerGrad", "ScaledDotProductAttentionGrad"}
# Receive takes no input: nothing to differentiate (the receiving rank sends a gradient back with Send).
NON_DIFFERENTIABLE |= {"Receive"}
# The random kernels' inputs are a shape and their generator's seeds: nothing to differentiate.
NON_DIFFERENTIABLE |= {"Randn", "RandExt", "RandInt", "RandGamma", "RandPoisson"}
