"""Activation recomputation (MindSpore's Cell.recompute, mindspore.recompute, Primitive.recompute;
opforge/bprop/recompute.py): the gradients equal those of the plain network (inputs and Parameters, float32 and
float64, tuple outputs, nested blocks, grad of grad), Dropout draws the same masks in the recomputation, BatchNorm
updates its statistics once, the tape keeps fewer tensors, a GRAPH_MODE training step with a recomputed sub-cell
matches PyNative without recomputation, and the argument checks."""

import numpy as np
import pytest

import opforge
from opforge import Parameter, Tensor, nn, ops
from opforge.bprop.tape import Tape
from opforge.device import memory
from opforge.parallel._transformer import TransformerEncoder, TransformerOpParallelConfig, TransformerRecomputeConfig


def _dense(rng, n_in, n_out, dtype):
    d = nn.Dense(n_in, n_out, dtype=opforge.float64 if dtype == np.float64 else opforge.float32)
    d.weight.set_data(Tensor(rng.standard_normal((n_out, n_in)).astype(dtype) / np.sqrt(n_in)))
    d.bias.set_data(Tensor(rng.standard_normal(n_out).astype(dtype) * 0.1))
    return d


class Block(nn.Cell):
    """Dense -> ReLU -> Dense -> Tanh, with a residual: several intermediates a tape would keep."""

    def __init__(self, rng, width, dtype=np.float32, keep_prob=1.0):
        super().__init__()
        self.d1 = _dense(rng, width, 2 * width, dtype)
        self.d2 = _dense(rng, 2 * width, width, dtype)
        self.drop = nn.Dropout(keep_prob=keep_prob) if keep_prob < 1.0 else None

    def construct(self, x):
        h = ops.relu(self.d1(x))
        if self.drop is not None:
            h = self.drop(h)
        return ops.tanh(self.d2(h)) + x


class Chain(nn.Cell):
    def __init__(self, seed, n, width, dtype=np.float32, recompute=False, keep_prob=1.0):
        super().__init__()
        opforge.set_seed(seed)  # the Dropout cells' seeds
        rng = np.random.default_rng(seed)
        self.blocks = nn.CellList([Block(rng, width, dtype, keep_prob) for _ in range(n)])
        if recompute:
            for b in self.blocks:
                b.recompute()

    def construct(self, x):
        for b in self.blocks:
            x = b(x)
        return (x * x).sum()


def _close(a, b, rtol=1e-6):
    a, b = (t.asnumpy() if isinstance(t, Tensor) else np.asarray(t) for t in (a, b))
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * max(1.0, float(np.abs(b).max())))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradients_of_inputs_and_parameters_equal_the_plain_network(dtype):
    x = Tensor(np.random.default_rng(5).standard_normal((4, 6)).astype(dtype))
    results = []
    for recompute in (False, True):
        net = Chain(3, 3, 6, dtype, recompute)
        value, (gx, gw) = opforge.value_and_grad(net, 0, net.trainable_params())(x)
        (gw_by_list,) = [ops.GradOperation(get_by_list=True)(net, net.trainable_params())(x)]
        results.append((value, gx, gw, gw_by_list))
    (v0, gx0, gw0, gl0), (v1, gx1, gw1, gl1) = results
    _close(v1, v0)
    _close(gx1, gx0)
    assert len(gw1) == len(gw0) == 12
    for a, b, c in zip(gw1, gw0, gl1):
        _close(a, b)
        _close(c, b)
    assert float(np.abs(gw0[0].asnumpy()).max()) > 1e-3  # (gradients that say something)


def _numpy_block(x, w1, b1, w2, b2):
    h = np.maximum(x @ w1.T + b1, 0)
    return np.tanh(h @ w2.T + b2) + x


def test_gradient_against_numpy_and_the_tape_holds_one_record_per_block():
    rng = np.random.default_rng(0)
    net = Chain(7, 2, 3, np.float64, recompute=True)
    x = rng.standard_normal((2, 3))
    params = [p.asnumpy() for p in net.trainable_params()]

    def f(xv):
        y = xv
        for i in range(2):
            y = _numpy_block(y, *params[4 * i : 4 * i + 4])
        return (y * y).sum()

    eps = 1e-6
    expected = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[idx] = eps
        expected[idx] = (f(x + d) - f(x - d)) / (2 * eps)
    _close(opforge.grad(net)(Tensor(x)), expected, rtol=1e-6)
    t = Tensor(x)
    with Tape() as tape:
        tape.watch(t)
        net(t)
    assert [r[0].name for r in tape.records] == ["Block", "Block", "Mul", "ReduceSum"]


