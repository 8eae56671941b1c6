"""nn.FocalLoss, nn.CosineEmbeddingLoss and ops.cosine_embedding_loss against NumPy: MindSpore's examples,
every reduction in float32 and float16, class weights, (N, C, H, W) inputs, gradients against central
differences, jit against eager, and the errors of bad arguments and inputs."""

from __future__ import annotations

import numpy as np
import pytest

import opforge
from opforge import Tensor, nn, ops
from opforge.testing import numeric_grad

REDUCTIONS = ["none", "mean", "sum"]
DTYPES = {"float32": (np.float32, 1e-5, 1e-6), "float16": (np.float16, 1e-2, 2e-3)}


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def _log_softmax(x, axis):
    z = x - x.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


def _np_focal(x, y, weight=None, gamma=2.0, reduction="mean"):
    """MindSpore's FocalLoss in float64: class indices (N, 1, ...) give (N,), per-class targets (N, C)."""
    n, c = x.shape[:2]
    log_p = _log_softmax(x.astype(np.float64).reshape(n, c, -1), 1)
    s = log_p.shape[2]
    if y.shape[1] == 1:
        index = np.trunc(y).astype(np.int64).reshape(n, s)
        index = np.where(index < 0, index + c, index)
        log_pt = np.take_along_axis(log_p, index[:, None, :], 1)[:, 0, :]
        w = 1.0 if weight is None else np.asarray(weight, np.float64)[index]
        loss = (-((1.0 - np.exp(log_pt)) ** gamma) * w * log_pt).mean(axis=1)
    else:
        target = y.astype(np.float64).reshape(n, c, s)
        w = 1.0 if weight is None else np.asarray(weight, np.float64).reshape(1, c, 1)
        loss = (-((1.0 - np.exp(log_p)) ** gamma) * target * w * log_p).mean(axis=2)
    return _reduce(loss, reduction)


def _np_cosine_embedding(x1, x2, y, margin=0.0, reduction="mean"):
    x1, x2 = x1.astype(np.float64), x2.astype(np.float64)
    cos = (x1 * x2).sum(axis=1) / (np.sqrt((x1 * x1).sum(axis=1)) * np.sqrt((x2 * x2).sum(axis=1)))
    loss = np.where(y == 1, 1.0 - cos, 0.0) + np.where(y == -1, np.maximum(cos - margin, 0.0), 0.0)
    return _reduce(loss, reduction)


def _index_labels(rng, shape, classes):
    """Class indices (N, 1, ...) in [-C, C): the negative ones count from the end."""
    return rng.integers(-classes, classes, (shape[0], 1) + tuple(shape[2:])).astype(np.int32)


def _soft_labels(rng, shape):
    y = rng.uniform(0.0, 1.0, shape)
    return (y / y.sum(axis=1, keepdims=True)).astype(np.float32)


# -- FocalLoss -------------------------------------------------------------------------------------------


