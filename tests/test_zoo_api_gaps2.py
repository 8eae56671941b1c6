"""More MindSpore APIs the model zoo uses that opforge lacked (docs/zoo_api_survey.md): ``ops.LSTM`` (the flat-weight
primitive) against a NumPy LSTM and nn.LSTM, its gradients against central differences; ``JitConfig`` with
``Cell.set_jit_config``, ``jit`` and ``data_sink``; ``_VirtualDatasetCell`` (2 MPI ranks: the batch laid out
as MindSpore's _VirtualDataset does, training equal to one process); ``dataset.config.set_numa_enable``;
``QuantDtype``; ``ops.FusedCastAdamWeightDecay`` against AdamWeightDecay and NumPy."""

from __future__ import annotations

import logging
import pathlib
import re

import numpy as np
import pytest
from test_data_parallel import needs_mpi, run_job

import opforge
from opforge import Parameter, Tensor, communication, nn, ops
from opforge import dtype as mstype

SCRIPTS = pathlib.Path(__file__).parent / "mpi_scripts"


def _rng(seed=0):
    return np.random.default_rng(seed)


# -- ops.LSTM ------------------------------------------------------------------------------------------------


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def _lstm_numpy(x, h, c, w, input_size, hidden, layers, has_bias, bidirectional, masks=None, keep=1.0):
    """The stacked LSTM in NumPy, reading ``w`` in cuDNN's packing (per layer, per direction: w_ih, w_hh, b_ih,
    b_hh; gates i, f, g, o). ``masks``: the dropout masks of the inputs of layers 1.. (scaled by 1 / keep)."""
    dirs = 2 if bidirectional else 1
    w, offset = np.asarray(w, np.float64).ravel(), 0

    def take(*shape):
        nonlocal offset
        n = int(np.prod(shape))
        part = w[offset : offset + n].reshape(shape)
        offset += n
        return part

    layer_in, h_n, c_n = np.asarray(x, np.float64), [], []
    for layer in range(layers):
        if layer > 0 and masks is not None:
            layer_in = layer_in * masks[layer - 1] / keep
        in_size = input_size if layer == 0 else hidden * dirs
        outs = []
        for d in range(dirs):
            w_ih, w_hh = take(4 * hidden, in_size), take(4 * hidden, hidden)
            bias = take(4 * hidden) + take(4 * hidden) if has_bias else np.zeros(4 * hidden)
            hk, ck = h[layer * dirs + d].astype(np.float64), c[layer * dirs + d].astype(np.float64)
            y = np.zeros((x.shape[0], x.shape[1], hidden))
            for t in range(x.shape[0]) if d == 0 else reversed(range(x.shape[0])):
                i, f, g, o = np.split(layer_in[t] @ w_ih.T + hk @ w_hh.T + bias, 4, axis=1)
                ck = _sigmoid(f) * ck + _sigmoid(i) * np.tanh(g)
                hk = _sigmoid(o) * np.tanh(ck)
                y[t] = hk
            outs.append(y)
            h_n.append(hk)
            c_n.append(ck)
        layer_in = np.concatenate(outs, axis=-1)
    assert offset == w.size
    return layer_in, np.stack(h_n), np.stack(c_n)


def _mindspore_weight_size(input_size, hidden, layers, has_bias, bidirectional):
    """The size MindSpore 1.x's nn.LSTM gave its flat GPU weight (gate_size = 4 hidden)."""
    gate, dirs, size = 4 * hidden, 2 if bidirectional else 1, 0
    for layer in range(layers):
        in_size = input_size if layer == 0 else hidden * dirs
        size += (gate * in_size + gate * hidden + (2 * gate if has_bias else 0)) * dirs
    return size


def _lstm_inputs(op, seq=5, batch=2, dtype=np.float64, seed=0):
    rng = _rng(seed)
    states = op.num_layers * op.num_directions, batch, op.hidden_size
    x = rng.standard_normal((seq, batch, op.input_size))
    h, c = rng.standard_normal(states), rng.standard_normal(states)
    w = rng.standard_normal((op.weight_size, 1, 1)) * 0.5
    return [a.astype(dtype) for a in (x, h, c, w)]


