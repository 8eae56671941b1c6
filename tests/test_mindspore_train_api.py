"""MindSpore's training API beyond the basics: learning-rate schedules (Cells and lists), losses and
optimizers, each checked against MindSpore's documented formula or examples."""

from __future__ import annotations

import math

import numpy as np
import pytest

import opforge
from opforge import GRAPH_MODE, PYNATIVE_MODE, Tensor, nn
from opforge.testing import numeric_grad

# -- learning-rate schedule Cells ---------------------------------------------------------------

STEPS = range(0, 13)


def _expected_schedule(name: str, step: int) -> float:
    """The schedules' formulas, in float64 (MindSpore's documentation and behaviour)."""
    lr, rate, decay = 0.1, 0.9, 4
    if name == "exp":
        return lr * rate ** (step / decay)
    if name == "exp_stair":
        return lr * rate ** (step // decay)
    if name == "natural":  # MindSpore does not divide the step by decay_steps here
        return lr * math.exp(-rate * step)
    if name == "natural_stair":
        return lr * math.exp(-rate * (step // decay * decay))
    if name == "inverse":
        return lr / (1 + rate * step / decay)
    if name == "inverse_stair":
        return lr / (1 + rate * (step // decay))
    if name == "cosine":
        return 0.01 + 0.5 * (0.1 - 0.01) * (1 + math.cos(math.pi * min(step, decay) / decay))
    if name == "poly":
        return (0.1 - 0.01) * (1 - min(step, decay) / decay) ** 0.5 + 0.01
    if name == "poly_update":
        periods = max(math.ceil(step / decay), 1)
        return (0.1 - 0.01) * (1 - step / (decay * periods)) ** 0.5 + 0.01
    if name == "warmup":
        return 0.1 * min(step, 3) / 3
    raise AssertionError(name)


SCHEDULES = {
    "exp": lambda: nn.ExponentialDecayLR(0.1, 0.9, 4),
    "exp_stair": lambda: nn.ExponentialDecayLR(0.1, 0.9, 4, is_stair=True),
    "natural": lambda: nn.NaturalExpDecayLR(0.1, 0.9, 4),
    "natural_stair": lambda: nn.NaturalExpDecayLR(0.1, 0.9, 4, True),
    "inverse": lambda: nn.InverseDecayLR(0.1, 0.9, 4),
    "inverse_stair": lambda: nn.InverseDecayLR(0.1, 0.9, 4, True),
    "cosine": lambda: nn.CosineDecayLR(0.01, 0.1, 4),
    "poly": lambda: nn.PolynomialDecayLR(0.1, 0.01, 4, 0.5),
    "poly_update": lambda: nn.PolynomialDecayLR(0.1, 0.01, 4, 0.5, update_decay_steps=True),
    "warmup": lambda: nn.WarmUpLR(0.1, 3),
}


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_schedule_cell_matches_its_formula(name):
    schedule = SCHEDULES[name]()
    for step in STEPS:
        out = schedule(Tensor(step, opforge.int32))
        assert out.dtype == opforge.float32 and out.shape == ()
        assert float(out.asnumpy()) == pytest.approx(_expected_schedule(name, step), rel=1e-5, abs=1e-8), step


@pytest.mark.parametrize("name", ["exp_stair", "cosine", "poly_update", "warmup"])
def test_schedule_cell_in_graph_mode_equals_pynative(name):
    schedule = SCHEDULES[name]()
    eager = [float(schedule(Tensor(s, opforge.int32)).asnumpy()) for s in STEPS]
    traced = opforge.jit(schedule)
    graph = [float(traced(Tensor(s, opforge.int32)).asnumpy()) for s in STEPS]
    np.testing.assert_allclose(graph, eager, rtol=1e-6)


def test_mindspore_schedule_examples():
    step = Tensor(2, opforge.int32)
    assert float(nn.CosineDecayLR(0.01, 0.1, 4)(step).asnumpy()) == pytest.approx(0.055)
    assert float(nn.PolynomialDecayLR(0.1, 0.01, 4, 0.5)(step).asnumpy()) == pytest.approx(0.07363961)
    assert float(nn.WarmUpLR(0.1, 2)(step).asnumpy()) == pytest.approx(0.1)


@pytest.mark.parametrize(
    "make, error, message",
    [
        (lambda: nn.ExponentialDecayLR(1, 0.9, 4), TypeError, "'learning_rate' must be a float, but got int"),
        (lambda: nn.ExponentialDecayLR(0.1, 0.0, 4), ValueError, "'decay_rate' must be > 0"),
        (lambda: nn.NaturalExpDecayLR(0.1, 0.9, 0), ValueError, "'decay_steps' must be a positive int"),
        (lambda: nn.InverseDecayLR(0.1, 0.9, 4, is_stair=1), TypeError, "'is_stair' must be a bool"),
        (lambda: nn.CosineDecayLR(0.1, 0.01, 4), ValueError, "'max_lr' must be greater than the 'min_lr'"),
        (lambda: nn.CosineDecayLR(-0.1, 0.01, 4), ValueError, "'min_lr' must be >= 0"),
        (lambda: nn.PolynomialDecayLR(0.1, 0.01, 4, 0.0), ValueError, "'power' must be > 0"),
        (lambda: nn.WarmUpLR(0.1, 2.0), TypeError, "'warmup_steps' must be an int"),
    ],
)
def test_schedule_cell_rejects_bad_arguments(make, error, message):
    with pytest.raises(error, match=message):
        make()


# -- dynamic learning rates (lists) --------------------------------------------------------------


def test_dynamic_lr_lists_match_mindspore_examples():
    assert nn.piecewise_constant_lr([2, 5, 10], [0.1, 0.05, 0.01]) == [0.1] * 2 + [0.05] * 3 + [0.01] * 5
    np.testing.assert_allclose(nn.exponential_decay_lr(0.1, 0.9, 6, 2, 1), [0.1, 0.1, 0.09, 0.09, 0.081, 0.081])
    np.testing.assert_allclose(nn.natural_exp_decay_lr(0.1, 0.9, 6, 2, 2, True), [0.1] * 4 + [0.016529888822158657] * 2)
    np.testing.assert_allclose(
        nn.inverse_decay_lr(0.1, 0.5, 6, 1, 1, True),
        [0.1, 0.06666666666666667, 0.05, 0.04, 0.03333333333333333, 0.028571428571428574],
    )
    np.testing.assert_allclose(nn.cosine_decay_lr(0.01, 0.1, 6, 2, 2), [0.1, 0.1, 0.055, 0.055, 0.01, 0.01])
    np.testing.assert_allclose(
        nn.polynomial_decay_lr(0.1, 0.01, 6, 2, 2, 0.5),
        [0.1, 0.1, 0.07363961030678928, 0.07363961030678928, 0.01, 0.01],
    )
    np.testing.assert_allclose(nn.warmup_lr(0.1, 6, 2, 2), [0.0, 0.0, 0.05, 0.05, 0.1, 0.1])


def test_dynamic_lr_lists_follow_the_cells_per_epoch():
    # A list function with step_per_epoch=1 gives the Cell's value at each step.
    cases = [
        (nn.exponential_decay_lr(0.1, 0.9, 13, 1, 4, True), "exp_stair"),
        (nn.inverse_decay_lr(0.1, 0.9, 13, 1, 4), "inverse"),
        (nn.cosine_decay_lr(0.01, 0.1, 13, 1, 4), "cosine"),
        (nn.polynomial_decay_lr(0.1, 0.01, 13, 1, 4, 0.5, update_decay_epoch=True), "poly_update"),
        (nn.warmup_lr(0.1, 13, 1, 3), "warmup"),
    ]
    for values, name in cases:
        np.testing.assert_allclose(values, [_expected_schedule(name, s) for s in STEPS], rtol=1e-12, err_msg=name)


def test_dynamic_lr_lists_reject_bad_arguments():
    with pytest.raises(ValueError, match="'milestone' and 'learning_rates' must have the same length"):
        nn.piecewise_constant_lr([2, 5], [0.1])
    with pytest.raises(ValueError, match="'milestone' must be increasing"):
        nn.piecewise_constant_lr([5, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match="'total_step' must be a positive int"):
        nn.exponential_decay_lr(0.1, 0.9, 0, 2, 1)
    with pytest.raises(TypeError, match="'end_learning_rate' must be a float"):
        nn.polynomial_decay_lr(0.1, 0, 6, 2, 2, 0.5)


# -- optimizers driven by a schedule ---------------------------------------------------------------


def _optimizer(kind: str, net, lr):
    if kind == "SGD":
        return nn.SGD(net.trainable_params(), learning_rate=lr)
    if kind == "Momentum":
        return nn.Momentum(net.trainable_params(), learning_rate=lr, momentum=0.9)
    if kind == "Adam":
        return nn.Adam(net.trainable_params(), learning_rate=lr)
    return OPTIMIZERS[kind](net.trainable_params(), lr)


OPTIMIZERS: dict = {}  # filled below with the optimizers added after the basics


def _train(mode, kind, lr, steps=6):
    opforge.set_context(mode=mode)
    try:
        nn.set_seed(5)
        rng = np.random.default_rng(0)
        net = nn.SequentialCell(nn.Dense(8, 16), nn.ReLU(), nn.Dense(16, 4))
        opt = _optimizer(kind, net, lr)
        step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(True, "mean")), opt)
        rates, losses = [], []
        for _ in range(steps):
            x = Tensor(rng.standard_normal((6, 8)).astype(np.float32))
            y = Tensor(rng.integers(0, 4, 6).astype(np.int32))
            losses.append(float(step(x, y).asnumpy()))
            rates.append(float(opt.get_lr().asnumpy()))
        return rates, losses, {p.name: p.asnumpy() for p in net.trainable_params()}, opt
    finally:
        opforge.set_context(mode=PYNATIVE_MODE)


@pytest.mark.parametrize("kind", ["SGD", "Momentum", "Adam"])
def test_optimizer_takes_a_schedule_cell(kind):
    rates, _, params, opt = _train(PYNATIVE_MODE, kind, nn.CosineDecayLR(0.01, 0.1, 4))
    np.testing.assert_allclose(rates, [_expected_schedule("cosine", s) for s in range(6)], rtol=1e-6)
    assert int(opt.global_step.asnumpy()) == 6
    # The same run with the schedule's values as a list trains the same.
    list_rates, _, list_params, _ = _train(PYNATIVE_MODE, kind, nn.cosine_decay_lr(0.01, 0.1, 6, 1, 4))
    np.testing.assert_allclose(list_rates, rates, rtol=1e-6)
    for name in params:
        np.testing.assert_allclose(params[name], list_params[name], rtol=1e-5, atol=1e-7, err_msg=name)


def test_optimizer_schedule_in_graph_mode_equals_pynative():
    eager = _train(PYNATIVE_MODE, "Momentum", nn.PolynomialDecayLR(0.1, 0.01, 3, 2.0))
    graph = _train(GRAPH_MODE, "Momentum", nn.PolynomialDecayLR(0.1, 0.01, 3, 2.0))
    np.testing.assert_allclose(graph[0], eager[0], rtol=1e-6)
    np.testing.assert_allclose(graph[1], eager[1], rtol=1e-6)
    for name in eager[2]:
        np.testing.assert_allclose(graph[2][name], eager[2][name], rtol=1e-5, atol=1e-7, err_msg=name)


def test_optimizer_rejects_a_cell_that_is_no_schedule():
    net = nn.Dense(2, 3)
    with pytest.raises(TypeError, match="must be a LearningRateSchedule, but got ReLU"):
        nn.SGD(net.trainable_params(), learning_rate=nn.ReLU())


# -- losses ------------------------------------------------------------------------------------


def _log_softmax(x, axis):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def _np_cross_entropy(x, t, weight=None, ignore_index=-100, reduction="mean", eps=0.0):
    """MindSpore's cross_entropy in NumPy (float64): class indices or probabilities."""
    class_dim = 0 if x.ndim == 1 else 1
    classes = x.shape[class_dim]
    lp = _log_softmax(x, class_dim)
    w = np.ones(classes) if weight is None else weight
    w_b = w.reshape((classes,) + (1,) * (x.ndim - 1 - class_dim))
    if t.dtype.kind == "f":
        t = t * (1 - eps) + eps / classes
        prod = lp * t * w_b
        if reduction == "mean":
            return -prod.sum() / (x.size / classes)
        return -prod.sum() if reduction == "sum" else -prod.sum(axis=class_dim)
    keep = t != ignore_index
    safe = np.where(keep, t, 0)
    picked = np.take_along_axis(lp, np.expand_dims(safe, class_dim), class_dim).squeeze(class_dim)
    loss = np.where(keep, -w[safe] * picked, 0.0)
    loss_w = np.where(keep, w[safe], 0.0)
    smooth = np.where(keep, -lp.sum(axis=class_dim), 0.0)
    if reduction == "sum":
        loss, smooth = loss.sum(), smooth.sum()
    elif reduction == "mean":
        loss, smooth = loss.sum() / loss_w.sum(), smooth.mean()
    return (1 - eps) * loss + eps / classes * smooth


def _check_loss(loss_fn, x, target, expected_fn, *, grad=True):
    out = loss_fn(Tensor(x), Tensor(target))
    np.testing.assert_allclose(out.asnumpy(), expected_fn(x), rtol=1e-10, atol=1e-12)
    if grad:
        engine = opforge.grad(lambda a: loss_fn(a, Tensor(target)).sum())(Tensor(x)).asnumpy()
        numeric = numeric_grad(lambda a: float(np.sum(expected_fn(a))), x)
        np.testing.assert_allclose(engine, numeric, rtol=1e-5, atol=1e-7)


CE_CASES = {
    "plain": {},
    "weight": {"weight": True},
    "ignore": {"ignore_index": 2},
    "smooth": {"label_smoothing": 0.2},
    "all": {"weight": True, "ignore_index": 0, "label_smoothing": 0.1},
}


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("case", list(CE_CASES))
@pytest.mark.parametrize("shape", [(6, 4), (3, 4, 2, 2)], ids=["2d", "4d"])
def test_cross_entropy_loss_class_indices(shape, case, reduction):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    t = rng.integers(0, shape[1], (shape[0],) + shape[2:]).astype(np.int32)
    t.flat[0] = 2  # ignore_index=2 drops at least one
    opts = dict(CE_CASES[case])
    weight = rng.uniform(0.5, 2.0, shape[1]) if opts.pop("weight", False) else None
    eps = opts.pop("label_smoothing", 0.0)
    ignore = opts.pop("ignore_index", -100)
    loss = nn.CrossEntropyLoss(
        None if weight is None else Tensor(weight), ignore_index=ignore, reduction=reduction, label_smoothing=eps
    )
    _check_loss(loss, x, t, lambda a: _np_cross_entropy(a, t, weight, ignore, reduction, eps))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("eps", [0.0, 0.3])
def test_cross_entropy_loss_class_probabilities(reduction, eps):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 3))
    p = rng.dirichlet(np.ones(3), 5)
    weight = rng.uniform(0.5, 2.0, 3)
    loss = nn.CrossEntropyLoss(Tensor(weight), reduction=reduction, label_smoothing=eps)
    _check_loss(loss, x, p, lambda a: _np_cross_entropy(a, p, weight, reduction=reduction, eps=eps))


def test_cross_entropy_of_one_sample_and_float32():
    x = np.array([1.0, 2.0, 0.5], np.float32)
    out = nn.CrossEntropyLoss(reduction="none")(Tensor(x), Tensor(np.int32(1)))
    assert out.shape == () and float(out.asnumpy()) == pytest.approx(-_log_softmax(x.astype(np.float64), 0)[1])
    x2 = np.random.default_rng(0).standard_normal((8, 10)).astype(np.float32)
    t2 = np.arange(8, dtype=np.int64)
    out = opforge.ops.cross_entropy(Tensor(x2), Tensor(t2))
    assert out.dtype == opforge.float32
    np.testing.assert_allclose(out.asnumpy(), _np_cross_entropy(x2.astype(np.float64), t2), rtol=1e-5)


def test_cross_entropy_loss_rejects_bad_input():
    x = Tensor(np.zeros((4, 3), np.float32))
    with pytest.raises(ValueError, match="'target' must have shape \\[4\\]"):
        nn.CrossEntropyLoss()(x, Tensor(np.zeros((4, 1), np.int32)))
    with pytest.raises(ValueError, match="'weight' must be a 1-D Tensor of 3"):
        nn.CrossEntropyLoss(Tensor(np.ones(2, np.float32)))(x, Tensor(np.zeros(4, np.int32)))
    with pytest.raises(ValueError, match="'label_smoothing' must be in \\[0, 1\\]"):
        nn.CrossEntropyLoss(label_smoothing=1.5)
    with pytest.raises(ValueError, match="'reduction' must be one of"):
        nn.CrossEntropyLoss(reduction="batchmean")


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_bce_loss(reduction, weighted):
    rng = np.random.default_rng(3)
    x = rng.uniform(0.05, 0.95, (4, 3))
    y = rng.uniform(0.0, 1.0, (4, 3))
    weight = rng.uniform(0.5, 2.0, (4, 3)) if weighted else None

    def expected(a):
        loss = -(y * np.log(a) + (1 - y) * np.log(1 - a)) * (1.0 if weight is None else weight)
        return {"mean": loss.mean(), "sum": loss.sum(), "none": loss}[reduction]

    loss = nn.BCELoss(None if weight is None else Tensor(weight), reduction)
    _check_loss(loss, x, y, expected)
    np.testing.assert_allclose(
        opforge.ops.binary_cross_entropy(
            Tensor(x), Tensor(y), None if weight is None else Tensor(weight), reduction
        ).asnumpy(),
        expected(x),
        rtol=1e-12,
    )


def test_bce_loss_clamps_the_logs():
    out = nn.BCELoss(reduction="none")(
        Tensor(np.array([0.0, 1.0], np.float32)), Tensor(np.array([1.0, 0.0], np.float32))
    )
    np.testing.assert_allclose(out.asnumpy(), [-np.log(np.float32(1e-12))] * 2, rtol=1e-6)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "batchmean"])
