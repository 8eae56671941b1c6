"""nn.LSTM, nn.GRU, nn.RNN and their one-step cells against a NumPy recurrence (stacked layers, both
directions, batch_first, initial states, seq_length), their gradients against finite differences, and a
small recurrent text classifier that learns."""

import numpy as np
import op_db  # noqa: F401  (op_db imports op_db_nn at its end)
import pytest
from op_db_nn import gru_forward_ref, lstm_forward_ref, rnn_forward_ref

import opforge
from opforge import Parameter, Tensor, nn, ops
from opforge import dtype as mstype

MODES = {  # name -> (factory, kwargs, number of states)
    "LSTM": (nn.LSTM, {}, 2),
    "GRU": (nn.GRU, {}, 1),
    "RNN_TANH": (nn.RNN, {}, 1),
    "RNN_RELU": (nn.RNN, {"nonlinearity": "relu"}, 1),
}


def _layer_ref(mode, x, states, w_ih, w_hh, b_ih, b_hh, reverse):
    """One layer and direction in NumPy: (y, final states)."""
    if mode == "LSTM":
        y, h, c, _, _ = lstm_forward_ref(x, states[0], states[1], w_ih, w_hh, b_ih + b_hh, reverse)
        return y, (h, c)
    if mode == "GRU":
        y, h, _ = gru_forward_ref(x, states[0], w_ih, w_hh, b_ih, b_hh, reverse)
        return y, (h,)
    act = "relu" if mode == "RNN_RELU" else "tanh"
    y, h = rnn_forward_ref(x, states[0], w_ih, w_hh, b_ih + b_hh, reverse, act)
    return y, (h,)


def net_ref(net, mode, x, states0, lengths=None):
    """The stacked net in NumPy (time-major x); samples shorter than the sequence run on their valid steps."""
    params = {name.split(".")[-1]: p.asnumpy().astype(np.float64) for name, p in net.parameters_and_names()}
    seq, batch = x.shape[:2]
    lengths = np.full(batch, seq) if lengths is None else np.asarray(lengths)
    dirs = net.num_directions
    finals = [np.zeros((net.num_layers * dirs, batch, net.hidden_size)) for _ in states0]
    layer_in = x.astype(np.float64)
    for layer in range(net.num_layers):
        outs = []
        for d, suffix in enumerate(("", "_reverse")[:dirs]):
            k = layer * dirs + d
            names = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
            w_ih, w_hh, b_ih, b_hh = (params.get(f"{n}_l{layer}{suffix}") for n in names)
            if b_ih is None:
                b_ih = b_hh = np.zeros(w_ih.shape[0])
            y = np.zeros((seq, batch, net.hidden_size))
            for b in range(batch):
                n = lengths[b]
                yb, last = _layer_ref(mode, layer_in[:n, b : b + 1], tuple(s[k, b : b + 1] for s in states0),
                                      w_ih, w_hh, b_ih, b_hh, d == 1)  # fmt: skip
                y[:n, b] = yb[:, 0]
                for f, s in zip(finals, last):
                    f[k, b] = s[0]
            outs.append(y)
        layer_in = np.concatenate(outs, axis=-1)
    return layer_in, finals


def _make(mode, *args, **kwargs):
    factory, extra, _ = MODES[mode]
    return factory(*args, **kwargs, **extra)


