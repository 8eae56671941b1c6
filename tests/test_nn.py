"""opforge.nn: cells, layers, initializers, losses, optimizers, training wrappers and checkpoints."""

from __future__ import annotations

import numpy as np
import pytest

import opforge
from opforge import nn


def T(a, dtype=None):
    return opforge.Tensor(np.asarray(a), dtype)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(4, 8, activation="relu")
        self.block = nn.SequentialCell(nn.Dense(8, 8), nn.Tanh(), nn.Dense(8, 3))
        self.scale = opforge.Parameter(np.float32(2.0), requires_grad=False)

    def construct(self, x):
        return self.block(self.fc1(x)) * self.scale


# -- Cell ---------------------------------------------------------------------------------------


def test_cell_registers_parameters_and_cells_with_hierarchical_names():
    net = Net()
    names = [n for n, _ in net.parameters_and_names()]
    assert names == [
        "scale",
        "fc1.weight",
        "fc1.bias",
        "block.0.weight",
        "block.0.bias",
        "block.2.weight",
        "block.2.bias",
    ]
    # Parameter.name is the path too (auto prefix), so checkpoints use it.
    assert [p.name for p in net.get_parameters()] == names
    assert [n for n, _ in net.cells_and_names()] == [
        "",
        "fc1",
        "fc1.activation",
        "block",
        "block.0",
        "block.1",
        "block.2",
    ]
    assert len(net.trainable_params()) == 6 and all(p.requires_grad for p in net.trainable_params())
    assert net.untrainable_params() == [net.scale]
    assert net.fc1.weight.shape == (8, 4) and isinstance(net.block, nn.SequentialCell)


def test_wrappers_keep_parameter_names_and_shared_parameters_appear_once():
    net = Net()
    before = [p.name for p in net.get_parameters()]
    wrapped = nn.WithLossCell(net, nn.MSELoss())
    assert [p.name for p in wrapped.get_parameters()] == before
    assert [n for n, _ in wrapped.parameters_and_names()][1] == "_backbone.fc1.weight"  # paths do include it

    class Tied(nn.Cell):
        def __init__(self):
            super().__init__()
            self.a = nn.Dense(3, 3)
            self.b = nn.Dense(3, 3)
            self.b.weight = self.a.weight

        def construct(self, x):
            return self.b(self.a(x))

    tied = Tied()
    assert len(list(tied.get_parameters())) == 3


def test_cell_attribute_rules():
    net = Net()
    with pytest.raises(TypeError, match="is a Parameter"):
        net.scale = 3.0
    with pytest.raises(TypeError, match="is a Cell"):
        net.fc1 = "dense"
    net.scale = None
    assert "scale" not in [n for n, _ in net.parameters_and_names()]
    del net.fc1
    assert not hasattr(net, "fc1")

    class Early(nn.Cell):
        def __init__(self):
            self.w = opforge.Parameter(np.zeros(2, np.float32))

    with pytest.raises(AttributeError, match=r"super\(\).__init__\(\)"):
        Early()
    with pytest.raises(NotImplementedError):
        nn.Cell()(1)


def test_set_train_is_recursive_and_repr_is_a_tree():
    net = Net()
    assert net.training is False
    assert net.set_train() is net
    assert all(c.training for _, c in net.cells_and_names())
    net.set_train(False)
    assert not any(c.training for _, c in net.cells_and_names())
    text = repr(net)
    assert text.startswith("Net<")
    assert "(fc1): Dense<input_channels=4, output_channels=8, has_bias=True" in text
    assert "    (1): Tanh<>" in text  # nested cells are indented


