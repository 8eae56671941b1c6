"""The MindSpore 2.x losses built from primitives in opforge/ops/functional_loss.py and opforge/nn/loss.py
(HuberLoss, MarginRankingLoss, TripletMarginLoss, HingeEmbeddingLoss, SoftMarginLoss, MultiMarginLoss,
MultilabelMarginLoss, PoissonNLLLoss, GaussianNLLLoss, RMSELoss, MAELoss, DiceLoss, MultiClassDiceLoss, their
functional forms, ops.l1_loss, ops.smooth_l1_loss, ops.binary_cross_entropy_with_logits and
ops.SigmoidCrossEntropyWithLogits): MindSpore's documented examples, NumPy references in float32 and float16 for
every reduction, gradients against central differences in float64, jit against eager, and bad arguments."""

from __future__ import annotations

import numpy as np
import pytest

import opforge
from opforge import Tensor, nn, ops
from opforge.ops import operations as P
from opforge.testing import numeric_grad

REDUCTIONS = ["none", "mean", "sum"]
DTYPES = {"float32": (np.float32, 1e-5, 1e-6), "float16": (np.float16, 2e-2, 5e-3)}


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def _f64(*arrays):
    return [np.asarray(a, np.float64) for a in arrays]


# -- NumPy references (float64) ---------------------------------------------------------------------------


def np_l1(x, y, reduction="mean"):
    x, y = _f64(x, y)
    return _reduce(np.abs(x - y), reduction)


def np_smooth_l1(x, y, beta=1.0, reduction="none"):
    x, y = _f64(x, y)
    d = np.abs(x - y)
    return _reduce(np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction)


def np_huber(x, y, reduction="mean", delta=1.0):
    x, y = _f64(x, y)
    d = np.abs(x - y)
    return _reduce(np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)


def np_bce_logits(x, y, weight=None, pos_weight=None, reduction="mean"):
    x, y = _f64(x, y)
    w = 1.0 if weight is None else np.asarray(weight, np.float64)
    pw = 1.0 if pos_weight is None else np.asarray(pos_weight, np.float64)
    log_sig = -np.logaddexp(0.0, -x)
    log_one_minus = -np.logaddexp(0.0, x)
    return _reduce(-w * (pw * y * log_sig + (1 - y) * log_one_minus), reduction)


def np_margin_ranking(x1, x2, y, margin=0.0, reduction="mean"):
    x1, x2, y = _f64(x1, x2, y)
    return _reduce(np.maximum(0.0, -y * (x1 - x2) + margin), reduction)


def _np_dist(a, b, p, eps):
    return (np.abs(a - b + eps) ** p).sum(axis=1) ** (1.0 / p)


def np_triplet(a, pos, neg, margin=1.0, p=2, eps=1e-6, swap=False, reduction="mean"):
    a, pos, neg = _f64(a, pos, neg)
    d_pos, d_neg = _np_dist(a, pos, p, eps), _np_dist(a, neg, p, eps)
    if swap:
        d_neg = np.minimum(d_neg, _np_dist(pos, neg, p, eps))
    return _reduce(np.maximum(d_pos - d_neg + margin, 0.0), reduction)


def np_hinge(x, y, margin=1.0, reduction="mean"):
    x, y = _f64(x, y)
    return _reduce(np.where(y > 0, x, 0.0) + np.where(y < 0, np.maximum(0.0, margin - x), 0.0), reduction)


def np_soft_margin(x, y, reduction="mean"):
    x, y = _f64(x, y)
    return _reduce(np.logaddexp(0.0, -y * x), reduction)


def np_multi_margin(x, target, p=1, margin=1.0, weight=None, reduction="mean"):
    (x,) = _f64(x)
    n, c = x.shape
    loss = np.zeros(n)
    for i in range(n):
        y = target[i]
        for j in range(c):
            if j != y:
                loss[i] += max(0.0, margin - x[i, y] + x[i, j]) ** p
        loss[i] *= 1.0 if weight is None else float(weight[y])
    return _reduce(loss / c, reduction)


def np_multilabel_margin(x, target, reduction="mean"):
    (x,) = _f64(x)
    squeeze = x.ndim == 1
    x, target = np.atleast_2d(x), np.atleast_2d(target)
    n, c = x.shape
    loss = np.zeros(n)
    for i in range(n):
        targets = []
        for t in target[i]:
            if t < 0:
                break
            targets.append(int(t))
        for j in targets:
            for k in range(c):
                if k not in targets:
                    loss[i] += max(0.0, 1.0 - (x[i, j] - x[i, k]))
    loss /= c
    return loss[0] if squeeze and reduction == "none" else _reduce(loss, reduction)


def np_poisson(x, y, log_input=True, full=False, eps=1e-8, reduction="mean"):
    x, y = _f64(x, y)
    loss = np.exp(x) - y * x if log_input else x - y * np.log(x + eps)
    if full:
        safe = np.where(y > 1, y, 1.0)
        loss = loss + np.where(y > 1, safe * np.log(safe) - safe + 0.5 * np.log(2 * np.pi * safe), 0.0)
    return _reduce(loss, reduction)


def np_gaussian(x, y, var, full=False, eps=1e-6, reduction="mean"):
    x, y, var = _f64(x, y, var)
    if var.ndim == x.ndim - 1:
        var = var[..., None]
    var = np.maximum(var, eps)
    loss = 0.5 * (np.log(var) + (x - y) ** 2 / var) + (0.5 * np.log(2 * np.pi) if full else 0.0)
    return _reduce(loss, reduction)