def _held_bytes(tape) -> int:
    """The bytes of the distinct non-Parameter tensors the tape's records hold."""
    seen, total = set(), 0
    for _, args, out, _ in tape.records:
        for t in list(args) + list(out if isinstance(out, tuple) else (out,)):
            if isinstance(t, Tensor) and not isinstance(t, Parameter) and id(t) not in seen:
                seen.add(id(t))
                total += t.asnumpy().nbytes
    return total


def test_a_chain_of_recomputed_blocks_keeps_fewer_tensors_on_the_tape():
    x = Tensor(np.random.default_rng(1).standard_normal((128, 128)).astype(np.float32))  # 64 KiB activations
    held, in_use, grads = {}, {}, {}
    for recompute in (False, True):
        net = Chain(2, 6, 128, np.float32, recompute)
        params = net.trainable_params()
        before = memory.stats()["bytes_in_use"]
        tape = Tape()
        with tape:
            tape.watch(x)
            for p in params:
                tape.watch(p)
            loss = net(x)
        in_use[recompute] = memory.stats()["bytes_in_use"] - before
        held[recompute] = (len(tape.records), _held_bytes(tape))
        del loss
        tape.release()
        grads[recompute] = opforge.grad(net, None, params)(x)
    # Without recomputation each block leaves 7 records (MatMul, BiasAdd, ReLU, MatMul, BiasAdd, Tanh, Add) and
    # their 6 intermediates (two of 2x width); with it one record per block: the block inputs and outputs alone.
    assert held[True][0] == 6 + 2 and held[False][0] == 6 * 7 + 2
    assert held[True][1] * 4 < held[False][1], held
    if memory.is_enabled():  # the pool counts the arrays kept alive (64 KiB and up)
        assert in_use[True] * 3 < in_use[False], in_use
    for a, b in zip(grads[True], grads[False]):
        _close(a, b)


class Twice(nn.Cell):
    """A tuple output, one of them the input passed through, and a Parameter read directly."""

    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.array([0.5, -1.5, 2.0])), name="w")

    def construct(self, x, y):
        return ops.sin(x * self.w) * y, x


def test_tuple_outputs_an_input_passed_through_and_kwargs():
    rng = np.random.default_rng(2)
    xv, yv = rng.standard_normal(3), rng.standard_normal(3)

    def loss(block_call):
        def f(x, y):
            a, b = block_call(x, y)
            return (a * b).sum() + (b * b * b).sum()

        return f

    plain_cell, rc_cell = Twice(), Twice()
    rc_cell.recompute()
    w = plain_cell.w.asnumpy()
    expected_x = np.cos(xv * w) * w * yv * xv + np.sin(xv * w) * yv + 3 * xv * xv
    expected_y = np.sin(xv * w) * xv
    for cell, call in (
        (plain_cell, lambda x, y: plain_cell(x, y)),
        (rc_cell, lambda x, y: rc_cell(x, y=y)),
        (plain_cell, lambda x, y: opforge.recompute(plain_cell, x, y=y)),
    ):
        gx, gy = opforge.grad(loss(call), (0, 1))(Tensor(xv), Tensor(yv))
        _close(gx, expected_x, 1e-12)
        _close(gy, expected_y, 1e-12)
        (gw,) = ops.GradOperation(get_by_list=True)(loss(call), [cell.w])(Tensor(xv), Tensor(yv))
        _close(gw, np.cos(xv * w) * xv * yv * xv, 1e-12)


def test_functional_recompute_follows_mindsporess_conv_example():
    class MyCell(nn.Cell):
        def __init__(self):
            super().__init__(auto_prefix=False)
            self.conv = nn.Conv2d(2, 2, 2, has_bias=False, weight_init="ones")
            self.relu = ops.ReLU()

        def construct(self, x):
            return self.relu(opforge.recompute(self.conv, x))

    grad = opforge.grad(MyCell())(Tensor(np.ones([2, 2, 2, 2], np.float32) * 2)).asnumpy()
    # d sum(conv) / dx: each input counts the ("same"-padded) 2x2 windows covering it, for 2 output channels
    covered = np.array([[1, 2], [2, 4]], np.float32) * 2
    np.testing.assert_array_equal(grad, np.broadcast_to(covered, (2, 2, 2, 2)))
    with pytest.raises(TypeError, match="For 'recompute', the 'block' must be a Cell"):
        opforge.recompute(lambda t: t * 2, Tensor(np.ones(2, np.float32)))