def test_kl_div_loss(reduction):
    rng = np.random.default_rng(4)
    x = _log_softmax(rng.standard_normal((3, 4)), 1)
    y = rng.dirichlet(np.ones(4), 3)
    y[0, 1] = 0.0  # y * log(y) is 0 there

    def expected(a):
        loss = np.where(y > 0, y * (np.log(np.where(y > 0, y, 1.0)) - a), 0.0)
        return {"mean": loss.mean(), "sum": loss.sum(), "none": loss, "batchmean": loss.sum() / 3}[reduction]

    _check_loss(nn.KLDivLoss(reduction), x, y, expected)
    np.testing.assert_allclose(opforge.ops.kl_div(Tensor(x), Tensor(y), reduction).asnumpy(), expected(x), rtol=1e-12)


def test_kl_div_loss_rejects_an_unknown_reduction():
    with pytest.raises(ValueError, match="'reduction' must be one of"):
        nn.KLDivLoss("max")


def test_cross_entropy_loss_trains_in_graph_mode_as_in_pynative():
    def run(mode):
        opforge.set_context(mode=mode)
        try:
            nn.set_seed(2)
            rng = np.random.default_rng(0)
            net = nn.Dense(6, 4)
            loss = nn.CrossEntropyLoss(Tensor(np.array([1.0, 2.0, 1.0, 0.5], np.float32)), 3, label_smoothing=0.1)
            step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.SGD(net.trainable_params(), 0.1))
            losses = []
            for _ in range(4):
                x = Tensor(rng.standard_normal((5, 6)).astype(np.float32))
                y = Tensor(rng.integers(0, 4, 5).astype(np.int32))
                losses.append(float(step(x, y).asnumpy()))
            return losses
        finally:
            opforge.set_context(mode=PYNATIVE_MODE)

    eager = run(PYNATIVE_MODE)
    assert eager[-1] < eager[0]
    np.testing.assert_allclose(run(GRAPH_MODE), eager, rtol=1e-6)