CONFIGS = [(3, 4, 2, True, True), (2, 3, 1, False, False), (3, 2, 3, True, False), (2, 3, 2, False, True)]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "in{}-h{}-l{}-bias{}-bi{}".format(*c))
def test_lstm_primitive_matches_numpy_with_cudnn_packing(config):
    op = ops.LSTM(*config, 0.0)
    assert op.weight_size == _mindspore_weight_size(*config)
    arrays = _lstm_inputs(op)
    want = _lstm_numpy(*arrays, *config)
    output, h_n, c_n, reserve, state = op(*(Tensor(a) for a in arrays))
    for got, ref in zip((output, h_n, c_n), want):
        np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-10, atol=1e-12)
    seq, batch = arrays[0].shape[:2]
    dirs = op.num_directions
    assert output.shape == (seq, batch, dirs * op.hidden_size)
    # reserve: each layer and direction's gates (4 hidden) and cell states (hidden) at every step
    assert reserve.shape == (op.num_layers * dirs * seq * batch * 5 * op.hidden_size, 1)
    assert state.shape == (0, 1)  # no dropout, no masks
    out32 = op(*(Tensor(a.astype(np.float32)) for a in arrays))
    assert out32[0].dtype == mstype.float32
    np.testing.assert_allclose(out32[0].asnumpy(), want[0], rtol=1e-4, atol=1e-5)
    out16 = op(*(Tensor(a.astype(np.float16)) for a in arrays))  # computed in float32
    assert all(t.dtype == mstype.float16 for t in out16)
    ref16 = _lstm_numpy(*(a.astype(np.float16) for a in arrays), *config)
    np.testing.assert_allclose(out16[1].asnumpy(), ref16[1], rtol=2e-3, atol=2e-3)


def test_lstm_primitive_agrees_with_nn_lstm_packed_in_mindspore_gpu_order():
    """MindSpore's nn.LSTM hands P.LSTM its weights concatenated as w_ih, w_hh, b_ih, b_hh (the zoo's LPCNet
    does the same, per layer): packing opforge's nn.LSTM parameters that way gives its outputs."""
    nn.set_seed(3)
    net = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    params = dict(net.parameters_and_names())
    parts = [
        params[f"{kind}_l{layer}{suffix}"].asnumpy().ravel()
        for layer in range(2)
        for suffix in ("", "_reverse")
        for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
    ]
    w = np.concatenate(parts).reshape(-1, 1, 1)
    op = ops.operations.LSTM(3, 4, 2, True, True, 0.0)
    assert ops.operations.LSTM is ops.LSTM and w.shape[0] == op.weight_size
    rng = _rng(1)
    x = rng.standard_normal((6, 2, 3)).astype(np.float32)
    h0, c0 = (rng.standard_normal((4, 2, 4)).astype(np.float32) for _ in range(2))
    output, (h_n, c_n) = net(Tensor(x), (Tensor(h0), Tensor(c0)))
    got = op(Tensor(x), Tensor(h0), Tensor(c0), Tensor(w.astype(np.float32)))
    for a, b in zip(got[:3], (output, h_n, c_n)):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)


def test_lstm_primitive_gradients_match_central_differences():
    op = ops.LSTM(2, 2, 2, True, True, 0.0)
    arrays = _lstm_inputs(op, seq=3, batch=2, seed=1)
    rng = _rng(2)
    weights = [rng.standard_normal(s) for s in ((3, 2, 4), (4, 2, 2), (4, 2, 2))]

    def loss(*inputs):
        outs = op(*inputs)[:3]
        return sum(((o * Tensor(wt)).sum() for o, wt in zip(outs, weights)), Tensor(0.0))

    def loss_np(arrays):
        return float(loss(*(Tensor(a) for a in arrays)).asnumpy())

    grads = opforge.grad(loss, grad_position=(0, 1, 2, 3))(*(Tensor(a) for a in arrays))
    eps = 1e-6
    for k, a in enumerate(arrays):
        want = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            plus, minus = [b.copy() for b in arrays], [b.copy() for b in arrays]
            plus[k][idx] += eps
            minus[k][idx] -= eps
            want[idx] = (loss_np(plus) - loss_np(minus)) / (2 * eps)
        np.testing.assert_allclose(grads[k].asnumpy(), want, rtol=1e-6, atol=1e-7)


