"""Convolution and pooling beyond the sweep: the CPU Conv2D kernels on 1 and 2 threads (the
chunk-by-chunk and the batch-parallel paths) against PyTorch-free NumPy references, the nn layers
(Conv2d, MaxPool2d, AvgPool2d, Flatten) in a LeNet trained one step, the functional forms, and
MindSpore's attr spellings."""

from __future__ import annotations

import numpy as np
import op_db  # noqa: F401  (op_db imports op_db_conv at its end)
import pytest
from op_db_conv import _conv_filter_grad, _conv_fwd, _conv_input_grad

import opforge
from opforge import Tensor, nn, ops


@pytest.fixture
def threads():
    before = opforge.get_context("num_threads")
    yield lambda n: opforge.set_context(num_threads=n)
    opforge.set_context(num_threads=before)


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize(
    "shape,attrs",
    [
        ((9, 3, 14, 14), {"out_channel": 8, "kernel_size": 5}),  # wide columns, several chunks, small: serial
        ((16, 3, 20, 20), {"out_channel": 16, "kernel_size": 5}),  # wide columns, batch-parallel on 2 threads
        ((16, 8, 24, 24), {"out_channel": 16, "kernel_size": 3, "pad_mode": "same", "group": 2}),  # groups, parallel
        ((5, 4, 20, 18), {"out_channel": 6, "kernel_size": 3, "pad_mode": "same", "stride": 2, "group": 2}),
        ((4, 8, 30, 30), {"out_channel": 16, "kernel_size": 3, "pad_mode": "pad", "pad": 1}),  # one sample a chunk
        # Small images, few columns per thread: on 2 threads the threads split the channels
        ((8, 64, 4, 4), {"out_channel": 64, "kernel_size": 3, "pad_mode": "pad", "pad": 1}),  # 8 samples a chunk
        ((4, 256, 6, 6), {"out_channel": 32, "kernel_size": 3, "pad_mode": "pad", "pad": 1}),  # one sample a chunk
        ((8, 32, 6, 6), {"out_channel": 64, "kernel_size": 3}),  # wide columns
        ((8, 256, 4, 4), {"out_channel": 512, "kernel_size": 1, "stride": 2}),
        (
            (3, 2, 9, 9),
            {"out_channel": 4, "kernel_size": (2, 3), "pad_mode": "pad", "pad": (1, 0, 0, 0), "dilation": 2},
        ),
        # Small planes the size of the output (flat columns): LeNet's two convolutions, several chunks of
        # samples, an even kernel's uneven "same" padding with a dilation, a plane of one row
        ((32, 1, 8, 8), {"out_channel": 32, "kernel_size": 3, "pad_mode": "same"}),
        ((32, 32, 4, 4), {"out_channel": 64, "kernel_size": 3, "pad_mode": "same"}),
        ((17, 64, 8, 8), {"out_channel": 8, "kernel_size": 3, "pad_mode": "same"}),
        ((6, 5, 5, 7), {"out_channel": 7, "kernel_size": (2, 4), "pad_mode": "same", "dilation": (2, 1)}),
        ((4, 3, 1, 9), {"out_channel": 2, "kernel_size": (1, 3), "pad_mode": "pad", "pad": (0, 0, 2, 0)}),
    ],
)
def test_conv2d_and_gradients_on_each_thread_count(threads, n_threads, shape, attrs, rng):
    threads(n_threads)
    conv = ops.Conv2D(**attrs)
    dgrad, wgrad = ops.Conv2DBackpropInput(**attrs), ops.Conv2DBackpropFilter(**attrs)
    c = shape[1]
    w_shape = (attrs["out_channel"], c // attrs.get("group", 1), *conv.kernel_size)
    x = rng.standard_normal(shape)
    w = rng.standard_normal(w_shape)
    y = _conv_fwd(conv, x, w)
    dy = rng.standard_normal(y.shape)
    for dtype, tol in ((np.float64, 1e-10), (np.float32, 1e-4)):
        tx, tw, tdy = (Tensor(a.astype(dtype)) for a in (x, w, dy))
        np.testing.assert_allclose(conv(tx, tw).asnumpy(), y, rtol=tol, atol=tol)
        np.testing.assert_allclose(
            dgrad(tdy, tw, shape).asnumpy(), _conv_input_grad(conv, dy, w, shape), rtol=tol, atol=tol
        )
        np.testing.assert_allclose(
            wgrad(tdy, tx, w_shape).asnumpy(), _conv_filter_grad(conv, dy, x, w_shape), rtol=tol, atol=tol
        )


def test_lenet_trains_one_step_and_the_loss_falls(rng):
    opforge.nn.set_seed(0)
    net = nn.SequentialCell(
        nn.Conv2d(1, 6, 5, pad_mode="valid", has_bias=True),
        nn.ReLU(),
        nn.MaxPool2d(kernel_size=2, stride=2),
        nn.Conv2d(6, 16, 5, pad_mode="valid"),
        nn.ReLU(),
        nn.AvgPool2d(kernel_size=2, stride=2),
        nn.Flatten(),
        nn.Dense(16 * 4 * 4, 10),
    )
    x = Tensor(rng.standard_normal((8, 1, 28, 28)).astype(np.float32))
    y = Tensor(rng.integers(0, 10, 8).astype(np.int32))
    assert net(x).shape == (8, 10)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.SGD(net.trainable_params(), learning_rate=0.05))
    first = float(step(x, y).asnumpy())
    for _ in range(5):
        last = float(step(x, y).asnumpy())
    assert last < first


