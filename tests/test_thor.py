"""THOR, the second-order optimizer (``nn.thor``, ``nn.DenseThor`` / ``Conv2dThor`` / ``EmbeddingThor``,
``ConvertNetUtils``, ``ConvertModelUtils`` and ``ModelThor``): the statistics the layers record against NumPy
from the same inputs and output gradients, one update against a NumPy implementation of MindSpore's GPU formula,
the inverses refreshed every ``frequency`` steps, training (an MLP, a CNN, ``Model.train`` in both sink modes,
GRAPH_MODE, two data-parallel ranks), the zoo ResNet's THOR branch (official/cv/ResNet/train.py), and MindSpore's
argument errors."""

import logging
import pathlib

import numpy as np
import pytest
from test_data_parallel import needs_mpi, run_job
from zoo import resnet_train
from zoo.resnet import resnet50

import opforge
from opforge import Tensor, context, nn, ops
from opforge.dataset import GeneratorDataset
from opforge.train import Callback, CheckpointConfig, LossMonitor, Model, ModelCheckpoint
from opforge.train.loss_scale_manager import FixedLossScaleManager
from opforge.train.train_thor import ConvertModelUtils, ConvertNetUtils, ModelThor


@pytest.fixture(autouse=True)
def _seed():
    np.random.seed(0)
    opforge.set_seed(0)


def _t(x, dtype=np.float32):
    return Tensor(np.asarray(x, dtype))


def _grads_of(net, inputs, dout):
    """Run ``net`` on ``inputs`` and back-propagate ``dout`` from its output (the gradient of sum(out * dout))."""

    def loss(*args):
        return (net(*args) * _t(dout)).sum()

    return ops.grad(loss, grad_position=None, weights=net.trainable_params())(*inputs)


# -- the statistics -----------------------------------------------------------------------------------------
def test_dense_thor_records_a_and_g():
    layer = nn.DenseThor(5, 3, activation="relu")
    x, dout = np.random.randn(4, 5), np.random.randn(4, 3)
    out = layer(_t(x)).asnumpy()
    w, b = layer.weight.asnumpy(), layer.bias.asnumpy()
    np.testing.assert_allclose(out, np.maximum(x @ w.T + b, 0), rtol=1e-5, atol=1e-6)
    _grads_of(layer, (_t(x),), dout)
    np.testing.assert_allclose(layer.matrix_a.asnumpy(), x.T @ x / 4, rtol=1e-5, atol=1e-6)
    d = dout * (x @ w.T + b > 0)  # the gradient at the MatMul's output (inside the ReLU)
    np.testing.assert_allclose(layer.matrix_g.asnumpy(), d.T @ d / 4, rtol=1e-5, atol=1e-6)
    # without the flag it records nothing
    before = layer.matrix_a.asnumpy().copy()
    layer.add_flags_recursive(thor=False)
    _grads_of(layer, (_t(np.random.randn(4, 5)),), dout)
    np.testing.assert_array_equal(layer.matrix_a.asnumpy(), before)


def test_dense_thor_flattens_leading_axes():
    """An input of rank 3 (a sequence model's): its rows are every (batch, position)."""
    layer = nn.DenseThor(5, 3, has_bias=False)
    x, dout = np.random.randn(2, 4, 5), np.random.randn(2, 4, 3)
    np.testing.assert_allclose(layer(_t(x)).asnumpy(), x @ layer.weight.asnumpy().T, rtol=1e-5, atol=1e-6)
    _grads_of(layer, (_t(x),), dout)
    rows, d = x.reshape(8, 5), dout.reshape(8, 3)
    np.testing.assert_allclose(layer.matrix_a.asnumpy(), rows.T @ rows / 8, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(layer.matrix_g.asnumpy(), d.T @ d / 8, rtol=1e-5, atol=1e-6)


def _patches(x, kh, kw, stride, dilation, pads):
    """NumPy im2col: [N, C * kh * kw, L] of x padded by (top, bottom, left, right)."""
    top, bottom, left, right = pads
    x = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    n, c, h, w = x.shape
    ho = (h - dilation * (kh - 1) - 1) // stride + 1
    wo = (w - dilation * (kw - 1) - 1) // stride + 1
    cols = np.empty((n, c, kh, kw, ho, wo), x.dtype)
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * dilation, i * dilation + stride * (ho - 1) + 1, stride)
            colz = slice(j * dilation, j * dilation + stride * (wo - 1) + 1, stride)
            cols[:, :, i, j] = x[:, :, rows, colz]
    return cols.reshape(n, c * kh * kw, ho * wo)