def test_sequential_cell_and_cell_list():
    seq = nn.SequentialCell([nn.Dense(2, 3), nn.ReLU()])
    seq.append(nn.Dense(3, 1))
    assert len(seq) == 3 and isinstance(seq[2], nn.Dense) and isinstance(seq[1:], nn.SequentialCell)
    assert [p.name for p in seq.get_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert seq(T(np.ones((4, 2), np.float32))).shape == (4, 1)
    cells = nn.CellList([nn.ReLU(), nn.Tanh()])
    cells.append(nn.Sigmoid())
    cells.insert(0, nn.Dense(2, 2))
    assert [type(c).__name__ for c in cells] == ["Dense", "ReLU", "Tanh", "Sigmoid"]
    assert [p.name for p in cells.get_parameters()] == ["0.weight", "0.bias"]
    del cells[1]
    assert len(cells) == 3 and [n for n, _ in cells.cells_and_names()][1:] == ["0", "1", "2"]
    with pytest.raises(TypeError, match="must be a Cell"):
        nn.SequentialCell([nn.ReLU(), 3])


# -- layers -------------------------------------------------------------------------------------


def test_dense_forward_matches_numpy(rng):
    dense = nn.Dense(5, 3, weight_init="xavier_uniform", bias_init="uniform")
    x = rng.standard_normal((4, 5), dtype=np.float32)
    w, b = dense.weight.asnumpy(), dense.bias.asnumpy()
    assert w.shape == (3, 5) and b.shape == (3,)
    np.testing.assert_allclose(dense(T(x)).asnumpy(), x @ w.T + b, rtol=1e-5, atol=1e-6)
    x3 = rng.standard_normal((2, 4, 5), dtype=np.float32)  # leading axes are kept
    np.testing.assert_allclose(dense(T(x3)).asnumpy(), x3 @ w.T + b, rtol=1e-5, atol=1e-6)
    relu = nn.Dense(5, 3, has_bias=False, activation="relu", weight_init=T(w))
    assert relu.bias is None and len(list(relu.get_parameters())) == 1
    np.testing.assert_allclose(relu(T(x)).asnumpy(), np.maximum(x @ w.T, 0), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="in_channels=5"):
        dense(T(np.ones((2, 4), np.float32)))
    with pytest.raises(ValueError, match="positive int"):
        nn.Dense(0, 3)


def test_activation_cells_and_flatten(rng):
    x = rng.standard_normal((2, 3, 4), dtype=np.float32)
    np.testing.assert_allclose(nn.ReLU()(T(x)).asnumpy(), np.maximum(x, 0))
    np.testing.assert_allclose(nn.Sigmoid()(T(x)).asnumpy(), 1 / (1 + np.exp(-x)), rtol=1e-5)
    np.testing.assert_allclose(nn.Tanh()(T(x)).asnumpy(), np.tanh(x), rtol=1e-5)
    np.testing.assert_allclose(nn.Elu(0.5)(T(x)).asnumpy(), np.where(x > 0, x, 0.5 * np.expm1(x)), rtol=1e-5)
    assert nn.Flatten()(T(x)).shape == (2, 12)
    with pytest.raises(ValueError, match="unknown activation"):
        nn.get_activation("swish")


def test_gradient_through_cell_parameters_matches_finite_differences(rng):
    opforge.nn.set_seed(1)
    net = nn.SequentialCell(
        nn.Dense(3, 4, activation="tanh", dtype=opforge.float64, bias_init="normal"),
        nn.Dense(4, 2, dtype=opforge.float64),
    )
    loss_net = nn.WithLossCell(net, nn.MSELoss())
    x = T(rng.standard_normal((5, 3)))
    y = T(rng.standard_normal((5, 2)))
    weights = net.trainable_params()
    grads = opforge.grad(loss_net, grad_position=None, weights=weights)(x, y)
    eps = 1e-6
    for p, g in zip(weights, grads):
        base = p.asnumpy()
        numeric = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            for sign in (1, -1):
                shifted = base.copy()
                shifted[idx] += sign * eps
                p.set_data(shifted)
                numeric[idx] += sign * float(loss_net(x, y).asnumpy()) / (2 * eps)
        p.set_data(base)
        np.testing.assert_allclose(g.asnumpy(), numeric, rtol=1e-5, atol=1e-8, err_msg=p.name)


def test_dropout_is_seeded_scaled_and_identity_in_eval(rng):
    x = rng.standard_normal((64, 64), dtype=np.float32) + 3.0
    drop = nn.Dropout(keep_prob=0.75, seed=7)
    assert drop(T(x)) is not None and np.array_equal(drop(T(x)).asnumpy(), x)  # eval mode: identity
    drop.set_train()
    out = drop(T(x)).asnumpy()
    kept = out != 0
    assert 0.70 < kept.mean() < 0.80
    np.testing.assert_allclose(out[kept], x[kept] / 0.75, rtol=1e-6)
    again = nn.Dropout(p=0.25, seed=7).set_train()
    np.testing.assert_array_equal(again(T(x)).asnumpy(), out)  # same seed, same masks
    # The scaling is a primitive, so the gradient is the mask / keep_prob.
    g = opforge.grad(lambda t: nn.Dropout(0.75, seed=7).set_train()(t).sum())(T(x))
    np.testing.assert_allclose(g.asnumpy(), kept / 0.75, rtol=1e-6)
    # Without a seed the masks follow the global seed.
    nn.set_seed(3)
    a = nn.Dropout(0.5).set_train()(T(x)).asnumpy()
    nn.set_seed(3)
    b = nn.Dropout(0.5).set_train()(T(x)).asnumpy()
    np.testing.assert_array_equal(a, b)
    assert np.array_equal(nn.Dropout(keep_prob=1.0).set_train()(T(x)).asnumpy(), x)
    for bad in ({"keep_prob": 0.0}, {"keep_prob": 1.5}, {"p": 1.0}):
        with pytest.raises(ValueError):
            nn.Dropout(**bad)


# -- initializers -------------------------------------------------------------------------------


def test_initializers():
    from opforge.nn import init

    init.set_seed(42)
    a = init.initializer("normal", (50, 40)).asnumpy()
    init.set_seed(42)
    b = init.initializer("normal", (50, 40)).asnumpy()
    np.testing.assert_array_equal(a, b)
    assert init.get_seed() == 42 and abs(a.std() - 0.01) < 0.001
    assert np.all(init.initializer("zeros", (3, 2), opforge.float16).asnumpy() == 0)
    ones = init.initializer("ones", 4, "bfloat16")
    assert ones.dtype == opforge.bfloat16 and ones.shape == (4,)
    assert np.all(np.abs(init.initializer("uniform", (100,)).asnumpy()) <= 0.07)
    bound = np.sqrt(6 / (40 + 50))
    x = init.initializer("xavier_uniform", (50, 40)).asnumpy()
    assert np.all(np.abs(x) <= bound) and np.abs(x).max() > 0.9 * bound
    he = init.initializer(init.HeUniform(nonlinearity="relu"), (50, 40)).asnumpy()
    assert np.all(np.abs(he) <= np.sqrt(6 / 40)) and np.abs(he).max() > 0.9 * np.sqrt(6 / 40)
    hn = init.initializer("he_normal", (400, 400)).asnumpy()
    assert abs(hn.std() - np.sqrt(2 / (1 + 0.01**2)) / 20) < 0.003
    assert np.all(init.initializer(2.5, (2,), opforge.float64).asnumpy() == 2.5)
    with pytest.raises(ValueError, match="unknown initializer"):
        init.initializer("glorot", (2, 2))
    with pytest.raises(ValueError, match="shape"):
        init.initializer(np.zeros((2, 3)), (3, 2))
    with pytest.raises(ValueError, match="at least 2 dims"):
        init.initializer("xavier_uniform", (3,))


# -- losses -------------------------------------------------------------------------------------


def _log_softmax(x):
    x = x - x.max(axis=1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=1, keepdims=True))