def test_conv2d_layer_matches_the_primitive_and_bias(rng):
    layer = nn.Conv2d(3, 4, 3, stride=2, has_bias=True, bias_init="ones")
    assert layer.weight.shape == (4, 3, 3, 3) and layer.bias.shape == (4,)
    x = Tensor(rng.standard_normal((2, 3, 7, 7)).astype(np.float32))
    out = layer(x).asnumpy()
    ref = ops.Conv2D(4, 3, pad_mode="same", stride=2)(x, layer.weight).asnumpy() + 1
    np.testing.assert_allclose(out, ref, rtol=1e-6)
    assert out.shape == (2, 4, 4, 4)  # "same": ceil(7 / 2)
    with pytest.raises(ValueError, match="divisible by 'group'"):
        nn.Conv2d(3, 4, 3, group=2)


def test_functional_forms(rng):
    x = Tensor(rng.standard_normal((2, 2, 6, 6)).astype(np.float32))
    w = Tensor(rng.standard_normal((3, 2, 3, 3)).astype(np.float32))
    b = Tensor(np.array([1.0, 2.0, 3.0], np.float32))
    out = ops.conv2d(x, w, b, pad_mode="pad", padding=1).asnumpy()
    ref = ops.Conv2D(3, 3, pad_mode="pad", pad=1)(x, w).asnumpy() + np.array([1, 2, 3]).reshape(1, 3, 1, 1)
    np.testing.assert_allclose(out, ref, rtol=1e-6)
    assert ops.max_pool2d(x, 2).shape == (2, 2, 3, 3)
    np.testing.assert_allclose(
        ops.avg_pool2d(x, 2).asnumpy(), x.asnumpy().reshape(2, 2, 3, 2, 3, 2).mean(axis=(3, 5)), rtol=1e-6
    )


def test_mindspore_attr_spellings():
    conv = ops.Conv2D(out_channel=4, kernel_size=3, pad_mode="PAD", pad=(1, 2, 3, 4), stride=2, dilation=(1, 1, 2, 2))
    assert conv.kernel_size == (3, 3) and conv.stride == (1, 1, 2, 2) and conv.dilation == (1, 1, 2, 2)
    assert conv.pad_mode == "pad" and conv.attrs["pad"] == (1, 2, 3, 4) and conv.attrs["groups"] == 1
    assert conv.attrs["format"] == "NCHW"
    pool = ops.MaxPool(kernel_size=2, strides=(2, 1), pad_mode="same")
    assert pool.kernel_size == (1, 1, 2, 2) and pool.strides == (1, 1, 2, 1) and pool.pad_mode == "SAME"
    x = Tensor(np.ones((1, 1, 5, 5), np.float32))
    assert pool(x).shape == (1, 1, 3, 5)
    assert ops.MaxPool(3, 2)(x).shape == (1, 1, 2, 2)  # valid: ceil((5 - 3 + 1) / 2)


def test_max_pool_gradient_goes_to_the_first_maximum():
    x = Tensor(np.array([[[[1.0, 3.0], [3.0, 0.0]]]], np.float32))
    g = opforge.grad(lambda t: ops.MaxPool(2, 2)(t).sum())(x)
    np.testing.assert_array_equal(g.asnumpy(), [[[[0.0, 1.0], [0.0, 0.0]]]])


def _max_pool_2x2_reference(x):
    """MaxPool 2x2 stride 2 (valid) by MaxPoolArgmax's rule, and which window element (2 p + q) won."""
    oh, ow = x.shape[2] // 2, x.shape[3] // 2
    win = [x[:, :, p : 2 * oh : 2, q : 2 * ow : 2] for p in (0, 1) for q in (0, 1)]
    m, k = win[0].copy(), np.zeros(win[0].shape, int)
    for e in (1, 2, 3):
        v = win[e]
        take = ((v > m) | np.isnan(v)) & ~np.isnan(m)  # larger or a NaN, unless a NaN is already there
        m, k = np.where(take, v, m), np.where(take, e, k)
    return m, k