@pytest.mark.parametrize(
    "pad_mode, padding, stride, dilation, pads",
    [("same", 0, 2, 1, (0, 1, 1, 1)), ("valid", 0, 1, 2, (0, 0, 0, 0)), ("pad", (1, 0, 2, 1), 1, 1, (1, 0, 2, 1))],
)
def test_conv2d_thor_records_a_and_g(pad_mode, padding, stride, dilation, pads):
    layer = nn.Conv2dThor(2, 3, 3, stride=stride, pad_mode=pad_mode, padding=padding, dilation=dilation, has_bias=True,
                          bias_init="normal")  # fmt: skip
    x = np.random.randn(2, 2, 6, 7).astype(np.float32)
    reference = nn.Conv2d(2, 3, 3, stride=stride, pad_mode=pad_mode, padding=padding, dilation=dilation,
                          has_bias=True, weight_init=Tensor(layer.weight.asnumpy()),
                          bias_init=Tensor(layer.bias.asnumpy()))  # fmt: skip
    expected = reference(_t(x)).asnumpy()
    np.testing.assert_allclose(layer(_t(x)).asnumpy(), expected, rtol=1e-5, atol=1e-5)
    dout = np.random.randn(*expected.shape)
    _grads_of(layer, (_t(x),), dout)
    cols = _patches(x, 3, 3, stride, dilation, pads).mean(0)  # averaged over the batch, as MindSpore's GPU
    length = cols.shape[1]
    assert length == expected.shape[2] * expected.shape[3]
    np.testing.assert_allclose(layer.matrix_a_cov.asnumpy(), cols @ cols.T / length, rtol=1e-4, atol=1e-5)
    d = dout.mean(0).reshape(3, -1)
    np.testing.assert_allclose(layer.matrix_g_cov.asnumpy(), d @ d.T / length, rtol=1e-4, atol=1e-6)
    np.testing.assert_array_equal(layer.a_normalizer.asnumpy(), [length])
    np.testing.assert_array_equal(layer.g_normalizer.asnumpy(), [length])


def test_embedding_thor_records_a_and_g():
    layer = nn.EmbeddingThor(7, 4)
    ids = np.array([[1, 3, 3], [6, 1, 1]], np.int32)
    out = layer(Tensor(ids)).asnumpy()
    np.testing.assert_array_equal(out, layer.embedding_table.asnumpy()[ids])
    dout = np.random.randn(2, 3, 4)
    _grads_of(layer, (Tensor(ids),), dout)
    np.testing.assert_array_equal(layer.matrix_a.asnumpy(), np.bincount(ids.ravel(), minlength=7))
    d = dout.reshape(-1, 4)
    np.testing.assert_allclose(layer.matrix_g.asnumpy(), d.T @ d / 6, rtol=1e-5, atol=1e-6)


def test_convert_to_thor_net_keeps_the_parameters():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(10, 4)
            self.body = nn.SequentialCell(nn.Conv2d(1, 2, 3, has_bias=True), nn.BatchNorm2d(2))
            self.depthwise = nn.Conv2d(2, 2, 3, group=2)
            self.head = nn.Dense(4, 3, activation="tanh")
            self.frozen = nn.Dense(3, 3)
            self.frozen.weight.requires_grad = False

    net = Net()
    before = {p.name: p for p in net.get_parameters()}
    ConvertNetUtils().convert_to_thor_net(net)
    assert isinstance(net.embed, nn.EmbeddingThor) and isinstance(net.body[0], nn.Conv2dThor)
    assert isinstance(net.head, nn.DenseThor) and isinstance(net.head.activation, nn.Tanh)
    assert type(net.depthwise) is nn.Conv2d and type(net.frozen) is nn.Dense  # grouped; not trained
    after = {p.name: p for p in net.get_parameters()}
    for name, p in before.items():
        assert after[name] is p, name
    statistics = {"head.matrix_a", "head.matrix_g", "body.0.matrix_a_cov", "body.0.a_normalizer", "embed.matrix_g"}
    assert statistics <= set(after)
    assert not any(after[n].requires_grad for n in after if "matrix" in n or "normalizer" in n)