def _split(out, n_states):
    output, states = out
    return output.asnumpy(), ([s.asnumpy() for s in states] if n_states == 2 else [states.asnumpy()])


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("batch_first", [False, True])
def test_stacked_bidirectional_matches_numpy(mode, batch_first, rng):
    n_states = MODES[mode][2]
    net = _make(mode, 3, 5, num_layers=2, batch_first=batch_first, bidirectional=True, dtype=mstype.float64)
    seq, batch = 6, 3
    x = rng.uniform(-1, 1, (seq, batch, 3))
    states0 = [rng.uniform(-1, 1, (4, batch, 5)) for _ in range(n_states)]
    hx = tuple(Tensor(s) for s in states0) if n_states == 2 else Tensor(states0[0])
    x_in = np.transpose(x, (1, 0, 2)) if batch_first else x
    output, finals = _split(net(Tensor(x_in), hx), n_states)
    want, want_finals = net_ref(net, mode, x, states0)
    if batch_first:
        want = np.transpose(want, (1, 0, 2))
    assert output.shape == want.shape == ((batch, seq, 10) if batch_first else (seq, batch, 10))
    np.testing.assert_allclose(output, want, rtol=1e-10, atol=1e-12)
    for got, exp in zip(finals, want_finals):
        np.testing.assert_allclose(got, exp, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", list(MODES))
def test_seq_length_masks_the_padded_steps(mode, rng):
    n_states = MODES[mode][2]
    net = _make(mode, 2, 4, num_layers=2, bidirectional=True)
    x = rng.uniform(-1, 1, (5, 3, 2)).astype(np.float32)
    lengths = np.array([5, 2, 3], np.int32)
    output, finals = _split(net(Tensor(x), seq_length=Tensor(lengths)), n_states)
    zeros = [np.zeros((4, 3, 4))] * n_states
    want, want_finals = net_ref(net, mode, x, zeros, lengths)
    np.testing.assert_allclose(output, want, rtol=1e-5, atol=1e-6)
    assert not output[2:, 1].any() and not output[3:, 2].any()  # zeros past each sample's length
    for got, exp in zip(finals, want_finals):
        np.testing.assert_allclose(got, exp, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", list(MODES))
def test_default_states_no_bias_float32(mode, rng):
    n_states = MODES[mode][2]
    net = _make(mode, 4, 3, has_bias=False)
    assert sorted(n for n, _ in net.parameters_and_names()) == ["weight_hh_l0", "weight_ih_l0"]
    x = rng.uniform(-1, 1, (4, 2, 4)).astype(np.float32)
    output, finals = _split(net(Tensor(x)), n_states)
    want, want_finals = net_ref(net, mode, x, [np.zeros((1, 2, 3))] * n_states)
    assert output.dtype == np.float32
    np.testing.assert_allclose(output, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(finals[0], want_finals[0], rtol=1e-5, atol=1e-6)


def test_parameter_names_and_shapes_follow_mindspore():
    gates = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1}
    for mode, g in gates.items():
        net = _make(mode, 3, 5, num_layers=2, bidirectional=True)
        shapes = {n: tuple(p.shape) for n, p in net.parameters_and_names()}
        assert shapes["weight_ih_l0"] == (g * 5, 3)
        assert shapes["weight_ih_l1_reverse"] == (g * 5, 10)
        assert shapes["weight_hh_l1"] == (g * 5, 5)
        assert shapes["bias_ih_l0_reverse"] == shapes["bias_hh_l1"] == (g * 5,)
        assert len(shapes) == 16


@pytest.mark.parametrize("mode", ["GRU", "RNN_TANH", "RNN_RELU"])
def test_cells_match_one_step(mode, rng):
    cell = {"GRU": nn.GRUCell(3, 4), "RNN_TANH": nn.RNNCell(3, 4), "RNN_RELU": nn.RNNCell(3, 4, nonlinearity="relu")}[
        mode
    ]
    x, h = rng.uniform(-1, 1, (2, 3)).astype(np.float32), rng.uniform(-1, 1, (2, 4)).astype(np.float32)
    hy = cell(Tensor(x), Tensor(h)).asnumpy()
    p = {n: q.asnumpy().astype(np.float64) for n, q in cell.parameters_and_names()}
    _, (want,) = _layer_ref(mode, x[None], (h,), p["weight_ih"], p["weight_hh"], p["bias_ih"], p["bias_hh"], False)
    np.testing.assert_allclose(hy, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", list(MODES))
def test_gradients_match_finite_differences(mode, rng):
    net = _make(mode, 2, 3, num_layers=2, bidirectional=True, dtype=mstype.float64)
    x = rng.uniform(-1, 1, (4, 2, 2))
    weights = [p for _, p in net.parameters_and_names()]
    probe = rng.uniform(-1, 1, (4, 2, 6))

    def loss(inp):
        return (net(inp)[0] * Tensor(probe)).sum()

    dx, dws = opforge.grad(loss, 0, weights)(Tensor(x))
    eps = 1e-6

    def numeric(perturb):
        return (perturb(eps) - perturb(-eps)) / (2 * eps)

    for idx in [(0, 0, 0), (3, 1, 1), (2, 0, 1)]:

        def at(e, idx=idx):
            xp = x.copy()
            xp[idx] += e
            return float(loss(Tensor(xp)).asnumpy())

        np.testing.assert_allclose(dx.asnumpy()[idx], numeric(at), rtol=1e-5, atol=1e-7)
    for w, dw in zip(weights[::3], dws[::3]):
        base = w.asnumpy().copy()

        def at_w(e, w=w, base=base):
            v = base.copy()
            v.flat[0] += e
            w.set_data(Tensor(v))
            out = float(loss(Tensor(x)).asnumpy())
            w.set_data(Tensor(base))
            return out

        np.testing.assert_allclose(dw.asnumpy().flat[0], numeric(at_w), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("mode", list(MODES))
def test_weight_gradients_without_the_input_gradient(mode, rng):
    """With x needing no gradient the first layer's grad skips dx (compute_dx=False): the weights'
    gradients are those computed along with dx."""
    net = _make(mode, 3, 5, num_layers=2, bidirectional=True, dtype=mstype.float64)
    x = Tensor(rng.uniform(-1, 1, (6, 2, 3)))
    weights = net.trainable_params()

    def loss(inp):
        return net(inp)[0].sum()

    _, with_dx = opforge.grad(loss, 0, weights)(x)
    without_dx = opforge.grad(loss, None, weights)(x)
    for a, b in zip(with_dx, without_dx):
        np.testing.assert_allclose(b.asnumpy(), a.asnumpy(), rtol=1e-12, atol=1e-12)


def test_dropout_between_layers_only_in_training(rng):
    net = nn.GRU(3, 8, num_layers=2, dropout=0.5)
    x = Tensor(rng.uniform(-1, 1, (5, 2, 3)).astype(np.float32))
    evaluated = net(x)[0].asnumpy()
    want, _ = net_ref(net, "GRU", x.asnumpy(), [np.zeros((2, 2, 8))])
    np.testing.assert_allclose(evaluated, want, rtol=1e-5, atol=1e-6)
    net.set_train(True)
    assert not np.allclose(net(x)[0].asnumpy(), evaluated)


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="'nonlinearity' must be 'tanh' or 'relu'"):
        nn.RNN(2, 3, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="For 'GRU', the 'hidden_size' must be an int >= 1"):
        nn.GRU(2, 0)
    with pytest.raises(ValueError, match="For 'GRU', the 'dropout'"):
        nn.GRU(2, 3, dropout=1.5)
    gru = nn.GRU(2, 3, num_layers=2)
    x = Tensor(np.zeros((4, 1, 2), np.float32))
    with pytest.raises(ValueError, match=r"For 'GRU', the 'h0' must have shape \[2, 1, 3\]"):
        gru(x, Tensor(np.zeros((1, 1, 3), np.float32)))
    with pytest.raises(ValueError, match="For 'RNN', the 'seq_length'"):
        nn.RNN(2, 3)(x, seq_length=Tensor(np.array([9], np.int32)))
    with pytest.raises(ValueError, match="For 'LSTM', the 'x' must be 3-D"):
        nn.LSTM(2, 3)(Tensor(np.zeros((4, 2), np.float32)))


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_recurrent_text_classifier_learns(kind, rng):
    """Token ids -> a Gather on an embedding Parameter -> a bidirectional 2-layer recurrent net -> the last
    step -> Dense; the class is whether token 1 occurs in the sequence."""
    vocab, embed, hidden, seq, batch = 12, 8, 16, 7, 16

    class Classifier(nn.Cell):
        def __init__(self):
            super().__init__()
            table = rng.normal(0, 0.5, (vocab, embed)).astype(np.float32)
            self.table = Parameter(Tensor(table), "table")
            self.gather = ops.Gather()
            recurrent = nn.LSTM if kind == "LSTM" else nn.GRU
            self.encoder = recurrent(embed, hidden, num_layers=2, batch_first=True, bidirectional=True)
            self.dense = nn.Dense(2 * hidden, 2)

        def construct(self, ids):
            output, _ = self.encoder(self.gather(self.table, ids, 0))
            return self.dense(output[:, -1])

    ids = rng.integers(2, vocab, (batch, seq)).astype(np.int32)
    labels = (rng.uniform(size=batch) < 0.5).astype(np.int32)
    ids[labels == 1, rng.integers(0, seq)] = 1
    net = Classifier()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.Adam(net.trainable_params(), learning_rate=0.03))
    step.set_train(True)
    losses = [float(step(Tensor(ids), Tensor(labels)).asnumpy()) for _ in range(12)]
    assert losses[-1] < 0.5 * losses[0], losses