def test_mse_and_l1_losses_match_numpy(rng):
    x = rng.standard_normal((4, 3), dtype=np.float32)
    y = rng.standard_normal((4, 3), dtype=np.float32)
    for reduction, fn in (("none", lambda d: d), ("mean", np.mean), ("sum", np.sum)):
        np.testing.assert_allclose(nn.MSELoss(reduction)(T(x), T(y)).asnumpy(), fn((x - y) ** 2), rtol=1e-5)
        np.testing.assert_allclose(nn.L1Loss(reduction)(T(x), T(y)).asnumpy(), fn(np.abs(x - y)), rtol=1e-5)
    g = opforge.grad(nn.MSELoss())(T(x), T(y))
    np.testing.assert_allclose(g.asnumpy(), 2 * (x - y) / x.size, rtol=1e-5)
    with pytest.raises(ValueError, match="reduction"):
        nn.MSELoss("avg")


def test_softmax_cross_entropy_dense_labels(rng):
    logits = rng.standard_normal((5, 4), dtype=np.float32)
    labels = rng.dirichlet(np.ones(4), 5).astype(np.float32)
    per_sample = -(labels * _log_softmax(logits)).sum(axis=1)
    for reduction, fn in (("none", lambda d: d), ("mean", np.mean), ("sum", np.sum)):
        loss = nn.SoftmaxCrossEntropyWithLogits(reduction=reduction)(T(logits), T(labels))
        np.testing.assert_allclose(loss.asnumpy(), fn(per_sample), rtol=1e-5, atol=1e-6)
    g = opforge.grad(nn.SoftmaxCrossEntropyWithLogits(reduction="sum"))(T(logits), T(labels))
    softmax = np.exp(_log_softmax(logits))
    np.testing.assert_allclose(g.asnumpy(), softmax - labels, rtol=1e-4, atol=1e-6)