# -- RMSProp, Adagrad, AdamWeightDecay ----------------------------------------------------------------


def _f32(*values):
    """The hyperparameters as the optimizers keep them: float32 scalars (as MindSpore's)."""
    return [float(np.float32(v)) for v in values]


def _np_rmsprop(w, grads, lr, decay=0.9, momentum=0.0, epsilon=1e-10, centered=False, weight_decay=0.0):
    """MindSpore's documented RMSProp in NumPy (float64); mean_square starts at 1."""
    decay, momentum, epsilon = _f32(decay, momentum, epsilon)
    lr = _f32(*lr) if isinstance(lr, list) else _f32(lr)[0]
    ms, mom, mg = np.ones_like(w), np.zeros_like(w), np.zeros_like(w)
    for step, g in enumerate(grads):
        g = g + weight_decay * w
        rate = lr[step] if isinstance(lr, list) else lr
        ms = decay * ms + (1 - decay) * g * g
        if centered:
            mg = decay * mg + (1 - decay) * g
            mom = momentum * mom + rate * g / np.sqrt(ms - mg * mg + epsilon)
        else:
            mom = momentum * mom + rate * g / np.sqrt(ms + epsilon)
        w = w - mom
    return w


def _np_adagrad(w, grads, lr, accum=0.1, update_slots=True, weight_decay=0.0):
    (lr,) = _f32(lr)
    h = np.full_like(w, accum)
    for g in grads:
        g = g + weight_decay * w
        if update_slots:
            h = h + g * g
        w = w - lr * g / np.sqrt(h)
    return w