def np_dice(x, y, smooth=1e-5):
    x, y = _f64(x, y)
    return 1.0 - 2.0 * (x * y).sum() / ((x * x).sum() + (y * y).sum() + smooth)


def np_multiclass_dice(x, y, weights=None, ignore=None, activation="softmax"):
    x, y = _f64(x, y)
    if activation == "softmax":
        z = np.exp(x - x.max(axis=-1, keepdims=True))
        x = z / z.sum(axis=-1, keepdims=True)
    elif activation == "sigmoid":
        x = 1.0 / (1.0 + np.exp(-x))
    total = 0.0
    for i in range(y.shape[1]):
        if i != ignore:
            total += np_dice(x[:, i], y[:, i]) * (1.0 if weights is None else float(weights[i]))
    return total / y.shape[1]


# -- MindSpore's documented examples ----------------------------------------------------------------------


def _t(values, dtype=np.float32):
    return Tensor(np.array(values, dtype))


def test_documented_examples():
    f32 = opforge.float32
    out = nn.HuberLoss()(_t([1, 2, 3]), _t([1, 2, 2]))
    np.testing.assert_allclose(out.asnumpy(), 0.16666667, rtol=1e-6)
    out = ops.huber_loss(_t([1, 2, 10, 2]), _t([1, 5, 1, 20]), reduction="mean", delta=2)
    np.testing.assert_allclose(out.asnumpy(), 13.5, rtol=1e-6)
    out = ops.l1_loss(_t([[1, 2, 3], [4, 5, 6]]), _t([[6, 5, 4], [3, 2, 1]]))
    np.testing.assert_allclose(out.asnumpy(), 3.0)
    np.testing.assert_allclose(ops.smooth_l1_loss(_t([1, 2, 3]), _t([1, 2, 2])).asnumpy(), [0, 0, 0.5])

    logits, labels = _t([[-0.8, 1.2, 0.7], [-0.1, -0.4, 0.7]]), _t([[0.3, 0.8, 1.2], [-0.6, 0.1, 2.2]])
    ones = _t([1, 1, 1])
    np.testing.assert_allclose(
        ops.binary_cross_entropy_with_logits(logits, labels, ones, ones).asnumpy(), 0.3463612, rtol=1e-6
    )
    want = [[0.6111007, 0.5032824, 0.26318604], [0.58439666, 0.5530153, -0.4368139]]
    np.testing.assert_allclose(ops.SigmoidCrossEntropyWithLogits()(logits, labels).asnumpy(), want, rtol=1e-5)
    np.testing.assert_allclose(P.SigmoidCrossEntropyWithLogits()(logits, labels).asnumpy(), want, rtol=1e-5)

    input1, input2 = _t([0.3864, -2.4093, -1.4076]), _t([-0.6012, -1.6681, 1.2928])
    target = ops.Sign()(_t([-2, -2, 3]))
    np.testing.assert_allclose(
        nn.MarginRankingLoss(reduction="none")(input1, input2, target).asnumpy(), [0.98759997, 0.0, 2.7003999], 1e-6
    )
    np.testing.assert_allclose(nn.MarginRankingLoss()(input1, input2, target).asnumpy(), 1.2293333, rtol=1e-6)
    np.testing.assert_allclose(
        nn.MarginRankingLoss(reduction="sum")(input1, input2, target).asnumpy(), 3.6879997, rtol=1e-6
    )
    np.testing.assert_allclose(ops.margin_ranking_loss(input1, input2, target).asnumpy(), 1.2293333, rtol=1e-6)

    x, pos, neg = _t([[0.3, 0.7], [0.5, 0.5]]), _t([[0.4, 0.6], [0.4, 0.6]]), _t([[0.2, 0.9], [0.3, 0.7]])
    np.testing.assert_allclose(nn.TripletMarginLoss()(x, pos, neg).asnumpy(), 0.8881968, rtol=1e-6)
    np.testing.assert_allclose(nn.TripletMarginLoss()(x, pos, neg, Tensor(1.0, f32)).asnumpy(), 0.8881968, 1e-6)
    np.testing.assert_allclose(ops.triplet_margin_loss(x, pos, neg).asnumpy(), 0.8881968, rtol=1e-6)

    arr1 = _t(np.array([0.9, -1.2, 2, 0.8, 3.9, 2, 1, 0, -1]).reshape(3, 3))
    arr2 = _t(np.array([1, 1, -1, 1, -1, 1, -1, 1, 1]).reshape(3, 3))
    np.testing.assert_allclose(nn.HingeEmbeddingLoss(1.0, "mean")(arr1, arr2).asnumpy(), 0.16666667, rtol=1e-6)
    np.testing.assert_allclose(ops.hinge_embedding_loss(arr1, arr2, 1.0, "mean").asnumpy(), 0.16666667, 1e-6)

    labels = _t([[-1, 1], [1, -1]])
    np.testing.assert_allclose(nn.SoftMarginLoss()(x, labels).asnumpy(), 0.6764238, rtol=1e-6)
    np.testing.assert_allclose(ops.soft_margin_loss(x, labels).asnumpy(), 0.6764238, rtol=1e-6)

    scores, classes = _t(np.ones((3, 3))), Tensor(np.array([1, 2, 1], np.int64))
    np.testing.assert_allclose(ops.multi_margin_loss(scores, classes, weight=ones).asnumpy(), 0.6666667, 1e-6)
    np.testing.assert_allclose(nn.MultiMarginLoss()(scores, classes, ones).asnumpy(), 0.6666667, rtol=1e-6)

    scores = _t([[0.1, 0.2, 0.4, 0.8], [0.2, 0.3, 0.5, 0.7]])
    targets = Tensor(np.array([[1, 2, 0, 3], [2, 3, -1, 1]], np.int32))
    np.testing.assert_allclose(nn.MultilabelMarginLoss()(scores, targets).asnumpy(), 0.325, rtol=1e-6)
    np.testing.assert_allclose(ops.multilabel_margin_loss(scores, targets).asnumpy(), 0.325, rtol=1e-6)

    out = nn.PoissonNLLLoss()(Tensor([[0.3, 0.7], [0.5, 0.5]]), Tensor([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_allclose(out.asnumpy(), 0.3652635, rtol=1e-6)

    mean, target = _t(np.arange(8).reshape(4, 2)), _t(np.array([2, 3, 1, 4, 6, 4, 4, 9]).reshape(4, 2))
    var = _t(np.ones((4, 1)))
    np.testing.assert_allclose(nn.GaussianNLLLoss()(mean, target, var).asnumpy(), 1.4374993, rtol=1e-6)
    np.testing.assert_allclose(ops.gaussian_nll_loss(mean, target, var).asnumpy(), 1.4374993, rtol=1e-6)

    np.testing.assert_allclose(nn.RMSELoss()(_t([1, 2, 3]), _t([1, 2, 2])).asnumpy(), 0.57735026, rtol=1e-6)
    np.testing.assert_allclose(nn.MAELoss()(_t([1, 2, 3]), _t([1, 2, 2])).asnumpy(), 0.33333334, rtol=1e-6)
    int_labels = Tensor(np.array([1, 2, 2], np.int32))  # promoted by the subtraction, as MindSpore's |x - y|
    np.testing.assert_allclose(nn.MAELoss()(_t([1, 2, 3]), int_labels).asnumpy(), 0.33333334, rtol=1e-6)
    logits, labels = _t([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]]), _t([[0, 1], [1, 0], [0, 1]])
    np.testing.assert_allclose(nn.DiceLoss(smooth=1e-5)(logits, labels).asnumpy(), 0.38596618, rtol=1e-6)
    logits = _t([[0.2, 0.5, 0.7], [0.3, 0.1, 0.5], [0.9, 0.6, 0.3]])
    labels = _t([[0, 1, 0], [1, 0, 0], [0, 0, 1]])
    out = nn.MultiClassDiceLoss(weights=None, ignore_indiex=None, activation="softmax")(logits, labels)
    np.testing.assert_allclose(out.asnumpy(), 0.54958105, rtol=1e-6)


# -- NumPy references for every reduction, float32 and float16 --------------------------------------------


def _signs(rng, shape):
    return np.where(rng.uniform(size=shape) < 0.5, -1.0, 1.0)


def _cases(rng, np_dtype, reduction):
    """(name, opforge call, NumPy reference) triples, inputs drawn in ``np_dtype``."""

    def arr(*shape, low=-2.0, high=2.0):
        return rng.uniform(low, high, shape).astype(np_dtype)

    x, y = arr(3, 4), arr(3, 4)
    yb = arr(1, 4)  # broadcasts against x
    a, p, n = arr(4, 5, 2), arr(4, 5, 2), arr(4, 5, 2)
    signs = _signs(rng, (3, 4)).astype(np_dtype)
    probs = rng.uniform(0.0, 1.0, (3, 4)).astype(np_dtype)
    classes = rng.integers(0, 5, 6).astype(np.int64)
    scores = arr(6, 5)
    labels = np.array([[3, 0, -1, 2, 1], [4, -1, 0, 0, 0], [0, 1, 2, 3, 4], [-1, 2, 3, 0, 1]], np.int32)
    multi_scores = arr(4, 5)
    counts = rng.integers(0, 5, (3, 4)).astype(np_dtype)
    var = rng.uniform(0.5, 2.0, (3,)).astype(np_dtype)
    T = Tensor  # noqa: N806
    r = reduction
    return [
        ("l1_loss", lambda: ops.l1_loss(T(x), T(yb), r), lambda: np_l1(x, yb, r)),
        ("MAELoss", lambda: nn.MAELoss(r)(T(x), T(y)), lambda: np_l1(x, y, r)),
        ("smooth_l1_loss", lambda: ops.smooth_l1_loss(T(x), T(y), 0.5, r), lambda: np_smooth_l1(x, y, 0.5, r)),
        ("huber_loss", lambda: ops.huber_loss(T(x), T(yb), r, 0.7), lambda: np_huber(x, yb, r, 0.7)),
        ("HuberLoss", lambda: nn.HuberLoss(r, 2)(T(x), T(y)), lambda: np_huber(x, y, r, 2.0)),
        (
            "margin_ranking_loss",
            lambda: ops.margin_ranking_loss(T(x), T(y), T(signs), 0.3, r),
            lambda: np_margin_ranking(x, y, signs, 0.3, r),
        ),
        (
            "MarginRankingLoss",
            lambda: nn.MarginRankingLoss(-0.2, r)(T(x), T(y), T(signs)),
            lambda: np_margin_ranking(x, y, signs, -0.2, r),
        ),
        (
            "triplet_margin_loss",
            lambda: ops.triplet_margin_loss(T(a), T(p), T(n), 0.5, 2, 1e-6, False, r),
            lambda: np_triplet(a, p, n, 0.5, 2, 1e-6, False, r),
        ),
        (
            "TripletMarginLoss(p=1, swap)",
            lambda: nn.TripletMarginLoss(1, True, 1e-6, r, 1.5)(T(a), T(p), T(n)),
            lambda: np_triplet(a, p, n, 1.5, 1, 1e-6, True, r),
        ),
        (
            "TripletMarginLoss(p=3)",
            lambda: nn.TripletMarginLoss(3, False, 1e-6, r)(T(a), T(p), T(n)),
            lambda: np_triplet(a, p, n, 1.0, 3, 1e-6, False, r),
        ),
        (
            "hinge_embedding_loss",
            lambda: ops.hinge_embedding_loss(T(x), T(signs.astype(np.int32)), 0.5, r),
            lambda: np_hinge(x, signs, 0.5, r),
        ),
        (
            "HingeEmbeddingLoss",
            lambda: nn.HingeEmbeddingLoss(1, r)(T(x), T(signs)),
            lambda: np_hinge(x, signs, 1.0, r),
        ),
        ("soft_margin_loss", lambda: ops.soft_margin_loss(T(x), T(signs), r), lambda: np_soft_margin(x, signs, r)),
        ("SoftMarginLoss", lambda: nn.SoftMarginLoss(r)(T(x), T(signs)), lambda: np_soft_margin(x, signs, r)),
        (
            "multi_margin_loss",
            lambda: ops.multi_margin_loss(T(scores), T(classes), 2, 0.8, None, r),
            lambda: np_multi_margin(scores, classes, 2, 0.8, None, r),
        ),
        (
            "multilabel_margin_loss",
            lambda: ops.multilabel_margin_loss(T(multi_scores), T(labels), r),
            lambda: np_multilabel_margin(multi_scores, labels, r),
        ),
        (
            "MultilabelMarginLoss(1-D)",
            lambda: nn.MultilabelMarginLoss(r)(T(multi_scores[0]), T(labels[0])),
            lambda: np_multilabel_margin(multi_scores[0], labels[0], r),
        ),
        (
            "PoissonNLLLoss",
            lambda: nn.PoissonNLLLoss(True, True, 1e-8, r)(T(x), T(counts)),
            lambda: np_poisson(x, counts, True, True, 1e-8, r),
        ),
        (
            "PoissonNLLLoss(rates)",
            lambda: nn.PoissonNLLLoss(False, False, 1e-8, r)(T(probs), T(counts)),
            lambda: np_poisson(probs, counts, False, False, 1e-8, r),
        ),
        (
            "gaussian_nll_loss",
            lambda: ops.gaussian_nll_loss(T(x), T(y), T(var), True, 1e-6, r),
            lambda: np_gaussian(x, y, var, True, 1e-6, r),
        ),
        (
            "GaussianNLLLoss",
            lambda: nn.GaussianNLLLoss(reduction=r)(T(x), T(y), T(probs)),
            lambda: np_gaussian(x, y, probs, False, 1e-6, r),
        ),
    ]


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_losses_match_numpy(rng, dtype, reduction):
    np_dtype, rtol, atol = DTYPES[dtype]
    for name, call, reference in _cases(rng, np_dtype, reduction):
        out = call()
        want = reference()
        assert out.dtype == Tensor(np.zeros(1, np_dtype)).dtype, name
        assert tuple(out.shape) == np.shape(want), name
        np.testing.assert_allclose(out.asnumpy().astype(np.float64), want, rtol=rtol, atol=atol, err_msg=name)


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_weighted_losses_match_numpy(rng, dtype, reduction):
    np_dtype, rtol, atol = DTYPES[dtype]
    x = rng.uniform(-2, 2, (3, 4)).astype(np_dtype)
    probs = rng.uniform(0, 1, (3, 4)).astype(np_dtype)
    w, pw = rng.uniform(0.5, 2, (4,)).astype(np_dtype), rng.uniform(0.5, 2, (1, 4)).astype(np_dtype)
    out = ops.binary_cross_entropy_with_logits(Tensor(x), Tensor(probs), Tensor(w), Tensor(pw), reduction)
    np.testing.assert_allclose(out.asnumpy(), np_bce_logits(x, probs, w, pw, reduction), rtol=rtol, atol=atol)
    out = ops.binary_cross_entropy_with_logits(Tensor(x), Tensor(probs), reduction=reduction)
    np.testing.assert_allclose(out.asnumpy(), np_bce_logits(x, probs, reduction=reduction), rtol=rtol, atol=atol)
    scores = rng.uniform(-2, 2, (6, 5)).astype(np_dtype)
    classes = rng.integers(0, 5, 6)
    weight = rng.uniform(0.5, 2, 5).astype(np_dtype)
    out = nn.MultiMarginLoss(1, 1.0, reduction, Tensor(weight))(Tensor(scores), Tensor(classes.astype(np.int32)))
    want = np_multi_margin(scores, classes, 1, 1.0, weight, reduction)
    np.testing.assert_allclose(out.asnumpy(), want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_rmse_and_dice_losses_match_numpy(rng, dtype):
    np_dtype, rtol, atol = DTYPES[dtype]
    x, y = rng.uniform(-2, 2, (3, 4)).astype(np_dtype), rng.uniform(-2, 2, (1, 4)).astype(np_dtype)
    want = np.sqrt(((x.astype(np.float64) - y) ** 2).mean())
    np.testing.assert_allclose(nn.RMSELoss()(Tensor(x), Tensor(y)).asnumpy(), want, rtol=rtol)
    probs = rng.uniform(0, 1, (2, 3, 4, 4)).astype(np_dtype)
    mask = (rng.uniform(size=(2, 3, 4, 4)) < 0.5).astype(np_dtype)
    np.testing.assert_allclose(nn.DiceLoss()(Tensor(probs), Tensor(mask)).asnumpy(), np_dice(probs, mask), rtol=rtol)
    weights = rng.uniform(0.5, 2, 3).astype(np_dtype)
    for kwargs in (
        {},
        {"weights": Tensor(weights), "ignore_indiex": 1},
        {"activation": "sigmoid"},
        {"activation": None},
        {"activation": nn.Sigmoid()},
    ):
        activation = kwargs.get("activation", "softmax")
        activation = "sigmoid" if isinstance(activation, nn.Cell) else activation
        w = weights if "weights" in kwargs else None
        want = np_multiclass_dice(probs, mask, w, kwargs.get("ignore_indiex"), activation)
        out = nn.MultiClassDiceLoss(**kwargs)(Tensor(probs), Tensor(mask))
        np.testing.assert_allclose(out.asnumpy(), want, rtol=rtol, atol=atol, err_msg=str(kwargs))


# -- Gradients against central differences (float64) ------------------------------------------------------


def _grad_cases(rng):
    """(name, loss of one float64 array, NumPy reference of it, the point)."""
    x, y = rng.uniform(-2, 2, (3, 4)), rng.uniform(-2, 2, (3, 4))
    signs = _signs(rng, (3, 4))
    a, p, n = rng.uniform(-2, 2, (3, 4, 2)), rng.uniform(-2, 2, (3, 4, 2)), rng.uniform(-2, 2, (3, 4, 2))
    classes = rng.integers(0, 4, 3)
    labels = np.array([[2, 0, -1, 1], [3, -1, 0, 0], [1, 2, 3, 0]], np.int32)
    counts = rng.integers(0, 5, (3, 4)).astype(np.float64)
    var = rng.uniform(0.5, 2.0, (3, 4))
    mask = (rng.uniform(size=(3, 4)) < 0.5).astype(np.float64)

    def T(v):  # noqa: N802 (the point arrives as a Tensor, the constants as arrays)
        return v if isinstance(v, Tensor) else Tensor(v)

    return [
        ("l1_loss", lambda v: ops.l1_loss(T(v), T(y)), lambda v: np_l1(v, y), x),
        (
            "smooth_l1_loss",
            lambda v: ops.smooth_l1_loss(T(v), T(y), 0.8, "mean"),
            lambda v: np_smooth_l1(v, y, 0.8, "mean"),
            x,
        ),
        ("huber_loss", lambda v: ops.huber_loss(T(v), T(y), "sum", 0.6), lambda v: np_huber(v, y, "sum", 0.6), x),
        (
            "binary_cross_entropy_with_logits",
            lambda v: ops.binary_cross_entropy_with_logits(T(v), T(mask)),
            lambda v: np_bce_logits(v, mask),
            x,
        ),
        (
            "SigmoidCrossEntropyWithLogits",
            lambda v: ops.SigmoidCrossEntropyWithLogits()(T(v), T(mask)).sum(),
            lambda v: np_bce_logits(v, mask, reduction="sum"),
            x,
        ),
        (
            "margin_ranking_loss",
            lambda v: ops.margin_ranking_loss(T(v), T(y), T(signs), 0.1),
            lambda v: np_margin_ranking(v, y, signs, 0.1),
            x,
        ),
        (
            "triplet_margin_loss",
            lambda v: ops.triplet_margin_loss(T(v), T(p), T(n), 3.0, swap=True),
            lambda v: np_triplet(v, p, n, 3.0, swap=True),
            a,
        ),
        (
            "TripletMarginLoss(p=3)",
            lambda v: nn.TripletMarginLoss(3, margin=3.0)(T(a), T(v), T(n)),
            lambda v: np_triplet(a, v, n, 3.0, 3),
            p,
        ),
        (
            "hinge_embedding_loss",
            lambda v: ops.hinge_embedding_loss(T(v), T(signs), 1.5),
            lambda v: np_hinge(v, signs, 1.5),
            x,
        ),
        ("soft_margin_loss", lambda v: ops.soft_margin_loss(T(v), T(signs)), lambda v: np_soft_margin(v, signs), x),
        (
            "multi_margin_loss",
            lambda v: ops.multi_margin_loss(T(v), T(classes), 2, 1.5, T(np.array([0.5, 1.0, 2.0, 1.5]))),
            lambda v: np_multi_margin(v, classes, 2, 1.5, [0.5, 1.0, 2.0, 1.5]),
            x,
        ),
        (
            "multilabel_margin_loss",
            lambda v: ops.multilabel_margin_loss(T(v), T(labels), "sum"),
            lambda v: np_multilabel_margin(v, labels, "sum"),
            x,
        ),
        (
            "PoissonNLLLoss",
            lambda v: nn.PoissonNLLLoss(full=True)(T(v), T(counts)),
            lambda v: np_poisson(v, counts, full=True),
            x,
        ),
        (
            "gaussian_nll_loss(var)",
            lambda v: ops.gaussian_nll_loss(T(x), T(y), T(v), True),
            lambda v: np_gaussian(x, y, v, True),
            var,
        ),
        (
            "GaussianNLLLoss",
            lambda v: nn.GaussianNLLLoss(reduction="sum")(T(v), T(y), T(var)),
            lambda v: np_gaussian(v, y, var, reduction="sum"),
            x,
        ),
        ("RMSELoss", lambda v: nn.RMSELoss()(T(v), T(y)), lambda v: np.sqrt(((v - y) ** 2).mean()), x),
        ("DiceLoss", lambda v: nn.DiceLoss()(T(v), T(mask)), lambda v: np_dice(v, mask), x),
        (
            "MultiClassDiceLoss",
            lambda v: nn.MultiClassDiceLoss(T(np.array([1.0, 0.5, 2.0, 1.0])))(T(v), T(mask)),
            lambda v: np_multiclass_dice(v, mask, [1.0, 0.5, 2.0, 1.0]),
            x,
        ),
    ]


def test_gradients_match_central_differences(rng):
    for name, loss, reference, point in _grad_cases(rng):
        grad = opforge.grad(loss)(Tensor(point))
        numeric = numeric_grad(lambda v, ref=reference: float(np.sum(ref(v))), point)
        assert float(np.sum(loss(point).asnumpy())) == pytest.approx(float(np.sum(reference(point))), rel=1e-10), name
        np.testing.assert_allclose(grad.asnumpy(), numeric, rtol=1e-5, atol=1e-7, err_msg=name)


def test_margin_ranking_gradients_reach_both_inputs(rng):
    x1, x2, y = rng.uniform(-2, 2, 6), rng.uniform(-2, 2, 6), _signs(rng, 6)
    loss = nn.MarginRankingLoss(0.2, "sum")
    g1, g2 = opforge.grad(lambda a, b: loss(a, b, Tensor(y)), grad_position=(0, 1))(Tensor(x1), Tensor(x2))
    active = (-y * (x1 - x2) + 0.2) > 0
    np.testing.assert_allclose(g1.asnumpy(), np.where(active, -y, 0.0))
    np.testing.assert_allclose(g2.asnumpy(), np.where(active, y, 0.0))


# -- jit equals eager ---------------------------------------------------------------------------------------


def _assert_jit_equals_eager(fn, args, new_args):
    traced = opforge.jit(fn)
    traced_grad = opforge.jit(opforge.grad(fn))
    eager_grad = opforge.grad(fn)
    for _ in range(2):  # the trace, then its replay
        np.testing.assert_allclose(traced(*args).asnumpy(), fn(*args).asnumpy(), rtol=1e-6)
        np.testing.assert_allclose(traced_grad(*args).asnumpy(), eager_grad(*args).asnumpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(traced(*new_args).asnumpy(), fn(*new_args).asnumpy(), rtol=1e-6)


def test_losses_under_jit_equal_eager(rng):
    def draw(*shape):
        return Tensor(rng.uniform(-2, 2, shape).astype(np.float32))

    huber = nn.HuberLoss("mean", 0.5)
    _assert_jit_equals_eager(lambda a, b: huber(a, b), (draw(4, 5), draw(4, 5)), (draw(4, 5), draw(4, 5)))
    triplet = nn.TripletMarginLoss(swap=True, margin=2.0)
    p, n = draw(4, 6), draw(4, 6)
    _assert_jit_equals_eager(lambda a: triplet(a, p, n), (draw(4, 6),), (draw(4, 6),))
    labels = Tensor(np.array([[1, 3, -1, 0], [2, -1, 0, 0], [0, 1, 2, 3]], np.int32))
    _assert_jit_equals_eager(lambda a: ops.multilabel_margin_loss(a, labels), (draw(3, 4),), (draw(3, 4),))
    mask = Tensor((rng.uniform(size=(2, 3, 4)) < 0.5).astype(np.float32))
    dice = nn.MultiClassDiceLoss(ignore_indiex=0)
    _assert_jit_equals_eager(lambda a: dice(a, mask), (draw(2, 3, 4),), (draw(2, 3, 4),))
    classes = Tensor(np.array([0, 2, 1, 2], np.int64))
    _assert_jit_equals_eager(lambda a: ops.multi_margin_loss(a, classes, 2), (draw(4, 3),), (draw(4, 3),))


def test_huber_loss_trains_a_regression(rng):
    x = rng.standard_normal((64, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)
    net = nn.Dense(3, 1)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.HuberLoss()), nn.SGD(net.trainable_params(), 0.2))
    first = float(step(Tensor(x), Tensor(y)).asnumpy())
    for _ in range(60):
        last = float(step(Tensor(x), Tensor(y)).asnumpy())
    assert last < 0.1 * first


# -- Bad arguments and inputs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: nn.HuberLoss("max"),
        lambda: nn.MarginRankingLoss(reduction="max"),
        lambda: nn.TripletMarginLoss(reduction="max"),
        lambda: nn.HingeEmbeddingLoss(reduction="max"),
        lambda: nn.SoftMarginLoss("max"),
        lambda: nn.MultiMarginLoss(reduction="max"),
        lambda: nn.MultilabelMarginLoss("max"),
        lambda: nn.PoissonNLLLoss(reduction="max"),
        lambda: nn.GaussianNLLLoss(reduction="max"),
        lambda: nn.MAELoss("max"),
    ],
)
def test_bad_reduction_of_a_loss_cell(make):
    with pytest.raises(ValueError, match=r"For '\w+Loss', the 'reduction' must be one of"):
        make()


def test_bad_reduction_of_a_functional_loss():
    x, y = _t([[1.0, 2.0]]), _t([[1.0, -1.0]])
    calls = {
        "l1_loss": lambda: ops.l1_loss(x, y, "max"),
        "smooth_l1_loss": lambda: ops.smooth_l1_loss(x, y, reduction="max"),
        "huber_loss": lambda: ops.huber_loss(x, y, "max"),
        "binary_cross_entropy_with_logits": lambda: ops.binary_cross_entropy_with_logits(x, y, reduction="max"),
        "margin_ranking_loss": lambda: ops.margin_ranking_loss(x, x, y, reduction="max"),
        "triplet_margin_loss": lambda: ops.triplet_margin_loss(x, x, x, reduction="max"),
        "hinge_embedding_loss": lambda: ops.hinge_embedding_loss(x, y, reduction="max"),
        "soft_margin_loss": lambda: ops.soft_margin_loss(x, y, "max"),
        "multi_margin_loss": lambda: ops.multi_margin_loss(x, Tensor(np.array([0], np.int64)), reduction="max"),
        "multilabel_margin_loss": lambda: ops.multilabel_margin_loss(x, Tensor(np.array([[0, -1]])), "max"),
        "gaussian_nll_loss": lambda: ops.gaussian_nll_loss(x, y, x, reduction="max"),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError, match=rf"For '{name}', the 'reduction' must be one of"):
            call()


def test_bad_arguments_are_named():
    cases = [
        (lambda: nn.HuberLoss(delta=0), ValueError, r"'HuberLoss', the 'delta' must be > 0"),
        (lambda: nn.HuberLoss(delta="1"), TypeError, r"'HuberLoss', the 'delta' must be int or float"),
        (lambda: nn.MarginRankingLoss(margin=1), TypeError, r"'MarginRankingLoss', the 'margin' must be float"),
        (lambda: nn.TripletMarginLoss(p=0), ValueError, r"'TripletMarginLoss', the 'p' .* must be >= 1"),
        (lambda: nn.TripletMarginLoss(p=2.0), TypeError, r"'TripletMarginLoss', the 'p' must be an int"),
        (lambda: nn.TripletMarginLoss(swap=1), TypeError, r"'TripletMarginLoss', the 'swap' must be a bool"),
        (lambda: nn.TripletMarginLoss(eps=1), TypeError, r"'TripletMarginLoss', the 'eps' must be float"),
        (lambda: nn.HingeEmbeddingLoss(margin=None), TypeError, r"'HingeEmbeddingLoss', the 'margin'"),
        (lambda: nn.MultiMarginLoss(p=3), ValueError, r"'MultiMarginLoss', the 'p' must be 1 or 2"),
        (lambda: nn.MultiMarginLoss(weight=[1.0]), TypeError, r"'MultiMarginLoss', the 'weight' must be None or"),
        (lambda: nn.PoissonNLLLoss(log_input=1), TypeError, r"'PoissonNLLLoss', the 'log_input' must be a bool"),
        (lambda: nn.PoissonNLLLoss(eps=0.0), ValueError, r"'PoissonNLLLoss', the 'eps' must be > 0"),
        (lambda: nn.GaussianNLLLoss(full="yes"), TypeError, r"'GaussianNLLLoss', the 'full' must be a bool"),
        (lambda: nn.GaussianNLLLoss(eps=-1.0), ValueError, r"'GaussianNLLLoss', the 'eps' must be > 0"),
        (lambda: nn.DiceLoss(smooth=0.0), ValueError, r"'DiceLoss', the 'smooth' must be > 0"),
        (lambda: nn.MultiClassDiceLoss(weights=[1.0]), TypeError, r"'MultiClassDiceLoss', the 'weights'"),
        (lambda: nn.MultiClassDiceLoss(ignore_indiex=1.0), TypeError, r"'MultiClassDiceLoss', the 'ignore_indiex'"),
        (lambda: nn.MultiClassDiceLoss(activation="nope"), ValueError, r"'MultiClassDiceLoss', the 'activation'"),
        (lambda: nn.MultiClassDiceLoss(activation=3), TypeError, r"'MultiClassDiceLoss', the 'activation'"),
        (lambda: ops.smooth_l1_loss(_t([1.0]), _t([1.0]), beta=1), TypeError, r"'smooth_l1_loss', the 'beta'"),
        (lambda: ops.smooth_l1_loss(_t([1.0]), _t([1.0]), beta=-1.0), ValueError, r"'smooth_l1_loss', the 'beta'"),
        (lambda: ops.huber_loss(_t([1.0]), _t([1.0]), delta=-2), ValueError, r"'huber_loss', the 'delta' must be > 0"),
    ]
    for make, error, pattern in cases:
        with pytest.raises(error, match=pattern):
            make()


def test_bad_inputs_are_named():
    x23, x32, x2 = _t(np.ones((2, 3))), _t(np.ones((3, 2))), _t(np.ones(2))
    i23 = Tensor(np.ones((2, 3), np.int32))
    h23 = Tensor(np.ones((2, 3), np.float16))
    cases = [
        (lambda: nn.HuberLoss()(x23, x32), ValueError, r"'HuberLoss', the 'logits' shape \[2, 3\] and the 'labels'"),
        (lambda: nn.HuberLoss()(x23, h23), TypeError, r"'HuberLoss', the 'logits' and 'labels' must have the same"),
        (lambda: nn.HuberLoss()(i23, i23), TypeError, r"'HuberLoss', the 'logits' must be one of float16"),
        (lambda: nn.HuberLoss()(x23, 1.0), TypeError, r"'HuberLoss', the 'labels' must be a Tensor"),
        (lambda: ops.l1_loss(x23, x32), ValueError, r"'l1_loss', the 'input' shape"),
        (lambda: nn.MAELoss()(x23, x32), ValueError, r"'MAELoss', the 'logits' shape"),
        (lambda: nn.RMSELoss()(i23, i23), TypeError, r"'RMSELoss', the 'logits' must be one of"),
        (lambda: ops.smooth_l1_loss(x23, x32), ValueError, r"'smooth_l1_loss', the 'input' and 'target' must have"),
        (
            lambda: ops.binary_cross_entropy_with_logits(x23, x23, x32),
            ValueError,
            r"'binary_cross_entropy_with_logits', the 'input' shape \[2, 3\] and the 'weight'",
        ),
        (
            lambda: ops.binary_cross_entropy_with_logits(x2, x2, x32),
            ValueError,
            r"'binary_cross_entropy_with_logits', the 'weight' must broadcast to the 'input' shape",
        ),
        (
            lambda: ops.SigmoidCrossEntropyWithLogits()(x23, x32),
            ValueError,
            r"'SigmoidCrossEntropyWithLogits', the 'logits' and 'label' must have the same shape",
        ),
        (lambda: nn.MarginRankingLoss()(x23, x23, i23), TypeError, r"'MarginRankingLoss', the 'input1' and 'target'"),
        (lambda: nn.MarginRankingLoss()(x23, x32, x23), ValueError, r"'MarginRankingLoss', the 'input1' and 'input2'"),
        (lambda: ops.triplet_margin_loss(x2, x2, x2), ValueError, r"'triplet_margin_loss', the 'anchor' must have at"),
        (lambda: nn.TripletMarginLoss()(x23, x23, x32), ValueError, r"'TripletMarginLoss', the 'x' and 'negative'"),
        (
            lambda: nn.TripletMarginLoss()(x23, x23, x23, Tensor(np.ones(2, np.float32))),
            ValueError,
            r"'TripletMarginLoss', a Tensor 'margin' must be 0-d",
        ),
        (
            lambda: nn.HingeEmbeddingLoss()(x23, Tensor(np.ones((2, 3), np.bool_))),
            TypeError,
            r"'HingeEmbeddingLoss', the 'labels' must hold 1 or -1",
        ),
        (lambda: ops.soft_margin_loss(x23, x32), ValueError, r"'soft_margin_loss', the 'input' and 'target'"),
        (lambda: nn.SoftMarginLoss()(x23, h23), TypeError, r"'SoftMarginLoss', the 'logits' and 'labels'"),
        (
            lambda: ops.multi_margin_loss(x23, Tensor(np.array([0, 1], np.float32))),
            TypeError,
            r"'multi_margin_loss', the 'target' must be class indices",
        ),
        (
            lambda: nn.MultiMarginLoss()(x23, Tensor(np.array([0, 1, 2], np.int64))),
            ValueError,
            r"'MultiMarginLoss', the 'target' must be 1-D \(N,\) with N = 2",
        ),
        (
            lambda: ops.multi_margin_loss(x2, Tensor(np.array([0], np.int64))),
            ValueError,
            r"'multi_margin_loss', the 'input' must be 2-D",
        ),
        (
            lambda: nn.MultiMarginLoss(weight=x2)(x23, Tensor(np.array([0, 1], np.int64))),
            ValueError,
            r"'MultiMarginLoss', the 'weight' must be 1-D \(C,\) with C = 3",
        ),
        (lambda: nn.MultilabelMarginLoss()(x23, x23), TypeError, r"'MultilabelMarginLoss', the 'target' must be"),
        (lambda: nn.MultilabelMarginLoss()(x23, Tensor(np.ones((3, 2), np.int32))), ValueError, r"'x' and 'target'"),
        (
            lambda: ops.multilabel_margin_loss(_t(np.ones((2, 2, 2))), Tensor(np.ones((2, 2, 2), np.int32))),
            ValueError,
            r"'multilabel_margin_loss', the 'input' must be \(C\) or \(N, C\)",
        ),
        (lambda: nn.PoissonNLLLoss()(x23, x32), ValueError, r"'PoissonNLLLoss', the 'input' and 'target'"),
        (
            lambda: nn.GaussianNLLLoss()(x23, x23, x32),
            ValueError,
            r"'GaussianNLLLoss', the 'var' must have the shape \[2, 3\]",
        ),
        (lambda: ops.gaussian_nll_loss(x23, x23, h23), TypeError, r"'gaussian_nll_loss', the 'x' and 'var'"),
        (lambda: nn.DiceLoss()(x23, x32), ValueError, r"'DiceLoss', the 'logits' and 'label' must have the same"),
        (lambda: nn.MultiClassDiceLoss()(x2, x2), ValueError, r"'MultiClassDiceLoss', the 'logits' must have at"),
        (
            lambda: nn.MultiClassDiceLoss(weights=x2)(x23, x23),
            ValueError,
            r"'MultiClassDiceLoss', the 'weights' dim 0 must have C = 3",
        ),
    ]
    for make, error, pattern in cases:
        with pytest.raises(error, match=pattern):
            make()


def test_gaussian_nll_loss_variance_shapes(rng):
    x, y = rng.uniform(-1, 1, (4, 3)).astype(np.float32), rng.uniform(-1, 1, (4, 3)).astype(np.float32)
    for var in (rng.uniform(0.5, 2, (4,)), rng.uniform(0.5, 2, (4, 1)), rng.uniform(0.5, 2, (1, 3))):
        var = var.astype(np.float32)
        out = ops.gaussian_nll_loss(Tensor(x), Tensor(y), Tensor(var), reduction="none")
        assert tuple(out.shape) == (4, 3)
        np.testing.assert_allclose(out.asnumpy(), np_gaussian(x, y, var, reduction="none"), rtol=1e-5)
    tiny = np.full((4, 3), 1e-9, np.float32)  # clamped to eps
    out = ops.gaussian_nll_loss(Tensor(x), Tensor(y), Tensor(tiny), eps=1e-3, reduction="none")
    np.testing.assert_allclose(out.asnumpy(), np_gaussian(x, y, tiny, eps=1e-3, reduction="none"), rtol=1e-5)