def test_softmax_cross_entropy_sparse_mean(rng):
    logits = rng.standard_normal((6, 5), dtype=np.float32)
    labels = rng.integers(0, 5, 6).astype(np.int32)
    per_sample = -_log_softmax(logits)[np.arange(6), labels]
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    np.testing.assert_allclose(loss_fn(T(logits), T(labels)).asnumpy(), per_sample.mean(), rtol=1e-5)
    g = opforge.grad(loss_fn)(T(logits), T(labels))
    expected = np.exp(_log_softmax(logits))
    expected[np.arange(6), labels] -= 1
    np.testing.assert_allclose(g.asnumpy(), expected / 6, rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match=r"class indices \[N\]"):
        loss_fn(T(logits), T(np.zeros((6, 5), np.float32)))


def test_softmax_cross_entropy_sparse_other_reductions(rng):
    logits = rng.standard_normal((6, 5), dtype=np.float32)
    labels = rng.integers(0, 5, 6).astype(np.int32)
    per_sample = -_log_softmax(logits)[np.arange(6), labels]
    for reduction, fn in (("none", lambda d: d), ("sum", np.sum)):
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction=reduction)(T(logits), T(labels))
        np.testing.assert_allclose(loss.asnumpy(), fn(per_sample), rtol=1e-5, atol=1e-6)


# -- optimizers ---------------------------------------------------------------------------------


def _params(rng, shapes=((3, 4), (4,))):
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    return arrays, [opforge.Parameter(a.copy(), name=f"p{i}") for i, a in enumerate(arrays)]


def _run_steps(opt, params, ref_step, arrays, rng, steps=4):
    state = {}
    for t in range(1, steps + 1):
        grads = [rng.standard_normal(a.shape).astype(np.float32) for a in arrays]
        opt([T(g) for g in grads])
        for i, (a, g) in enumerate(zip(arrays, grads)):
            ref_step(i, a, g.astype(np.float64), state, t)
        for a, p in zip(arrays, params):
            np.testing.assert_allclose(p.asnumpy(), a, rtol=2e-5, atol=2e-6, err_msg=f"step {t}")