def test_lstm_primitive_trains_in_graph_mode():
    """A Cell holding P.LSTM's flat weight as one Parameter (the zoo's CRNN-seq2seq layout), traced and trained."""

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.lstm = ops.operations.LSTM(3, 8, 2, True, True, 0.0)
            w = _rng(0).uniform(-0.3, 0.3, (self.lstm.weight_size, 1, 1)).astype(np.float32)
            self.weight = Parameter(Tensor(w), name="weight")
            self.fc = nn.Dense(16, 1)
            self.zeros = Tensor(np.zeros((4, 4, 8), np.float32))

        def construct(self, x):
            out = self.lstm(x, self.zeros, self.zeros, self.weight)[0]
            return self.fc(out[-1])

    nn.set_seed(0)
    net = Net()
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.Adam(net.trainable_params(), 0.01))
    rng = _rng(1)
    x, y = (
        Tensor(rng.standard_normal((5, 4, 3)).astype(np.float32)),
        Tensor(rng.standard_normal((4, 1)).astype(np.float32)),
    )
    opforge.set_context(mode=opforge.GRAPH_MODE)
    try:
        losses = [float(step(x, y).asnumpy()) for _ in range(30)]
    finally:
        opforge.set_context(mode=opforge.PYNATIVE_MODE)
    assert losses[-1] < losses[0] / 5


def test_lstm_primitive_dropout_between_layers():
    """dropout drops the input of every layer but the first, a new mask each call; ``state`` holds the masks."""
    op = ops.LSTM(3, 4, 3, True, False, 0.4)
    arrays = _lstm_inputs(op, seq=4, batch=2, seed=3)
    tensors = [Tensor(a) for a in arrays]
    first = op(*tensors)
    masks = first[4].asnumpy().reshape(2, 4, 2, 4)  # the inputs of layers 1 and 2
    assert set(np.unique(masks)) <= {0.0, 1.0} and 0.2 < masks.mean() < 0.9
    want = _lstm_numpy(*arrays, 3, 4, 3, True, False, masks=masks, keep=0.6)
    for got, ref in zip(first[:3], want):
        np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-10, atol=1e-12)
    second = op(*tensors)
    assert not np.array_equal(first[4].asnumpy(), second[4].asnumpy())
    # dropout 1: every layer above the first reads zeros
    all_dropped = ops.LSTM(3, 4, 2, True, False, 1.0)
    arrays = _lstm_inputs(all_dropped, seq=4, batch=2, seed=4)
    got = all_dropped(*(Tensor(a) for a in arrays))
    zeros = [np.zeros((4, 2, 4))]
    np.testing.assert_allclose(
        got[0].asnumpy(), _lstm_numpy(*arrays, 3, 4, 2, True, False, masks=zeros)[0], rtol=1e-10, atol=1e-12
    )


def test_lstm_primitive_errors_follow_mindspore():
    for args, error in (
        ((3.0, 4, 1, True, False, 0.0), TypeError),
        ((3, 0, 1, True, False, 0.0), ValueError),
        ((3, 4, -1, True, False, 0.0), ValueError),
        ((3, 4, 1, 1, False, 0.0), TypeError),
        ((3, 4, 1, True, "no", 0.0), TypeError),
        ((3, 4, 1, True, False, 0), TypeError),
        ((3, 4, 1, True, False, 1.5), ValueError),
    ):
        with pytest.raises(error, match="LSTM"):
            ops.LSTM(*args)
    op = ops.LSTM(3, 4, 2, True, False, 0.0)
    x, h, c, w = (Tensor(a.astype(np.float32)) for a in _lstm_inputs(op))
    bad = {
        "x rank": ((Tensor(np.zeros((5, 3), np.float32)), h, c, w), ValueError),
        "x[2]": ((Tensor(np.zeros((5, 2, 2), np.float32)), h, c, w), ValueError),
        "h[0]": ((x, h[:1], c[:1], w), ValueError),
        "same shape": ((x, h, c[:, :1], w), ValueError),
        "h[1]": ((x, h[:, :1], c[:, :1], w), ValueError),
        "size of weight": ((x, h, c, Tensor(np.zeros((7, 1, 1), np.float32))), ValueError),
        "dimension of weight": ((x, h, c, Tensor(np.zeros((op.weight_size,), np.float32))), ValueError),
        "must be a Tensor of dtype": ((Tensor(np.zeros((5, 2, 3), np.int32)), h, c, w), TypeError),
        "same dtype": ((x, h, c, Tensor(np.zeros((op.weight_size, 1, 1), np.float64))), TypeError),
    }
    for match, (inputs, error) in bad.items():
        with pytest.raises(error, match=re.escape(match)):
            op(*inputs)