# -- the update ---------------------------------------------------------------------------------------------
def _spd(n, rng):
    m = rng.standard_normal((n, n)).astype(np.float32)
    return (m @ m.T / n + 0.1 * np.eye(n)).astype(np.float32)


def _block_inverse(m, size=128):
    """The inverses of the diagonal blocks of ``m`` (of ``size`` rows), as one block-diagonal matrix."""
    out = np.zeros_like(m, dtype=np.float64)
    for start in range(0, m.shape[0], size):
        block = slice(start, min(start + size, m.shape[0]))
        out[block, block] = np.linalg.inv(m[block, block].astype(np.float64))
    return out


def test_one_update_matches_numpy():
    """A Conv2d (A of 18 rows), a LayerNorm, a Dense of 150 -> 130 (two blocks each, the last padded), an
    Embedding and biases: each gradient preconditioned by its rule, weight decay, loss scale and momentum;
    then a step without the flag reuses the inverses."""
    rng = np.random.default_rng(1)
    cells = nn.Conv2d(2, 3, 3, has_bias=True), nn.LayerNorm((5,)), nn.Dense(150, 130), nn.Embedding(9, 6)
    net = nn.SequentialCell(*cells)
    lr, lam, mu, wd, scale, batch = 0.05, 0.02, 0.9, 1e-3, 8.0, 4
    opt = nn.thor(net, _t([lr, lr / 2]), _t([lam, lam / 4]), mu, weight_decay=wd, loss_scale=scale, batch_size=batch)
    conv, norm, dense, embed = net[0], net[1], net[2], net[3]
    conv.matrix_a_cov.set_data(_t(_spd(18, rng)))
    conv.matrix_g_cov.set_data(_t(_spd(3, rng)))
    conv.a_normalizer.set_data(_t([12.0]))
    conv.g_normalizer.set_data(_t([10.0]))
    dense.matrix_a.set_data(_t(_spd(150, rng)))
    dense.matrix_g.set_data(_t(_spd(130, rng)))
    embed.matrix_a.set_data(_t([3, 0, 1, 5, 0, 0, 2, 1, 0]))
    embed.matrix_g.set_data(_t(_spd(6, rng)))

    params = list(opt.parameters)
    weights = [p.asnumpy().astype(np.float64) for p in params]
    grads = [rng.standard_normal(p.shape).astype(np.float32) for p in params]

    def preconditioned(lam, inverses):
        out = []
        for p, g in zip(params, grads):
            g = g.astype(np.float64) / scale
            if p is conv.weight:
                ainv, ginv = inverses["conv"]
                g = (ginv @ g.reshape(3, -1) @ ainv).reshape(g.shape)
            elif p is dense.weight:
                ainv, ginv = inverses["dense"]
                g = ginv @ g @ ainv
            elif p is embed.embedding_table:
                ainv, ginv = inverses["embed"]
                g = ainv[:, None] * g @ ginv
            elif p is norm.gamma or p is norm.beta:
                g = g / (g * g / batch + np.sqrt(lam))
            out.append(g + wd * p.asnumpy())
        return out

    a, g2 = conv.matrix_a_cov.asnumpy(), conv.matrix_g_cov.asnumpy() * batch**2 / scale**2
    inverses = {
        "conv": (_block_inverse(a + np.sqrt(lam / 12) * np.eye(18)) * np.sqrt(1 / 12),
                 _block_inverse(g2 + np.sqrt(lam / 10) * np.eye(3)) * np.sqrt(1 / 12)),
        "dense": (_block_inverse(dense.matrix_a.asnumpy() + np.sqrt(lam) * np.eye(150)),
                  _block_inverse(dense.matrix_g.asnumpy() * batch**2 / scale**2 + np.sqrt(lam) * np.eye(130))),
        "embed": (1 / (embed.matrix_a.asnumpy() / batch + np.sqrt(lam)),
                  np.linalg.inv(embed.matrix_g.asnumpy() * batch**2 / scale**2 + np.sqrt(lam) * np.eye(6))),
    }  # fmt: skip
    step = preconditioned(lam, inverses)
    opt(tuple(Tensor(g) for g in grads))
    moments = step
    for p, w, v in zip(params, weights, moments):
        np.testing.assert_allclose(p.asnumpy(), w - lr * v, rtol=2e-4, atol=2e-6, err_msg=p.name)
    # the stored inverses: the dense weight's A as two 128-row blocks (the second padded with the identity)
    stored = opt.matrix_a[1].asnumpy()
    np.testing.assert_allclose(stored[1, :22, :22], inverses["dense"][0][128:, 128:], rtol=1e-3, atol=1e-5)
    np.testing.assert_allclose(stored[1, 22:, 22:], np.eye(106), atol=1e-6)

    # a step without the flag: new statistics are ignored, the inverses reused, the second damping read
    dense.matrix_a.set_data(_t(_spd(150, rng)))
    kept = [m.asnumpy().copy() for m in (*opt.matrix_a, *opt.matrix_g)]
    opt.add_flags_recursive(thor=False)
    weights = [p.asnumpy().astype(np.float64) for p in params]
    opt(tuple(Tensor(g) for g in grads))
    for m, k in zip((*opt.matrix_a, *opt.matrix_g), kept):
        np.testing.assert_array_equal(m.asnumpy(), k)
    step = preconditioned(lam / 4, inverses)
    moments = [mu * m + s for m, s in zip(moments, step)]
    for p, w, v in zip(params, weights, moments):
        np.testing.assert_allclose(p.asnumpy(), w - lr / 2 * v, rtol=2e-4, atol=2e-6, err_msg=p.name)
    np.testing.assert_array_equal(opt.cov_step.asnumpy(), [2])