def _sgd_ref(lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
    def step(i, w, g, state, t):
        g = g + weight_decay * w
        if momentum > 0:
            a = state.get(i, np.zeros_like(w, dtype=np.float64))
            a = momentum * a + (1 - dampening) * g
            state[i] = a
            w -= (lr * (g + momentum * a if nesterov else a)).astype(w.dtype)
        else:
            w -= (lr * g).astype(w.dtype)

    return step


@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
def test_sgd_matches_numpy(rng, weight_decay):
    arrays, params = _params(rng)
    opt = nn.SGD(params, learning_rate=0.1, weight_decay=weight_decay)
    _run_steps(opt, params, _sgd_ref(0.1, weight_decay=weight_decay), arrays, rng)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"momentum": 0.9},
        {"momentum": 0.9, "nesterov": True},
        {"momentum": 0.8, "dampening": 0.3, "weight_decay": 0.05},
        {"momentum": 0.9, "nesterov": True, "weight_decay": 0.01},
    ],
)
def test_sgd_with_momentum_matches_numpy(rng, kwargs):
    arrays, params = _params(rng)
    opt = nn.SGD(params, learning_rate=0.05, **kwargs)
    assert len(opt.accum) == 2 and opt.accum[0].name == "accum.p0" and not opt.accum[0].requires_grad
    _run_steps(opt, params, _sgd_ref(0.05, **kwargs), arrays, rng)


@pytest.mark.parametrize("use_nesterov,weight_decay", [(False, 0.0), (True, 0.0), (False, 0.1), (True, 0.02)])
def test_momentum_matches_numpy(rng, use_nesterov, weight_decay):
    arrays, params = _params(rng)
    opt = nn.Momentum(params, 0.1, 0.9, use_nesterov=use_nesterov, weight_decay=weight_decay)
    ref = _sgd_ref(0.1, momentum=0.9, weight_decay=weight_decay, nesterov=use_nesterov)
    _run_steps(opt, params, ref, arrays, rng)


def _adam_ref(lr, beta1=0.9, beta2=0.999, eps=1e-8, use_nesterov=False, weight_decay=0.0):
    def step(i, w, g, state, t):
        g = g + weight_decay * w
        m, v = state.get(i, (np.zeros_like(g), np.zeros_like(g)))
        m = m + (g - m) * (1 - beta1)
        v = v + (g * g - v) * (1 - beta2)
        state[i] = (m, v)
        lr_t = lr * np.sqrt(1 - beta2**t) / (1 - beta1**t)
        num = m * beta1 + g * (1 - beta1) if use_nesterov else m
        w -= (lr_t * num / (np.sqrt(v) + eps)).astype(w.dtype)

    return step


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"use_nesterov": True}, {"weight_decay": 0.1}, {"beta1": 0.8, "beta2": 0.99, "eps": 1e-6}],
)
def test_adam_matches_numpy(rng, kwargs):
    arrays, params = _params(rng)
    opt = nn.Adam(params, learning_rate=0.01, **kwargs)
    _run_steps(opt, params, _adam_ref(0.01, **kwargs), arrays, rng, steps=5)
    np.testing.assert_allclose(float(opt.beta1_power.asnumpy()), kwargs.get("beta1", 0.9) ** 5, rtol=1e-6)
    names = [p.name for p in opt.get_parameters()]
    # as MindSpore's: the ParameterTuple 'parameters' registers the trained Parameters in the optimizer too
    states = ["learning_rate", "global_step", "moment1.p0", "moment1.p1", "moment2.p0", "moment2.p1"]
    assert names == ["p0", "p1"] + states + ["beta1_power", "beta2_power"]