# -- JitConfig -----------------------------------------------------------------------------------------------


def test_jit_config_is_checked_and_kept():
    from opforge.common import JitConfig as CommonJitConfig
    from opforge.common.jit_config import JitConfig as ModuleJitConfig

    assert CommonJitConfig is opforge.JitConfig is ModuleJitConfig
    config = opforge.JitConfig(jit_level="O2", custom_option=3)
    assert config.jit_config_dict == {
        "custom_option": 3, "jit_level": "O2", "exc_mode": "auto", "jit_syntax_level": "",
        "debug_level": "RELEASE", "infer_boost": "off",
    }  # fmt: skip
    assert opforge.JitConfig().jit_config_dict["jit_level"] == ""
    for kwargs in (
        {"jit_level": "O3"},
        {"exc_mode": "fast"},
        {"jit_syntax_level": "LOOSE"},
        {"debug_level": "INFO"},
        {"infer_boost": "yes"},
    ):
        with pytest.raises(ValueError, match=next(iter(kwargs))):
            opforge.JitConfig(**kwargs)


def test_cell_set_jit_config_keeps_the_first(caplog):
    net = nn.Dense(3, 2)
    assert net.jit_config_dict == {}
    net.set_jit_config(opforge.JitConfig(jit_level="O2"))  # the zoo's LSTM train.py
    assert net.jit_config_dict["jit_level"] == "O2"
    with caplog.at_level(logging.WARNING):
        net.set_jit_config(opforge.JitConfig(jit_level="O0"))
    assert net.jit_config_dict["jit_level"] == "O2" and "only be set once" in caplog.text
    with pytest.raises(TypeError, match="jit_config"):
        nn.Dense(3, 2).set_jit_config("O2")
    x = Tensor(_rng().standard_normal((4, 3)).astype(np.float32))
    opforge.set_context(mode=opforge.GRAPH_MODE)
    try:
        traced = net(x).asnumpy()
    finally:
        opforge.set_context(mode=opforge.PYNATIVE_MODE)
    np.testing.assert_allclose(traced, net(x).asnumpy(), rtol=1e-6)


def test_jit_and_data_sink_take_a_jit_config():
    double = opforge.jit(lambda t: t * 2, jit_config=opforge.JitConfig(jit_level="O1"))
    assert double.jit_config_dict["jit_level"] == "O1"
    np.testing.assert_array_equal(double(Tensor(np.arange(3.0))).asnumpy(), [0.0, 2.0, 4.0])
    assert opforge.jit(lambda t: t, jit_config={"jit_level": "O0"}).jit_config_dict["jit_level"] == "O0"
    assert opforge.jit(lambda t: t).jit_config_dict is None
    with pytest.raises(TypeError, match="jit_config"):
        opforge.jit(lambda t: t, jit_config="O2")
    with pytest.raises(ValueError, match="jit_level"):
        opforge.jit(lambda t: t, jit_config={"jit_level": "O9"})
    data = opforge.dataset.NumpySlicesDataset({"x": np.arange(4, dtype=np.float32)}, shuffle=False)
    with pytest.raises(ValueError, match="exc_mode"):
        opforge.data_sink(lambda x: x, data, jit_config={"exc_mode": "always"})
    sink = opforge.data_sink(lambda x: x * 3, data, sink_size=2, jit_config=opforge.JitConfig())
    assert float(sink().asnumpy()) == 3.0 and float(sink().asnumpy()) == 9.0


# -- _VirtualDatasetCell -------------------------------------------------------------------------------------