class Outer(nn.Cell):
    """A recomputed cell whose construct recomputes a sub-block again (the functional form)."""

    def __init__(self, recompute):
        super().__init__()
        rng = np.random.default_rng(11)
        self.inner, self.dense = Block(rng, 4, np.float64), _dense(rng, 4, 4, np.float64)
        self.nested = recompute

    def construct(self, x):
        h = opforge.recompute(self.inner, x) if self.nested else self.inner(x)
        return ops.sigmoid(self.dense(h)) * h


def test_a_recomputed_block_nested_in_a_recomputed_cell():
    x = Tensor(np.random.default_rng(4).standard_normal((3, 4)))
    plain, nested = Outer(False), Outer(True)
    nested.recompute()
    f0 = lambda t: (plain(t) ** 2).sum()  # noqa: E731
    f1 = lambda t: (nested(t) ** 2).sum()  # noqa: E731
    v0, (g0, w0) = opforge.value_and_grad(f0, 0, plain.trainable_params())(x)
    v1, (g1, w1) = opforge.value_and_grad(f1, 0, nested.trainable_params())(x)
    _close(v1, v0, 1e-12)
    _close(g1, g0, 1e-12)
    for a, b in zip(w1, w0):
        _close(a, b, 1e-12)


class SinW(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.array([0.7, -1.3])), name="w")

    def construct(self, x):
        return ops.sin(x * self.w)


def test_grad_of_grad_through_a_recomputed_cell():
    cell = SinW()
    cell.recompute()
    w = cell.w.asnumpy()
    xv = np.array([0.4, 1.1])
    first = opforge.grad(lambda t: (cell(t) * t).sum())
    # d/dx [sin(w x) x] = w cos(w x) x + sin(w x); its derivative: -w^2 sin(w x) x + 2 w cos(w x)
    _close(first(Tensor(xv)), w * np.cos(w * xv) * xv + np.sin(w * xv), 1e-12)
    second = opforge.grad(lambda t: first(t).sum())(Tensor(xv))
    _close(second, -w * w * np.sin(w * xv) * xv + 2 * w * np.cos(w * xv), 1e-12)


def test_dropout_draws_the_same_masks_when_recomputed():
    x = Tensor(np.random.default_rng(3).standard_normal((8, 6)).astype(np.float32))
    runs = {}
    for recompute in (False, True):
        net = Chain(21, 2, 6, np.float32, recompute, keep_prob=0.6)
        net.set_train()
        params = net.trainable_params()
        # two gradient calls: the second draws new masks (the step counters moved on once per call)
        runs[recompute] = [opforge.value_and_grad(net, 0, params)(x) for _ in range(2)]
        steps = [b.drop.step for b in net.blocks]
        assert steps == [2, 2]
    for (v0, (gx0, gw0)), (v1, (gx1, gw1)) in zip(runs[False], runs[True]):
        _close(v1, v0)
        _close(gx1, gx0)
        for a, b in zip(gw1, gw0):
            _close(a, b)
    assert not np.allclose(runs[False][0][0].asnumpy(), runs[False][1][0].asnumpy())  # the masks did change

    # the functional ops' default generator: the recomputation draws the values of the first pass
    class Noisy(nn.Cell):
        def construct(self, t):
            return ops.dropout(t, p=0.5) * ops.rand_like(t)

    cell = Noisy()
    cell.recompute()
    opforge.set_seed(5)  # (the default generator restarts from it)
    before = opforge.get_rng_state().asnumpy()
    value, grad = opforge.value_and_grad(lambda t: (cell(t) * t).sum())(x)
    assert (opforge.get_rng_state().asnumpy()[1] - before[1]) == 2  # two draws, not four
    opforge.set_seed(5)
    noise = ops.dropout(x, p=0.5) * ops.rand_like(x)
    _close(value, (noise * x).sum())
    _close(grad, noise * 2)