def test_optimizer_argument_errors(rng):
    _, params = _params(rng)
    with pytest.raises(ValueError, match="must not be empty"):
        nn.Optimizer(0.1, [])
    with pytest.raises(TypeError, match="Parameter"):
        nn.Optimizer(0.1, [T(np.zeros(2, np.float32))])
    with pytest.raises(ValueError, match="more than once"):
        nn.Optimizer(0.1, [params[0], params[0]])
    with pytest.raises(ValueError, match="learning_rate"):
        nn.Optimizer(-1.0, params)
    with pytest.raises(ValueError, match="nesterov"):
        nn.SGD(params, nesterov=True)
    with pytest.raises(ValueError, match="beta1"):
        nn.Adam(params, beta1=1.0)


def test_optimizer_checks_gradients_and_learning_rate_is_a_parameter(rng):
    arrays, params = _params(rng)
    opt = nn.SGD(params, learning_rate=0.5)
    with pytest.raises(ValueError, match="one gradient per parameter"):
        opt([T(np.zeros((3, 4), np.float32))])
    with pytest.raises(ValueError, match=r"shape \[4\]"):
        opt([T(np.zeros((3, 4), np.float32)), T(np.zeros(3, np.float32))])
    opt.learning_rate.set_data(np.float32(0.25))
    grads = [np.ones_like(a) for a in arrays]
    opt([T(g) for g in grads])
    np.testing.assert_allclose(params[0].asnumpy(), arrays[0] - 0.25, rtol=1e-6)


# -- training -----------------------------------------------------------------------------------


def _regression(rng, n=64):
    x = rng.standard_normal((n, 4)).astype(np.float32)
    w = rng.standard_normal((4, 2)).astype(np.float32)
    return x, (x @ w + 0.5).astype(np.float32)


def test_train_one_step_cell_lowers_the_loss(rng):
    nn.set_seed(0)
    x, y = _regression(rng)
    net = nn.SequentialCell(nn.Dense(4, 16, activation="tanh", weight_init="xavier_uniform"), nn.Dense(16, 2))
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.05))
    assert net.training  # the wrapper puts the network in training mode
    losses = [float(step(T(x), T(y)).asnumpy()) for _ in range(60)]
    assert losses[-1] < 0.3 * losses[0]
    assert all(isinstance(v, float) for v in losses)


def test_train_one_step_cell_sens_scales_the_gradients(rng):
    x, y = _regression(rng, 8)
    results = []
    for sens in (1.0, 4.0):
        nn.set_seed(5)
        net = nn.Dense(4, 2)
        step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.01), sens)
        before = net.weight.asnumpy()
        step(T(x), T(y))
        results.append(net.weight.asnumpy() - before)
    np.testing.assert_allclose(results[1], 4 * results[0], rtol=1e-4, atol=1e-7)
    with pytest.raises(TypeError, match="Optimizer"):
        nn.TrainOneStepCell(net, object())


def test_classifier_training_with_adam(rng):
    nn.set_seed(0)
    centres = rng.standard_normal((3, 5)) * 3
    labels = rng.integers(0, 3, 96).astype(np.int32)
    x = (centres[labels] + rng.standard_normal((96, 5))).astype(np.float32)
    net = nn.SequentialCell(nn.Dense(5, 16, activation="relu", weight_init="he_uniform"), nn.Dense(16, 3))
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), nn.Adam(net.trainable_params(), 0.02))
    first = float(step(T(x), T(labels)).asnumpy())
    for _ in range(40):
        last = float(step(T(x), T(labels)).asnumpy())
    assert last < 0.2 * first
    net.set_train(False)
    assert (net(T(x)).asnumpy().argmax(1) == labels).mean() > 0.9


# -- checkpoints --------------------------------------------------------------------------------