def test_virtual_dataset_cell_passes_through_outside_semi_auto_parallel():
    from opforge.nn.wrap.cell_wrapper import _VirtualDatasetCell

    nn.set_seed(1)
    backbone = nn.WithLossCell(nn.Dense(3, 2), nn.MSELoss())
    backbone.set_jit_config(opforge.JitConfig(jit_level="O1"))
    cell = _VirtualDatasetCell(backbone)
    assert [p.name for p in cell.trainable_params()] == [p.name for p in backbone.trainable_params()]
    assert cell.jit_config_dict["jit_level"] == "O1"  # taken from the backbone, as MindSpore's
    rng = _rng(4)
    x, y = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((4, 2)).astype(np.float32)
    np.testing.assert_array_equal(cell(Tensor(x), Tensor(y)).asnumpy(), backbone(Tensor(x), Tensor(y)).asnumpy())
    communication.init()  # a world of one rank in this process
    opforge.set_auto_parallel_context(parallel_mode="semi_auto_parallel", full_batch=True)
    try:  # one rank: nothing to split
        np.testing.assert_allclose(
            cell(Tensor(x), Tensor(y)).asnumpy(), backbone(Tensor(x), Tensor(y)).asnumpy(), rtol=1e-6
        )
    finally:
        opforge.reset_auto_parallel_context()
    with pytest.raises(TypeError, match="backbone"):
        _VirtualDatasetCell(lambda x: x)


@needs_mpi
@pytest.mark.parametrize("full_batch", [True, False], ids=["full-batch", "own-blocks"])
def test_virtual_dataset_cell_lays_out_the_batch_on_two_ranks(full_batch):
    """full_batch: the cell splits each rank's whole batch along dim 0 (each keeps its rows); else each rank's
    own block passes on. The network sees this rank's rows as its block, and training equals one process."""
    argv = [str(SCRIPTS / "virtual_dataset.py"), *(["--full-batch"] if full_batch else [])]
    job = run_job(argv, n=2, timeout=120)
    assert job.returncode == 0, job.stdout + job.stderr
    assert "VD-OK" in job.stdout


# -- dataset.config.set_numa_enable, QuantDtype -------------------------------------------------------------


def test_set_numa_enable_is_checked_and_kept():
    config = opforge.dataset.config
    assert config.get_numa_enable() is False
    try:
        config.set_numa_enable(True)
        assert config.get_numa_enable() is True
        with pytest.raises(TypeError, match="numa_enable"):
            config.set_numa_enable(1)
        assert config.get_numa_enable() is True
    finally:
        config.set_numa_enable(False)


def test_quant_dtype_follows_mindspore():
    from opforge.common.dtype import QuantDtype

    assert QuantDtype is opforge.QuantDtype is opforge.dtype.QuantDtype is opforge.common.QuantDtype
    assert [q.value() for q in QuantDtype] == list(range(16)) + list(range(100, 116))
    assert QuantDtype.INT8.value() == 7 and QuantDtype.UINT16.value() == 115
    assert str(QuantDtype.INT4) == "INT4" and QuantDtype["INT2"] is QuantDtype.INT2 and QuantDtype(101).name == "UINT2"


# -- ops.FusedCastAdamWeightDecay ----------------------------------------------------------------------------


def _adam_numpy(w, m, v, g, lr, beta1, beta2, eps, decay):
    m = m + (g - m) * (1 - beta1)
    v = v + (g * g - v) * (1 - beta2)
    return w - lr * (m / (np.sqrt(v) + eps) + decay * w), m, v