# -- training -----------------------------------------------------------------------------------------------
def _images(n=32, shape=(1, 8, 8), classes=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, *shape)).astype(np.float32)
    w = rng.standard_normal((int(np.prod(shape)), classes)).astype(np.float32)
    y = np.argmax(x.reshape(n, -1) @ w, axis=1).astype(np.int32)  # a learnable labelling
    return x, y


def _train_steps(net, x, y, steps, frequency=4, **kwargs):
    lr = _t(np.full(steps, 0.2))
    opt = nn.thor(net, lr, _t(np.full(steps, 0.05)), 0.9, batch_size=len(y), frequency=frequency, **kwargs)
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), opt)
    step.set_train()
    return [float(step(_t(x), Tensor(y)).asnumpy()) for _ in range(steps)]


def test_mlp_trains_with_thor():
    x, y = _images(16, (12,))
    net = nn.SequentialCell(nn.Dense(12, 16, activation="relu"), nn.Dense(16, 3))
    losses = _train_steps(net, x, y, 12, weight_decay=1e-4, enable_clip_grad=True)
    assert np.all(np.isfinite(losses)) and losses[-1] < 0.5 * losses[0], losses


def test_cnn_trains_with_thor():
    x, y = _images(16)
    net = nn.SequentialCell(nn.Conv2d(1, 4, 3, has_bias=True), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2, 2),
                            nn.Flatten(), nn.Dense(64, 3))  # fmt: skip
    losses = _train_steps(net, x, y, 10, use_nesterov=True)
    assert np.all(np.isfinite(losses)) and losses[-1] < 0.5 * losses[0], losses


class _Recorder(Callback):
    """A LossMonitor-style callback: each step's loss, the layers' flag and the first layer's stored G inverse."""

    def __init__(self, opt, layer):
        super().__init__()
        self.opt, self.layer = opt, layer
        self.losses, self.flags, self.inverses = [], [], []

    def on_train_step_end(self, run_context):
        cb = run_context.original_args()
        loss = float(np.mean(cb.net_outputs.asnumpy()))
        assert np.isfinite(loss), f"step {cb.cur_step_num}: the loss is {loss}"
        self.losses.append(loss)
        self.flags.append(self.layer.thor)
        self.inverses.append(self.opt.matrix_g[0].asnumpy().copy())


def _model(frequency=3, amp_level="O0", scale=None):
    x, y = _images(24)
    dataset = GeneratorDataset(list(zip(x, y)), column_names=["image", "label"], shuffle=False).batch(8)
    net = nn.SequentialCell(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Dense(256, 3))
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    manager = FixedLossScaleManager(scale, drop_overflow_update=False) if scale else None
    model = Model(net, loss_fn=loss, optimizer=nn.Momentum(net.trainable_params(), 0.01, 0.9), metrics={"acc"})
    opt = nn.thor(net, _t(np.full(9, 0.05)), _t(np.full(9, 0.05)), 0.9, 1e-4, scale or 1.0, 8, frequency=frequency)
    model = ConvertModelUtils().convert_to_thor_model(model=model, network=net, loss_fn=loss, optimizer=opt,
                                                      loss_scale_manager=manager, metrics={"acc"},
                                                      amp_level=amp_level)  # fmt: skip
    return model, opt, net, dataset