def test_checkpoint_round_trip_is_exact(tmp_path, rng):
    net = Net()
    path = opforge.save_checkpoint(net, tmp_path / "net")
    assert path.endswith("net.ckpt")  # MindSpore's suffix and format
    loaded = opforge.load_checkpoint(path)
    assert list(loaded) == [p.name for p in net.get_parameters()]
    assert isinstance(loaded["fc1.weight"], opforge.Parameter)
    # opforge's own .npz also keeps requires_grad, which MindSpore's format does not hold
    assert opforge.load_checkpoint(opforge.save_checkpoint(net, tmp_path / "net.npz"))["scale"].requires_grad is False
    other = Net()
    assert not np.array_equal(other.fc1.weight.asnumpy(), net.fc1.weight.asnumpy())
    assert opforge.load_param_into_net(other, loaded) == ([], [])
    for p, q in zip(net.get_parameters(), other.get_parameters()):
        assert p.dtype == q.dtype and np.array_equal(p.asnumpy(), q.asnumpy())
    x = T(rng.standard_normal((2, 4), dtype=np.float32))
    np.testing.assert_array_equal(net(x).asnumpy(), other(x).asnumpy())


@pytest.mark.parametrize("suffix", [".ckpt", ".npz"])
def test_checkpoint_keeps_every_dtype_bit_exact(tmp_path, rng, suffix):
    values = {
        "bf16": T(rng.standard_normal((3, 5)).astype(np.float32), opforge.bfloat16),
        "f16": T(rng.standard_normal(7).astype(np.float16)),
        "f64": T(rng.standard_normal((2, 2))),
        "i32": T(np.arange(-3, 3, dtype=np.int32)),
        "flag": T(np.array([True, False])),
        "scalar": opforge.Parameter(np.float32(np.pi), name="scalar"),
    }
    loaded = nn.load_checkpoint(nn.save_checkpoint(values, tmp_path / ("mixed" + suffix)))
    for name, t in values.items():
        assert loaded[name].dtype == t.dtype and loaded[name].shape == t.shape
        assert np.asarray(loaded[name]).tobytes() == np.asarray(t).tobytes(), name


def test_checkpoint_of_a_training_cell_holds_optimizer_state_and_loads_into_the_network(tmp_path, rng):
    net = nn.Dense(3, 2)
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
    train(T(rng.standard_normal((4, 3), dtype=np.float32)), T(np.zeros((4, 2), np.float32)))
    saved = nn.load_checkpoint(nn.save_checkpoint(train, tmp_path / "train"))
    assert set(saved) == {"weight", "bias", "learning_rate", "global_step", "moments.weight", "moments.bias"}
    np.testing.assert_array_equal(saved["moments.weight"].asnumpy(), opt.moments[0].asnumpy())
    fresh = nn.Dense(3, 2)
    not_loaded, unused = nn.load_param_into_net(fresh, saved)
    assert not_loaded == [] and sorted(unused) == ["global_step", "learning_rate", "moments.bias", "moments.weight"]
    np.testing.assert_array_equal(fresh.weight.asnumpy(), net.weight.asnumpy())
    # strict_load (MindSpore's) only turns off the prefix look-up and the dtype conversion: it does not raise
    assert nn.load_param_into_net(fresh, saved, strict_load=True) == (not_loaded, unused)


def test_precision_flags_act_as_to_float():
    """MindSpore's to_float sets the fp16 / bf16 / fp32 flags; setting them with add_flags does the same."""
    x = T(np.ones((2, 3), np.float32))
    flagged, casted = nn.Dense(3, 2), nn.Dense(3, 2)
    casted.weight.set_data(flagged.weight.asnumpy())
    casted.bias.set_data(flagged.bias.asnumpy())
    flagged.add_flags_recursive(fp16=True)
    casted.to_float(opforge.float16)
    assert flagged(x).dtype == opforge.float16 and flagged.get_flags()["fp16"] is True
    np.testing.assert_array_equal(flagged(x).asnumpy(), casted(x).asnumpy())
    flagged.add_flags_recursive(fp32=True)
    assert flagged(x).dtype == opforge.float32
    flagged.add_flags(fp16=False)  # a flag set False changes nothing
    assert flagged(x).dtype == opforge.float32