def test_fused_cast_adam_weight_decay_float32_weight_matches_adam_weight_decay():
    rng = _rng(5)
    w0 = rng.standard_normal((3, 4)).astype(np.float32)
    grads = [rng.standard_normal((3, 4)).astype(np.float16) for _ in range(3)]
    var, m, v = (
        Parameter(Tensor(a), name=n) for a, n in ((w0, "w"), (np.zeros_like(w0), "m"), (np.zeros_like(w0), "v"))
    )
    ref = [
        Parameter(Tensor(a), name=f"r{n}") for n, a in (("w", w0), ("m", np.zeros_like(w0)), ("v", np.zeros_like(w0)))
    ]
    fused, adam = ops.FusedCastAdamWeightDecay(), ops.AdamWeightDecay()
    w_np, m_np, v_np = w0.astype(np.float64), np.zeros((3, 4)), np.zeros((3, 4))
    for g in grads:
        out = fused(var, m, v, 0.01, 0.9, 0.999, 1e-8, 0.1, Tensor(g), Tensor(np.float32(4.0)))
        assert out[0] is var and out[1] is m and out[2] is v
        adam(*ref, 0.01, 0.9, 0.999, 1e-8, 0.1, Tensor(g.astype(np.float32) / 4.0))
        w_np, m_np, v_np = _adam_numpy(w_np, m_np, v_np, g.astype(np.float64) / 4.0, 0.01, 0.9, 0.999, 1e-8, 0.1)
    for got, want in zip((var, m, v), ref):
        np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(var.asnumpy(), w_np, rtol=1e-5, atol=1e-6)


def test_fused_cast_adam_weight_decay_float16_weight_updates_in_float32():
    """A float16 weight: the update is AdamWeightDecay's on a float32 copy, rounded back to float16 each step;
    the float32 moments keep what float16 would lose. A global norm below 1e-10 counts as 1."""
    rng = _rng(6)
    w0 = rng.standard_normal((5,)).astype(np.float16)
    grads = [rng.standard_normal((5,)).astype(np.float16) for _ in range(3)]
    var = Parameter(Tensor(w0), name="w")
    m, v = (Parameter(Tensor(np.zeros(5, np.float32)), name=n) for n in "mv")
    ref_w, ref_m, ref_v = (Parameter(Tensor(np.zeros(5, np.float32)), name=f"r{n}") for n in "wmv")
    fused, adam = ops.operations.FusedCastAdamWeightDecay(), ops.AdamWeightDecay()
    for step, g in enumerate(grads):
        norm, divisor = (Tensor(np.float32(0.0)), 1.0) if step == 0 else (2.0, 2.0)
        ref_w.set_data(Tensor(var.asnumpy().astype(np.float32)))  # the float32 copy of the weight before the step
        fused(var, m, v, Tensor(np.float32(0.05)), 0.9, 0.999, 1e-8, 0.01, Tensor(g), norm)
        adam(ref_w, ref_m, ref_v, 0.05, 0.9, 0.999, 1e-8, 0.01, Tensor(g.astype(np.float32) / divisor))
        assert var.dtype == mstype.float16
        np.testing.assert_array_equal(var.asnumpy(), ref_w.asnumpy().astype(np.float16))
        np.testing.assert_allclose(m.asnumpy(), ref_m.asnumpy(), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(v.asnumpy(), ref_v.asnumpy(), rtol=1e-6, atol=1e-7)
    assert not np.array_equal(var.asnumpy(), w0)


def test_fused_cast_adam_weight_decay_errors_follow_mindspore():
    op = ops.FusedCastAdamWeightDecay()
    with pytest.raises(TypeError, match="use_locking"):
        ops.FusedCastAdamWeightDecay(use_locking=1)
    var = Parameter(Tensor(np.zeros(3, np.float16)), name="w")
    m, v = (Parameter(Tensor(np.zeros(3, np.float32)), name=n) for n in "mv")
    g16 = Tensor(np.ones(3, np.float16))
    scalars = (0.1, 0.9, 0.999, 1e-8, 0.0)
    with pytest.raises(TypeError, match="gradient"):
        op(var, m, v, *scalars, Tensor(np.ones(3, np.float32)), 1.0)
    m16 = Parameter(Tensor(np.zeros(3, np.float16)), name="m16")
    with pytest.raises(TypeError, match="'m'"):
        op(var, m16, v, *scalars, g16, 1.0)
    with pytest.raises(ValueError, match="shape"):
        op(var, m, v, *scalars, Tensor(np.ones(4, np.float16)), 1.0)
    with pytest.raises(TypeError, match="lr"):
        op(var, m, v, Tensor(np.float16(0.1)), *scalars[1:], g16, 1.0)
    with pytest.raises(TypeError, match="var"):
        op(Parameter(Tensor(np.zeros(3, np.float64)), name="w64"), m, v, *scalars, g16, 1.0)