@pytest.mark.parametrize("sink", [False, True])
def test_convert_to_thor_model_trains(sink):
    model, opt, net, dataset = _model(frequency=3, amp_level="O2", scale=64.0)
    assert isinstance(model, ModelThor)
    recorder = _Recorder(opt, net[0])
    model.train(3, dataset, callbacks=[recorder, LossMonitor(1)], dataset_sink_mode=sink, sink_size=3)
    assert len(recorder.losses) == 9 and recorder.losses[-1] < recorder.losses[0], recorder.losses
    # a THOR step (statistics, new inverses) at steps 0, 3, 6; the others reuse the inverses
    assert recorder.flags == [True, False, False] * 3
    changed = [not np.array_equal(a, b) for a, b in zip(recorder.inverses[1:], recorder.inverses[:-1])]
    assert changed == [False, False, True, False, False, True, False, False]
    assert 0.0 <= model.eval(dataset)["acc"] <= 1.0


def test_thor_model_in_graph_mode_matches_pynative():
    """GRAPH_MODE traces a THOR step and a reusing step apart and replays each: the same losses as eager."""
    results = []
    for mode in (context.PYNATIVE_MODE, context.GRAPH_MODE):
        opforge.set_seed(0)
        context.set_context(mode=mode)
        try:
            model, opt, net, dataset = _model(frequency=2)
            recorder = _Recorder(opt, net[0])
            model.train(2, dataset, callbacks=[recorder])
        finally:
            context.set_context(mode=context.PYNATIVE_MODE)
        results.append(recorder.losses)
    np.testing.assert_allclose(results[1], results[0], rtol=1e-4)
    assert results[0][-1] < results[0][0]


def test_model_thor_from_a_train_one_step_cell():
    """Bert_thor's way: Model(TrainOneStepCell), converted with the step cell as the network."""
    x, y = _images(16, (12,))
    net = nn.SequentialCell(nn.Dense(12, 16, activation="relu"), nn.Dense(16, 3))
    opt = nn.thor(net, _t(np.full(6, 0.05)), _t(np.full(6, 0.05)), 0.9, batch_size=8, frequency=2)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")),
                               opt)  # fmt: skip
    model = ConvertModelUtils().convert_to_thor_model(Model(step), network=step, optimizer=opt)
    recorder = _Recorder(opt, net[0])
    dataset = GeneratorDataset(list(zip(x, y)), column_names=["x", "y"], shuffle=False).batch(8)
    model.train(3, dataset, callbacks=[recorder])
    assert recorder.flags == [True, False] * 3 and recorder.losses[-1] < recorder.losses[0]


@pytest.mark.parametrize("sink", [True, False])
def test_resnet_train_script_thor_branch(sink, tmp_path):
    """official/cv/ResNet/train.py with optimizer "Thor" (config/resnet50_imagenet2012_GPU_Thor_config.yaml,
    shrunk): get_thor_lr / get_thor_damping, nn.thor with split_indices [26, 53] over ResNet-50's 54 THOR layers,
    convert_to_thor_model with a FixedLossScaleManager and amp O3, trained with LossCallBack and ResumeCallback,
    in sink mode (the script's choice on the GPU) and without (on the CPU)."""
    x, y = _images(16, (3, 32, 32), classes=4)
    dataset = GeneratorDataset(list(zip(x, y)), column_names=["image", "label"], shuffle=False).batch(8)
    step_size = dataset.get_dataset_size()
    net = resnet50(class_num=4, width=4)
    lr = Tensor(resnet_train.get_thor_lr(0, 0.05672, 4.9687, 50, step_size, decay_epochs=39))
    damping = resnet_train.get_thor_damping(step_size * 0, 0.02345, 0.5467, 70, step_size)
    loss = resnet_train.CrossEntropySmooth(sparse=True, reduction="mean", smooth_factor=0.1, num_classes=4)
    loss_scale = FixedLossScaleManager(128, drop_overflow_update=False)
    model = Model(net, loss_fn=loss, optimizer=nn.Momentum(net.trainable_params(), lr, 0.9, loss_scale=128),
                  loss_scale_manager=loss_scale, metrics={"acc"}, amp_level="O3")  # fmt: skip
    opt = nn.thor(net, lr, Tensor(damping), 0.9, 5e-4, 128, 8, split_indices=[26, 53], frequency=2)
    assert len(opt.matrix_a) == 54
    model = ConvertModelUtils().convert_to_thor_model(model=model, network=net, loss_fn=loss, optimizer=opt,
                                                      loss_scale_manager=loss_scale, metrics={"acc"},
                                                      amp_level="O3")  # fmt: skip
    loss_cb = resnet_train.LossCallBack(2, logging.getLogger("resnet"), lr.asnumpy(), per_print_time=1)
    config_ck = CheckpointConfig(save_checkpoint_steps=step_size, keep_checkpoint_max=1,
                                 append_info=[{"epoch_num": 0, "step_num": 0}])  # fmt: skip
    ckpt_cb = ModelCheckpoint(prefix="resnet50", directory=str(tmp_path), config=config_ck)
    recorder = _Recorder(opt, net.end_point)
    model.train(2, dataset, callbacks=[loss_cb, resnet_train.ResumeCallback(0), ckpt_cb, recorder],
                sink_size=step_size, dataset_sink_mode=sink)  # fmt: skip
    assert loss_cb.global_steps == 2 * step_size and len(loss_cb.losses) == (0 if sink else 2 * step_size)
    assert recorder.flags == [True, False] * step_size and np.all(np.isfinite(recorder.losses)), recorder.losses
    # the script's resume: the checkpoint holds the THOR state too (the inverses, the damping's step)
    resume = opforge.load_checkpoint(str(tmp_path / f"resnet50-2_{step_size}.ckpt"))
    np.testing.assert_array_equal(resume["matrix_a_inv_53"].asnumpy(), opt.matrix_a[53].asnumpy())
    assert int(resume["cov_step"].asnumpy()[0]) == 2 * step_size