def test_checkpoint_errors(tmp_path):
    with pytest.raises(ValueError, match="shape"):
        nn.load_param_into_net(nn.Dense(3, 2), {"weight": T(np.zeros((3, 3), np.float32))})
    with pytest.raises(ValueError, match="both named"):
        nn.save_checkpoint([opforge.Parameter(np.zeros(1, np.float32), name="w")] * 2, tmp_path / "dup")
    with pytest.raises(FileNotFoundError):
        nn.load_checkpoint(tmp_path / "missing.npz")
    np.savez(tmp_path / "plain.npz", w=np.zeros(2))
    with pytest.raises(ValueError, match="not an opforge checkpoint"):
        nn.load_checkpoint(tmp_path / "plain.npz")
    with pytest.raises(TypeError, match="Cell, a dict or a list"):
        nn.save_checkpoint(3, tmp_path / "bad")


# -- the training step does only the work it needs ----------------------------------------------


def _kernel_calls(fn) -> dict:
    from opforge import profiler

    with profiler.profile() as p:
        fn()
    calls: dict = {}
    for s in p.stats():
        calls[s.op] = calls.get(s.op, 0) + s.calls
    return calls


def test_train_step_skips_the_data_gradient_and_label_zeros(rng):
    net = nn.SequentialCell(nn.Dense(6, 5, activation="relu"), nn.Dense(5, 3))
    with_loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    x = T(rng.standard_normal((4, 6)).astype(np.float32))
    y = T(rng.integers(0, 3, 4).astype(np.int32))
    weights = net.trainable_params()
    weights_only = _kernel_calls(lambda: opforge.value_and_grad(with_loss, None, weights)(x, y))
    with_data = _kernel_calls(lambda: opforge.value_and_grad(with_loss, 0, weights)(x, y))
    assert with_data["MatMul"] == weights_only["MatMul"] + 1  # the first layer's input gradient
    step = nn.TrainOneStepCell(with_loss, nn.SGD(weights, learning_rate=0.1))
    calls = _kernel_calls(lambda: step(x, y))
    assert "ZerosLike" not in calls and calls["MatMul"] == weights_only["MatMul"]
    assert calls["ApplyGradientDescent"] == len(weights)


def test_train_one_step_cell_sens_can_change_between_steps(rng):
    x, y = _regression(rng, 8)
    deltas = []
    for sens in (1.0, 0.5):
        nn.set_seed(3)
        net = nn.Dense(4, 2)
        step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.01))
        step.sens = sens  # read on every step
        before = net.bias.asnumpy()
        loss = step(T(x), T(y))
        assert loss.shape == () and loss.dtype is opforge.float32  # the loss itself is not scaled
        deltas.append(net.bias.asnumpy() - before)
    np.testing.assert_allclose(deltas[1], 0.5 * deltas[0], rtol=1e-5, atol=1e-8)


def test_momentum_on_float16_parameters_casts_its_constants_once(rng):
    arrays = [rng.standard_normal((3, 2)).astype(np.float16)]
    params = [opforge.Parameter(arrays[0].copy(), name="w")]
    opt = nn.Momentum(params, 0.1, 0.9)
    momentum = opt._constant_like(opt.momentum_value, params[0])
    assert momentum.dtype is opforge.float16 and opt._constant_like(opt.momentum_value, params[0]) is momentum
    grads = rng.standard_normal((3, 2)).astype(np.float16)
    for _ in range(2):
        opt([T(grads)])
    # a = 0.9 a + g twice: 1.9 g in all; w -= 0.1 * (g + 1.9 g).
    expected = arrays[0].astype(np.float64) - 0.1 * 2.9 * grads.astype(np.float64)
    np.testing.assert_allclose(params[0].asnumpy().astype(np.float64), expected, rtol=5e-3, atol=5e-3)