def test_batchnorm_statistics_are_updated_once():
    x = Tensor(np.random.default_rng(6).standard_normal((5, 3)).astype(np.float32) * 2 + 1)
    stats = []
    for recompute in (False, True):
        bn = nn.BatchNorm1d(3, momentum=0.5)
        bn.set_train()
        cell = nn.SequentialCell([bn, nn.ReLU()])
        if recompute:
            cell.recompute()
        g = opforge.grad(lambda t, c=cell: (c(t) ** 2).sum())(x)
        stats.append((bn.moving_mean.asnumpy(), bn.moving_variance.asnumpy(), g))
    (m0, v0, g0), (m1, v1, g1) = stats
    _close(m1, m0)
    _close(v1, v0)
    _close(g1, g0)


class Head(nn.Cell):
    def __init__(self, recompute):
        super().__init__()
        opforge.set_seed(9)
        rng = np.random.default_rng(9)
        self.inp = _dense(rng, 5, 6, np.float32)
        self.body = Block(rng, 6, keep_prob=0.7)
        self.out = _dense(rng, 6, 2, np.float32)
        if recompute:
            self.body.recompute()

    def construct(self, x):
        return self.out(self.body(ops.relu(self.inp(x))))


def _train(mode, recompute, data, target):
    net = Head(recompute)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.Momentum(net.trainable_params(), 0.1, 0.9))
    step.set_train()
    opforge.set_context(mode=mode)
    try:
        losses = [float(step(data, target).asnumpy()) for _ in range(3)]
    finally:
        opforge.set_context(mode=opforge.PYNATIVE_MODE)
    return losses, [p.asnumpy() for p in net.trainable_params()], net.body.drop.step, step


def test_graph_mode_training_step_with_a_recomputed_sub_cell_matches_pynative():
    rng = np.random.default_rng(8)
    data = Tensor(rng.standard_normal((8, 5)).astype(np.float32))
    target = Tensor(rng.standard_normal((8, 2)).astype(np.float32))
    losses0, params0, steps0, _ = _train(opforge.PYNATIVE_MODE, False, data, target)
    losses1, params1, steps1, _ = _train(opforge.GRAPH_MODE, True, data, target)  # traced once, replayed twice
    assert opforge.get_context("mode") == opforge.PYNATIVE_MODE
    _close(losses1, losses0, 1e-5)
    for a, b in zip(params1, params0):
        _close(a, b, 1e-5)
    assert steps0 == 3 and steps1 == 3
    losses2, params2, _, _ = _train(opforge.PYNATIVE_MODE, True, data, target)
    _close(losses2, losses0)
    for a, b in zip(params2, params0):
        _close(a, b)


def _replayed_steps(train_step) -> int:
    first = train_step._graph.explain().splitlines()[0]  # "...: N calls recorded; M steps replayed (...)"
    return int(first.split("; ")[1].split()[0])


def test_graph_mode_keeps_the_recomputed_calls_apart_from_the_first_pass():
    """The trace compiler merges repeated calls (common subexpressions), but never a recomputation's with the
    first pass's (Tracer.own_region): the replayed step computes the block twice, as PyNative does."""
    rng = np.random.default_rng(8)
    data = Tensor(rng.standard_normal((8, 5)).astype(np.float32))
    target = Tensor(rng.standard_normal((8, 2)).astype(np.float32))
    plain = _replayed_steps(_train(opforge.GRAPH_MODE, False, data, target)[3])
    recomputed = _replayed_steps(_train(opforge.GRAPH_MODE, True, data, target)[3])
    assert recomputed > plain, (recomputed, plain)


def test_graph_mode_cell_traced_before_replays_under_the_tape_with_the_first_masks():
    """The cell's construct is traced by a call outside any gradient; the gradient calls then replay that trace call
    by call (its Dropout counter refilled at each replay, the recomputation's included)."""
    x = Tensor(np.random.default_rng(3).standard_normal((8, 6)).astype(np.float32))
    runs = []
    for recompute in (False, True):
        opforge.set_seed(4)
        block = Block(np.random.default_rng(1), 6, keep_prob=0.5)
        block.set_train()
        if recompute:
            block.recompute()
        opforge.set_context(mode=opforge.GRAPH_MODE)
        try:
            first = block(x)
            loss = lambda t, b=block: (b(t) ** 2).sum()  # noqa: E731
            grads = [opforge.grad(loss, 0, block.trainable_params())(x) for _ in range(2)]
            last = block(x)
        finally:
            opforge.set_context(mode=opforge.PYNATIVE_MODE)
        runs.append((first, grads, last, block.drop.step))
    (f0, g0, l0, s0), (f1, g1, l1, s1) = runs
    assert s0 == s1 == 4
    _close(f1, f0)
    _close(l1, l0)
    for (gx0, gw0), (gx1, gw1) in zip(g0, g1):
        _close(gx1, gx0)
        for a, b in zip(gw1, gw0):
            _close(a, b)