# LeNet's planes (blocks of whole row pairs), blocks that end inside a plane, long rows (a multiple of 16
# outputs) with an odd column, odd sizes, widths no vector path takes, and (the last three) enough planes
# for two threads, one of them ending inside a plane
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize(
    "shape",
    [(32, 32, 8, 8), (32, 64, 4, 4), (1, 5, 6, 4), (3, 7, 12, 8), (2, 2, 5, 32), (1, 2, 6, 33), (2, 1, 4, 64),
     (2, 3, 5, 7), (1, 3, 6, 6), (130, 64, 8, 8), (259, 127, 4, 4), (4, 40, 64, 64)],
)  # fmt: skip
def test_max_pool_2x2_and_its_gradient_match_the_first_maximum_rule(threads, n_threads, shape, rng):
    threads(n_threads)
    pool, grad = ops.MaxPool(kernel_size=2, strides=2), ops.MaxPoolGrad(kernel_size=2, strides=2)
    base = rng.integers(-3, 3, shape).astype(np.float64)  # ties in most windows
    base.reshape(-1)[rng.choice(base.size, base.size // 10, replace=False)] = np.nan
    oh, ow = shape[2] // 2, shape[3] // 2
    dy = rng.standard_normal((*shape[:2], oh, ow))
    for dtype in (np.float32, np.float64, np.float16):
        x, d = base.astype(dtype), dy.astype(dtype)
        m, k = _max_pool_2x2_reference(x)
        out = pool(Tensor(x)).asnumpy()
        np.testing.assert_array_equal(out, m)
        want = np.zeros(shape, dtype)
        for e in range(4):
            want[:, :, e // 2 : 2 * oh : 2, e % 2 : 2 * ow : 2] = np.where(k == e, d, 0)
        np.testing.assert_array_equal(grad(Tensor(x), Tensor(out), Tensor(d)).asnumpy(), want)


def _conv_transpose_ref(x, w, stride, pads, dilation, out_hw):
    """A transposed convolution written out: each input pixel scatters its kernel-weighted copies."""
    n, cin, h, wd = x.shape
    _, cout, kh, kw = w.shape
    full = np.zeros(
        (n, cout, (h - 1) * stride + dilation * (kh - 1) + 1 + 4, (wd - 1) * stride + dilation * (kw - 1) + 1 + 4)
    )
    for i in range(h):
        for j in range(wd):
            for a in range(kh):
                for b in range(kw):
                    full[:, :, i * stride + a * dilation, j * stride + b * dilation] += x[:, :, i, j] @ w[:, :, a, b]
    return full[:, :, pads[0] : pads[0] + out_hw[0], pads[2] : pads[2] + out_hw[1]]


@pytest.mark.parametrize(
    "kw, out_hw",
    [
        ({"stride": 2, "pad_mode": "valid"}, (11, 15)),
        ({"stride": 2, "pad_mode": "pad", "padding": 1, "output_padding": 1}, (10, 14)),
        ({"stride": 1, "pad_mode": "pad", "padding": (1, 0, 2, 1), "dilation": 2, "has_bias": True}, (8, 8)),
        ({"stride": 2, "pad_mode": "same"}, (10, 14)),
    ],
    ids=["valid", "pad-output_padding", "pad-dilation-bias", "same"],
)
def test_conv2d_transpose_is_the_scatter_of_each_input_pixel(kw, out_hw):
    rng = np.random.default_rng(0)
    layer = nn.Conv2dTranspose(4, 6, 3, bias_init="normal", **kw)
    x = rng.standard_normal((2, 4, 5, 7)).astype(np.float32)
    out = layer(Tensor(x))
    assert out.shape == (2, 6, *out_hw)
    pad = kw.get("padding", 0)
    pads = (pad,) * 4 if isinstance(pad, int) else pad
    if kw["pad_mode"] == "same":  # the pads a Conv2D of "same" from out_hw to 5x7 takes: (0, 1) each way
        pads = (0, 1, 0, 1)
    want = _conv_transpose_ref(x.astype(np.float64), layer.weight.asnumpy().astype(np.float64), kw["stride"], pads,
                               kw.get("dilation", 1), out_hw)  # fmt: skip
    if kw.get("has_bias"):
        want = want + layer.bias.asnumpy().reshape(1, -1, 1, 1)
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-4, atol=1e-4)
    grads = opforge.grad(lambda t: layer(t).sum(), None, layer.trainable_params())(Tensor(x))
    assert grads[0].shape == (4, 6, 3, 3)


def test_conv2d_transpose_checks_its_arguments():
    with pytest.raises(ValueError, match="output_padding"):
        nn.Conv2dTranspose(2, 2, 3, stride=2, pad_mode="same", output_padding=1)
    with pytest.raises(ValueError, match="4-D"):
        nn.Conv2dTranspose(2, 2, 3)(Tensor(np.zeros((2, 3, 3), np.float32)))
    assert ops.Conv2DTranspose is ops.Conv2DBackpropInput