@needs_mpi
def test_data_parallel_thor_keeps_the_ranks_equal():
    """Each rank's statistics are its own: the inverses, all-reduced as MindSpore's, keep the ranks' weights equal."""
    job = run_job([str(pathlib.Path(__file__).parent / "dp_scripts" / "thor_train.py")], n=2, timeout=120)
    assert job.returncode == 0 and job.stdout.count("THOR-DP-OK") == 2, job.stdout + job.stderr


# -- errors -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, error, name",
    [
        ({"learning_rate": 0.1}, TypeError, "learning_rate"),
        ({"damping": 0.01}, TypeError, "damping"),
        ({"momentum": 1}, TypeError, "momentum"),
        ({"momentum": -0.5}, ValueError, "momentum"),
        ({"frequency": 1}, ValueError, "frequency"),
        ({"frequency": 2.0}, TypeError, "frequency"),
        ({"weight_decay": -1.0}, ValueError, "weight_decay"),
        ({"loss_scale": 0.0}, ValueError, "loss_scale"),
        ({"use_nesterov": 1}, TypeError, "use_nesterov"),
        ({"batch_size": 0}, ValueError, "batch_size"),
        ({"enable_clip_grad": "yes"}, TypeError, "enable_clip_grad"),
        ({"split_indices": 26}, TypeError, "split_indices"),
    ],
)
def test_thor_argument_errors(kwargs, error, name):
    args = {"learning_rate": _t([0.1]), "damping": _t([0.01]), "momentum": 0.9, **kwargs}
    with pytest.raises(error, match=name):
        nn.thor(nn.Dense(3, 2), **args)


def test_layer_and_model_errors():
    with pytest.raises(ValueError, match="in_channels"):
        nn.DenseThor(0, 3)
    with pytest.raises(TypeError, match="has_bias"):
        nn.DenseThor(2, 3, has_bias=1)
    with pytest.raises(ValueError, match="group"):
        nn.Conv2dThor(4, 4, 3, group=2)
    with pytest.raises(TypeError, match="vocab_size"):
        nn.EmbeddingThor(7.0, 3)
    with pytest.raises(TypeError, match="net"):
        ConvertNetUtils().convert_to_thor_net("net")
    net = nn.Dense(3, 2)
    momentum = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    model = Model(net, nn.MSELoss(), momentum)
    assert ConvertModelUtils.convert_to_thor_model(model, net, nn.MSELoss(), momentum) is model
    with pytest.raises(TypeError, match="optimizer"):
        ModelThor(net, nn.MSELoss(), momentum)
    model, *_ = _model()
    with pytest.raises(ValueError, match="second-order"):
        model.fit(1, _model()[3], valid_dataset=_model()[3], dataset_sink_mode=True)