def test_cell_recompute_checks_its_arguments_and_is_configured_once():
    cell = Block(np.random.default_rng(0), 2)
    with pytest.raises(TypeError, match="For 'recompute', the 'mp_comm_recompute' must be bool, but got int"):
        cell.recompute(mp_comm_recompute=1)
    with pytest.raises(TypeError, match="'parallel_optimizer_comm_recompute' must be bool"):
        cell.recompute(parallel_optimizer_comm_recompute="yes")
    with pytest.raises(TypeError, match="'recompute_slice_activation' must be bool"):
        cell.recompute(recompute_slice_activation=None)
    with pytest.raises(ValueError, match="keyword 'mode' is not recognized"):
        cell.recompute(mode=True)
    assert "_recompute_kwargs" not in cell.__dict__  # nothing configured by a failed call
    cell.recompute(mp_comm_recompute=False, recompute_slice_activation=True)
    assert cell._recompute_kwargs == {
        "mp_comm_recompute": False, "parallel_optimizer_comm_recompute": False, "recompute_slice_activation": True
    }  # fmt: skip
    with pytest.raises(RuntimeError, match="configured only once"):
        cell.recompute()
    with pytest.raises(RuntimeError, match="configured only once"):
        cell.d1.recompute()  # a sub-cell of a configured cell
    parent = nn.SequentialCell([cell])
    with pytest.raises(RuntimeError, match="configured only once"):
        parent.recompute()  # a cell holding a configured one


def test_primitive_recompute_sets_the_attr_and_returns_the_primitive():
    relu = ops.ReLU()
    assert relu.recompute() is relu and relu.attrs["recompute"] is True
    matmul = ops.MatMul().recompute(False)
    assert matmul.attrs["recompute"] is False
    with pytest.raises(TypeError, match="the 'mode' of 'recompute' must be bool"):
        ops.ReLU().recompute(1)
    x = np.array([[-1.0, 2.0], [3.0, -4.0]], np.float32)
    np.testing.assert_array_equal(relu(Tensor(x)).asnumpy(), np.maximum(x, 0))
    np.testing.assert_array_equal(opforge.grad(lambda t: relu(t).sum())(Tensor(x)).asnumpy(), (x > 0) * 1.0)


def test_transformer_recompute_config_recomputes_each_block():
    rng = np.random.default_rng(7)
    x = Tensor(rng.standard_normal((2, 4, 8)).astype(np.float32))
    mask = Tensor(np.tril(np.ones((4, 4), np.float32))[None].repeat(2, axis=0))
    runs = []
    for recompute in (False, True):
        opforge.set_seed(3)
        config = TransformerOpParallelConfig(recompute=TransformerRecomputeConfig(recompute))
        enc = TransformerEncoder(batch_size=2, num_layers=2, hidden_size=8, ffn_hidden_size=16, seq_length=4,
                                 num_heads=2, hidden_dropout_rate=0.2, parallel_config=config)  # fmt: skip
        enc.set_train()
        assert ["_recompute_kwargs" in block.__dict__ for block in enc.blocks] == [recompute, recompute]
        loss = lambda t, e=enc: (ops.cast(e(t, mask)[0], opforge.float32) ** 2).sum()  # noqa: E731
        runs.append(opforge.value_and_grad(loss, 0, enc.trainable_params())(x))
        with Tape() as tape:
            tape.watch(x)
            loss(x)
        assert (len(tape.records) < 8) == recompute  # two blocks and the loss's calls, or every operator
    (v0, (g0, w0)), (v1, (g1, w1)) = runs
    _close(v1, v0)
    _close(g1, g0)
    for a, b in zip(w1, w0):
        _close(a, b)