def _np_adam_weight_decay(w, grads, lr, beta1=0.9, beta2=0.999, eps=1e-6, weight_decay=0.0):
    lr, beta1, beta2, eps, weight_decay = _f32(lr, beta1, beta2, eps, weight_decay)
    m, v = np.zeros_like(w), np.zeros_like(w)
    for g in grads:
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        w = w - lr * (m / (np.sqrt(v) + eps) + weight_decay * w)
    return w


OPTIMIZER_CASES = {
    "RMSProp": (lambda p: nn.RMSProp(p, 0.01), lambda w, gs: _np_rmsprop(w, gs, 0.01)),
    "RMSProp-momentum": (
        lambda p: nn.RMSProp(p, 0.01, decay=0.8, momentum=0.9, epsilon=1e-6, weight_decay=0.01),
        lambda w, gs: _np_rmsprop(w, gs, 0.01, 0.8, 0.9, 1e-6, weight_decay=0.01),
    ),
    "RMSProp-centered": (
        lambda p: nn.RMSProp(p, 0.01, momentum=0.5, centered=True),
        lambda w, gs: _np_rmsprop(w, gs, 0.01, momentum=0.5, centered=True),
    ),
    "RMSProp-dynamic-lr": (
        lambda p: nn.RMSProp(p, [0.02, 0.01, 0.005], centered=True),
        lambda w, gs: _np_rmsprop(w, gs, [0.02, 0.01, 0.005, 0.005, 0.005], centered=True),
    ),
    "Adagrad": (lambda p: nn.Adagrad(p, learning_rate=0.1), lambda w, gs: _np_adagrad(w, gs, 0.1)),
    "Adagrad-options": (
        lambda p: nn.Adagrad(p, accum=0.5, learning_rate=0.05, update_slots=False, weight_decay=0.1),
        lambda w, gs: _np_adagrad(w, gs, 0.05, 0.5, update_slots=False, weight_decay=0.1),
    ),
    "AdamWeightDecay": (lambda p: nn.AdamWeightDecay(p, 0.01), lambda w, gs: _np_adam_weight_decay(w, gs, 0.01)),
    "AdamWeightDecay-decay": (
        lambda p: nn.AdamWeightDecay(p, 0.01, beta1=0.8, beta2=0.99, eps=1e-8, weight_decay=0.1),
        lambda w, gs: _np_adam_weight_decay(w, gs, 0.01, 0.8, 0.99, 1e-8, 0.1),
    ),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("case", list(OPTIMIZER_CASES))
def test_optimizer_matches_numpy_over_several_steps(case, dtype):
    make, reference = OPTIMIZER_CASES[case]
    rng = np.random.default_rng(7)
    w0 = [rng.standard_normal((3, 4)), rng.standard_normal(5)]
    grads = [[rng.standard_normal(w.shape) for w in w0] for _ in range(5)]
    params = [opforge.Parameter(Tensor(w.astype(dtype)), name=f"w{i}") for i, w in enumerate(w0)]
    opt = make(params)
    for step_grads in grads:
        opt(tuple(Tensor(g.astype(dtype)) for g in step_grads))
    tol = {"rtol": 1e-10, "atol": 1e-12} if dtype == np.float64 else {"rtol": 2e-5, "atol": 1e-6}
    for i, p in enumerate(params):
        expected = reference(w0[i], [g[i] for g in grads])
        np.testing.assert_allclose(p.asnumpy(), expected, **tol, err_msg=f"{case} w{i}")
    assert int(opt.global_step.asnumpy()) == 5


def test_optimizer_state_names_follow_mindspore():
    net = nn.Dense(2, 3)
    names = lambda opt: sorted(p.name for p in opt.get_parameters())  # noqa: E731
    assert names(nn.RMSProp(net.trainable_params(), centered=True)) == sorted(
        ["weight", "bias", "learning_rate", "global_step"]  # (its ParameterTuple 'parameters' lists the weights)
        + [f"{prefix}.{n}" for prefix in ("mean_grad", "mean_square", "moment") for n in ("weight", "bias")]
    )
    assert "accum.weight" in names(nn.Adagrad(net.trainable_params()))
    assert {"adam_m.weight", "adam_v.bias"} <= set(names(nn.AdamWeightDecay(net.trainable_params())))
    opt = nn.Adagrad(net.trainable_params(), accum=0.25)
    np.testing.assert_array_equal(opt.accum[0].asnumpy(), np.full((3, 2), 0.25, np.float32))


@pytest.mark.parametrize(
    "make, error, message",
    [
        (lambda p: nn.RMSProp(p, decay=-0.1), ValueError, "'decay' must be in"),
        (lambda p: nn.RMSProp(p, epsilon=0.0), ValueError, "'epsilon' must be in"),
        (lambda p: nn.RMSProp(p, centered=1), TypeError, "'centered' must be bool"),
        (lambda p: nn.Adagrad(p, accum=-1.0), ValueError, "'accum' must be in"),
        (lambda p: nn.Adagrad(p, update_slots="yes"), TypeError, "'update_slots' must be bool"),
        (lambda p: nn.AdamWeightDecay(p, beta1=1.0), ValueError, "'beta1' must be in"),
        (lambda p: nn.AdamWeightDecay(p, eps=-1e-6), ValueError, "'eps' must be in"),
    ],
)
def test_new_optimizers_reject_bad_arguments(make, error, message):
    with pytest.raises(error, match=message):
        make(nn.Dense(2, 3).trainable_params())


def test_new_optimizers_update_float16_parameters():
    w0 = np.array([0.5, -1.0, 2.0], np.float16)
    g = np.array([0.25, 0.5, -1.0], np.float16)
    for make, reference in (OPTIMIZER_CASES["RMSProp-centered"], OPTIMIZER_CASES["AdamWeightDecay-decay"]):
        p = opforge.Parameter(Tensor(w0), name="w")
        opt = make([p])
        opt((Tensor(g),))
        assert p.dtype == opforge.float16
        np.testing.assert_allclose(p.asnumpy(), reference(w0.astype(np.float64), [g.astype(np.float64)]), rtol=2e-3)


OPTIMIZERS.update(
    RMSProp=lambda params, lr: nn.RMSProp(params, lr, centered=True),
    Adagrad=lambda params, lr: nn.Adagrad(params, learning_rate=lr),
    AdamWeightDecay=lambda params, lr: nn.AdamWeightDecay(params, lr, weight_decay=0.01),
)


@pytest.mark.parametrize("kind", ["RMSProp", "Adagrad", "AdamWeightDecay"])
def test_new_optimizers_take_a_schedule_and_train_in_graph_mode(kind):
    schedule = nn.WarmUpLR(0.05, 3)
    eager_rates, eager_losses, eager, _ = _train(PYNATIVE_MODE, kind, schedule)
    np.testing.assert_allclose(eager_rates, [0.05 * min(s, 3) / 3 for s in range(6)], rtol=1e-6)
    graph_rates, graph_losses, graph, opt = _train(GRAPH_MODE, kind, nn.WarmUpLR(0.05, 3))
    np.testing.assert_allclose(graph_losses, eager_losses, rtol=1e-5)
    for name in eager:
        np.testing.assert_allclose(graph[name], eager[name], rtol=1e-5, atol=1e-7, err_msg=name)
    assert int(opt.global_step.asnumpy()) == 6