def test_focal_loss_mindspore_example():
    logits = Tensor(np.array([[0.8, 1.4], [0.5, 0.9], [1.2, 0.9]], np.float32))
    labels = Tensor(np.array([[1], [1], [0]], np.int32))
    loss = nn.FocalLoss(weight=Tensor(np.array([1, 2])), gamma=2.0, reduction="mean")  # an int64 weight
    out = loss(logits, labels)
    assert out.dtype == opforge.float32 and out.shape == ()
    assert float(out.asnumpy()) == pytest.approx(0.12516622, rel=1e-6)
    assert isinstance(loss, nn.LossBase) and "FocalLoss" in nn.__all__
    assert repr(loss) == "FocalLoss<gamma=2.0, reduction=mean>"


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True], ids=["plain", "weight"])
@pytest.mark.parametrize("labels_kind", ["index", "per_class"])
@pytest.mark.parametrize("shape", [(6, 4), (3, 4, 5), (2, 3, 4, 5)], ids=["NC", "NCH", "NCHW"])
def test_focal_loss_matches_numpy(rng, dtype, reduction, weighted, labels_kind, shape):
    np_dtype, rtol, atol = DTYPES[dtype]
    x = (rng.standard_normal(shape) * 2).astype(np_dtype)
    y = _index_labels(rng, shape, shape[1]) if labels_kind == "index" else _soft_labels(rng, shape)
    weight = rng.uniform(0.5, 2.0, shape[1]).astype(np.float32) if weighted else None
    gamma = 1.5
    loss = nn.FocalLoss(None if weight is None else Tensor(weight), gamma, reduction)
    out = loss(Tensor(x), Tensor(y))
    want = _np_focal(x, y, weight, gamma, reduction)
    per_sample = (shape[0],) if labels_kind == "index" else shape[:2]
    assert out.dtype == Tensor(x).dtype
    assert out.shape == (per_sample if reduction == "none" else ())
    np.testing.assert_allclose(out.asnumpy().astype(np.float64), want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("np_dtype", [np.int64, np.float32, np.float16])
def test_focal_loss_label_dtypes_and_nchw_layout(rng, np_dtype):
    """int64 labels, and float labels truncated to class indices as MindSpore's Cast to int32; (N, 1, H, W)
    labels of (N, C, H, W) logits, and labels whose spatial dims only share the logits' product."""
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    y = _index_labels(rng, x.shape, 3)
    want = _np_focal(x, y, reduction="none")
    loss = nn.FocalLoss(reduction="none")
    labels = (y + 0.25 * (y > 0)).astype(np_dtype)  # 1.25 -> class 1 (an int64 keeps the indices)
    np.testing.assert_allclose(loss(Tensor(x), Tensor(labels)).asnumpy(), want, rtol=1e-5)
    transposed = y.reshape(2, 1, 5, 4)  # MindSpore flattens both to (N, C, H * W)
    np.testing.assert_allclose(loss(Tensor(x), Tensor(transposed)).asnumpy(), want, rtol=1e-5)


def test_focal_loss_gamma_zero_is_the_mean_cross_entropy(rng):
    x = rng.standard_normal((5, 4)).astype(np.float32)
    y = rng.integers(0, 4, (5,)).astype(np.int32)
    focal = nn.FocalLoss(gamma=0.0)(Tensor(x), Tensor(y[:, None]))
    ce = nn.CrossEntropyLoss()(Tensor(x), Tensor(y))
    np.testing.assert_allclose(focal.asnumpy(), ce.asnumpy(), rtol=1e-6)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("labels_kind", ["index", "per_class"])
def test_focal_loss_gradient_matches_central_differences(rng, reduction, labels_kind):
    shape = (2, 3, 2, 2)
    x = rng.standard_normal(shape)
    y = _index_labels(rng, shape, 3) if labels_kind == "index" else _soft_labels(rng, shape)
    weight = np.array([0.5, 2.0, 1.25], np.float32)
    loss = nn.FocalLoss(Tensor(weight), 2.0, reduction)

    def fn(a):
        return loss(a, Tensor(y)).sum()

    value, grad = opforge.value_and_grad(fn)(Tensor(x))
    numeric = numeric_grad(lambda a: float(np.sum(_np_focal(a, y, weight, 2.0, reduction))), x)
    assert float(value.asnumpy()) == pytest.approx(float(np.sum(_np_focal(x, y, weight, 2.0, reduction))), rel=1e-10)
    np.testing.assert_allclose(grad.asnumpy(), numeric, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(opforge.grad(fn)(Tensor(x)).asnumpy(), numeric, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("labels_kind", ["index", "per_class"])
def test_focal_loss_under_jit_equals_eager(rng, labels_kind):
    shape = (3, 4, 2, 3)
    x = rng.standard_normal(shape).astype(np.float32)
    y = _index_labels(rng, shape, 4) if labels_kind == "index" else _soft_labels(rng, shape)
    loss = nn.FocalLoss(Tensor(rng.uniform(0.5, 2.0, 4).astype(np.float32)), 2.0, "mean")
    traced = opforge.jit(lambda a, b: loss(a, b))
    traced_grad = opforge.jit(opforge.grad(lambda a, b: loss(a, b)))
    eager_grad = opforge.grad(lambda a, b: loss(a, b))
    for _ in range(2):  # the trace, then its replay
        np.testing.assert_allclose(traced(Tensor(x), Tensor(y)).asnumpy(), loss(Tensor(x), Tensor(y)).asnumpy())
        np.testing.assert_allclose(
            traced_grad(Tensor(x), Tensor(y)).asnumpy(), eager_grad(Tensor(x), Tensor(y)).asnumpy(), rtol=1e-6
        )
    x2 = rng.standard_normal(shape).astype(np.float32)  # new values, the same trace
    np.testing.assert_allclose(
        traced(Tensor(x2), Tensor(y)).asnumpy(), _np_focal(x2, y, loss.weight.asnumpy(), 2.0), rtol=1e-5
    )


def test_focal_loss_trains_a_classifier(rng):
    x = rng.standard_normal((32, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int32)[:, None]
    net = nn.Dense(4, 2)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.FocalLoss()), nn.SGD(net.trainable_params(), 0.5))
    losses = [float(step(Tensor(x), Tensor(y)).asnumpy()) for _ in range(30)]
    assert losses[-1] < 0.5 * losses[0]


def test_focal_loss_rejects_bad_arguments():
    with pytest.raises(ValueError, match="For 'FocalLoss', the 'reduction' must be one of"):
        nn.FocalLoss(reduction="batchmean")
    with pytest.raises(TypeError, match="For 'FocalLoss', the 'gamma' must be a float, but got int"):
        nn.FocalLoss(gamma=2)
    with pytest.raises(TypeError, match="'gamma' must be a float, but got bool"):
        nn.FocalLoss(gamma=True)
    with pytest.raises(TypeError, match="For 'FocalLoss', the 'weight' must be None or a Tensor, but got list"):
        nn.FocalLoss(weight=[1.0, 2.0])
    with pytest.raises(ValueError, match="For 'FocalLoss', the 'weight' must be a 1-D Tensor"):
        nn.FocalLoss(weight=Tensor(np.ones((2, 2), np.float32)))


def test_focal_loss_rejects_bad_inputs():
    loss = nn.FocalLoss()
    x = Tensor(np.zeros((4, 3), np.float32))
    y = Tensor(np.zeros((4, 1), np.int32))
    cases = [
        (TypeError, "the 'logits' must be a Tensor, but got ndarray", (np.zeros((4, 3), np.float32), y)),
        (TypeError, "the 'labels' must be a Tensor, but got list", (x, [[0]] * 4)),
        (
            TypeError,
            "the 'logits' must be float16, float32 or float64, but got Int32",
            (Tensor(np.zeros((4, 3), np.int32)), y),
        ),
        (
            TypeError,
            "the 'labels' must be int32, int64, float16 or float32, but got Float64",
            (x, Tensor(np.zeros((4, 1)))),
        ),
        (
            TypeError,
            "the 'labels' must be int32, int64, float16 or float32, but got Bool",
            (x, Tensor(np.zeros((4, 1), bool))),
        ),
        (ValueError, "the 'logits' must have 2, 3 or 4 dims", (Tensor(np.zeros(3, np.float32)), y)),
        (ValueError, "the 'logits' must have 2, 3 or 4 dims", (Tensor(np.zeros((1, 3, 1, 1, 2), np.float32)), y)),
        (ValueError, "the 'labels' must have 2, 3 or 4 dims", (x, Tensor(np.zeros(4, np.int32)))),
        (ValueError, "the 'labels' must have the 'logits' rank 2", (x, Tensor(np.zeros((4, 1, 1), np.int32)))),
        (ValueError, "the 'logits' must have C > 1 classes", (Tensor(np.zeros((4, 1), np.float32)), y)),
        (
            ValueError,
            "the 'labels' dim 1 must be 1 \\(class indices\\) or the 'logits' C = 3",
            (x, Tensor(np.zeros((4, 2), np.float32))),
        ),
        (ValueError, "the 'labels' \\[5, 1\\] must have the batch size", (x, Tensor(np.zeros((5, 1), np.int32)))),
        (
            ValueError,
            "the 'labels' \\[2, 1, 5\\] must have the batch size and the number of spatial positions",
            (Tensor(np.zeros((2, 3, 4), np.float32)), Tensor(np.zeros((2, 1, 5), np.int32))),
        ),
    ]
    for error, message, args in cases:
        with pytest.raises(error, match="For 'FocalLoss', " + message):
            loss(*args)
    with pytest.raises(ValueError, match="For 'FocalLoss', the 'weight' must have one element per class \\(C = 3\\)"):
        nn.FocalLoss(Tensor(np.ones(2, np.float32)))(x, y)
    for bad in (3, -4):
        with pytest.raises(
            opforge.KernelError, match="For 'FocalLoss', every class index in 'labels' must be in \\[-3, 3\\)"
        ):
            loss(x, Tensor(np.array([[0], [1], [bad], [2]], np.int32)))


# -- CosineEmbeddingLoss and ops.cosine_embedding_loss ---------------------------------------------------


def test_cosine_embedding_loss_mindspore_example():
    x1 = Tensor(np.array([[0.3, 0.8], [0.4, 0.3]], np.float32))
    x2 = Tensor(np.array([[0.4, 1.2], [-0.4, -0.9]], np.float32))
    labels = Tensor(np.array([1, -1], np.int32))
    loss = nn.CosineEmbeddingLoss()
    for out in (loss(x1, x2, labels), ops.cosine_embedding_loss(x1, x2, labels)):
        assert out.dtype == opforge.float32 and out.shape == ()
        assert float(out.asnumpy()) == pytest.approx(0.0003425479, rel=1e-5)
    assert ops.cosine_embedding_loss is ops.functional.cosine_embedding_loss
    assert isinstance(loss, nn.LossBase) and "CosineEmbeddingLoss" in nn.__all__
    assert repr(loss) == "CosineEmbeddingLoss<margin=0.0, reduction=mean>"


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.3, -0.5])
@pytest.mark.parametrize("shape", [(6, 5), (3, 4, 2, 3)], ids=["ND", "NDHW"])
def test_cosine_embedding_loss_matches_numpy(rng, dtype, reduction, margin, shape):
    np_dtype, rtol, atol = DTYPES[dtype]
    x1 = rng.standard_normal(shape).astype(np_dtype)
    x2 = rng.standard_normal(shape).astype(np_dtype)
    y = rng.choice([1, -1, 0], (shape[0],) + shape[2:], p=[0.45, 0.45, 0.1]).astype(np.int32)  # 0: no loss
    want = _np_cosine_embedding(x1, x2, y, margin, reduction)
    target_shape = y.shape if reduction == "none" else ()
    for labels in (y, y.astype(np.float32)):
        outs = (
            nn.CosineEmbeddingLoss(margin, reduction)(Tensor(x1), Tensor(x2), Tensor(labels)),
            ops.cosine_embedding_loss(Tensor(x1), Tensor(x2), Tensor(labels), margin, reduction),
        )
        for out in outs:
            assert out.dtype == Tensor(x1).dtype and out.shape == target_shape
            np.testing.assert_allclose(out.asnumpy().astype(np.float64), want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cosine_embedding_loss_gradient_matches_central_differences(rng, reduction):
    shape = (5, 3, 2)
    x1, x2 = rng.standard_normal(shape), rng.standard_normal(shape)
    y = np.array([[1, -1], [-1, -1], [1, 1], [-1, 1], [-1, -1]], np.int32)
    loss = nn.CosineEmbeddingLoss(-0.2, reduction)

    def fn(a, b):
        return loss(a, b, Tensor(y)).sum()

    value, (g1, g2) = opforge.value_and_grad(fn, grad_position=(0, 1))(Tensor(x1), Tensor(x2))
    assert float(value.asnumpy()) == pytest.approx(float(np.sum(_np_cosine_embedding(x1, x2, y, -0.2, reduction))))
    n1 = numeric_grad(lambda a: float(np.sum(_np_cosine_embedding(a, x2, y, -0.2, reduction))), x1)
    n2 = numeric_grad(lambda b: float(np.sum(_np_cosine_embedding(x1, b, y, -0.2, reduction))), x2)
    np.testing.assert_allclose(g1.asnumpy(), n1, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(g2.asnumpy(), n2, rtol=1e-5, atol=1e-8)
    functional = opforge.grad(lambda a: ops.cosine_embedding_loss(a, Tensor(x2), Tensor(y), -0.2, reduction).sum())
    np.testing.assert_allclose(functional(Tensor(x1)).asnumpy(), n1, rtol=1e-5, atol=1e-8)


def test_cosine_embedding_loss_under_jit_equals_eager(rng):
    x1 = rng.standard_normal((4, 6)).astype(np.float32)
    x2 = rng.standard_normal((4, 6)).astype(np.float32)
    y = np.array([1, -1, -1, 1], np.int32)
    loss = nn.CosineEmbeddingLoss(0.1, "sum")
    traced = opforge.jit(lambda a, b, t: loss(a, b, t))
    traced_grad = opforge.jit(opforge.grad(lambda a, b, t: loss(a, b, t), grad_position=(0, 1)))
    eager_grad = opforge.grad(lambda a, b, t: loss(a, b, t), grad_position=(0, 1))
    args = (Tensor(x1), Tensor(x2), Tensor(y))
    for _ in range(2):
        np.testing.assert_allclose(traced(*args).asnumpy(), loss(*args).asnumpy())
        for got, want in zip(traced_grad(*args), eager_grad(*args)):
            np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-6)
    y2 = -y  # new labels, the same trace
    np.testing.assert_allclose(
        traced(Tensor(x1), Tensor(x2), Tensor(y2)).asnumpy(), _np_cosine_embedding(x1, x2, y2, 0.1, "sum"), rtol=1e-5
    )


def test_cosine_embedding_loss_functional_casts_integers_and_takes_an_int_margin():
    x1 = np.array([[1, 2, 0], [0, 3, 1]], np.int32)
    x2 = np.array([[2, 1, 1], [1, 0, -2]], np.int32)
    y = np.array([1, -1], np.int32)
    out = ops.cosine_embedding_loss(Tensor(x1), Tensor(x2), Tensor(y), 0, "none")
    assert out.dtype == opforge.float32
    np.testing.assert_allclose(out.asnumpy(), _np_cosine_embedding(x1, x2, y, 0.0, "none"), rtol=1e-6)
    out = ops.cosine_embedding_loss(Tensor(x1.astype(np.int64)), Tensor(x2.astype(np.int64)), Tensor(y), -1)
    np.testing.assert_allclose(out.asnumpy(), _np_cosine_embedding(x1, x2, y, -1.0), rtol=1e-6)


def test_cosine_embedding_loss_rejects_bad_arguments():
    with pytest.raises(ValueError, match="For 'CosineEmbeddingLoss', the 'reduction' must be one of"):
        nn.CosineEmbeddingLoss(reduction="max")
    with pytest.raises(TypeError, match="For 'CosineEmbeddingLoss', the 'margin' must be a float, but got int"):
        nn.CosineEmbeddingLoss(margin=0)
    with pytest.raises(TypeError, match="the 'margin' must be a float, but got bool"):
        nn.CosineEmbeddingLoss(margin=False)
    for margin in (1.5, -1.01):
        with pytest.raises(ValueError, match="For 'CosineEmbeddingLoss', the 'margin' must be in \\[-1.0, 1.0\\]"):
            nn.CosineEmbeddingLoss(margin)
    assert nn.CosineEmbeddingLoss(1.0).margin == 1.0 and nn.CosineEmbeddingLoss(-1.0).margin == -1.0  # bounds
    x = Tensor(np.ones((2, 3), np.float32))
    y = Tensor(np.array([1, -1], np.int32))
    with pytest.raises(ValueError, match="For 'cosine_embedding_loss', the 'margin' must be in"):
        ops.cosine_embedding_loss(x, x, y, 2)
    with pytest.raises(TypeError, match="For 'cosine_embedding_loss', the 'margin' must be a float, but got str"):
        ops.cosine_embedding_loss(x, x, y, "0.5")
    with pytest.raises(ValueError, match="For 'cosine_embedding_loss', the 'reduction' must be one of"):
        ops.cosine_embedding_loss(x, x, y, reduction="avg")


def test_cosine_embedding_loss_rejects_bad_inputs():
    x = Tensor(np.ones((2, 3), np.float32))
    y = Tensor(np.array([1, -1], np.int32))
    loss = nn.CosineEmbeddingLoss()
    cases = [
        (TypeError, "the 'logits_x1' must be a Tensor, but got ndarray", (np.ones((2, 3), np.float32), x, y)),
        (TypeError, "the 'labels' must be a Tensor, but got list", (x, x, [1, -1])),
        (TypeError, "the 'logits_x1' and 'logits_x2' must have the same dtype", (x, Tensor(np.ones((2, 3))), y)),
        (
            TypeError,
            "the 'logits_x1' must be float16, float32 or float64, but got Int32",
            (Tensor(np.ones((2, 3), np.int32)),) * 2 + (y,),
        ),
        (
            ValueError,
            "the 'logits_x1' and 'logits_x2' must have the same shape",
            (x, Tensor(np.ones((2, 4), np.float32)), y),
        ),
        (
            ValueError,
            "the 'logits_x1' must have at least 2 dims",
            (Tensor(np.ones(3, np.float32)),) * 2 + (Tensor(np.int32(1)),),
        ),
        (ValueError, "the 'labels' must have shape \\[2\\]", (x, x, Tensor(np.array([[1], [-1]], np.int32)))),
        (ValueError, "the 'labels' must have shape \\[2\\]", (x, x, Tensor(np.array([1, -1, 1], np.int32)))),
        (
            TypeError,
            "the 'labels' must hold 1 or -1 as numbers, but got dtype Bool",
            (x, x, Tensor(np.array([True, False]))),
        ),
    ]
    for error, message, args in cases:
        with pytest.raises(error, match="For 'CosineEmbeddingLoss', " + message):
            loss(*args)
    with pytest.raises(ValueError, match="For 'cosine_embedding_loss', the 'target' must have shape \\[2\\]"):
        ops.cosine_embedding_loss(x, x, Tensor(np.array([1], np.int32)))
    with pytest.raises(
        TypeError, match="For 'cosine_embedding_loss', the 'input1' and 'input2' must have the same dtype"
    ):
        ops.cosine_embedding_loss(Tensor(np.ones((2, 3), np.int32)), Tensor(np.ones((2, 3), np.int64)), y)
    with pytest.raises(TypeError, match="int32 and int64 are cast to float32\\), but got UInt8"):
        ops.cosine_embedding_loss(Tensor(np.ones((2, 3), np.uint8)), Tensor(np.ones((2, 3), np.uint8)), y)
