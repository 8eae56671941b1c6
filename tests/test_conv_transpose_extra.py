"""ops.Conv3DTranspose, nn.Conv1dTranspose and nn.Conv3dTranspose (opforge/ops/conv_transpose.py,
opforge/nn/layers_conv_transpose.py) against a scatter-by-scatter NumPy transposed convolution, MindSpore's output
sizes, the adjoint of ops.conv3d, gradients against central differences, jit against eager, and bad inputs."""

import numpy as np
import pytest

import opforge
from opforge import Tensor, nn, ops
from opforge import dtype as ms
from opforge.testing import numeric_grad


def _rng(seed=0):
    return np.random.default_rng(seed)


def _conv_transpose_ref(x, w, stride, dilation, group, heads, outs):
    """x [N, C_in, *L], w [C_in, C_out / group, *k]: each input element spread through the kernel over the
    full output, then ``heads`` cut from the start and the end cut or zero-extended to ``outs``."""
    n, cin = x.shape[:2]
    k = w.shape[2:]
    cout_g, cin_g = w.shape[1], cin // group
    full = [(size - 1) * s + d * (kk - 1) + 1 for size, s, d, kk in zip(x.shape[2:], stride, dilation, k)]
    y = np.zeros((n, cout_g * group, *full))
    for ci in range(cin):
        g = ci // cin_g
        for t in np.ndindex(*x.shape[2:]):
            for a in np.ndindex(*k):
                pos = tuple(ti * s + ai * d for ti, ai, s, d in zip(t, a, stride, dilation))
                y[(slice(None), slice(g * cout_g, (g + 1) * cout_g)) + pos] += (
                    x[(slice(None), ci) + t][:, None] * w[(ci, slice(None)) + a]
                )
    out = np.zeros((n, y.shape[1], *outs))
    src = y[(slice(None), slice(None)) + tuple(slice(h, None) for h in heads)]
    keep = tuple(slice(0, min(o, s)) for o, s in zip(outs, src.shape[2:]))
    out[(slice(None), slice(None)) + keep] = src[(slice(None), slice(None)) + keep]
    return out


def _extent(size, k, s, d, mode, before=0, after=0, output_padding=0):
    """(head, out) by MindSpore's transposed-convolution output sizes."""
    f = d * (k - 1) + 1
    if mode == "same":
        return max(0, f - s) // 2, size * s
    if mode == "valid":
        return 0, size * s + max(f - s, 0)
    return before, (size - 1) * s + f - before - after + output_padding


CONFIGS = [
    dict(kernel=(2, 3, 2), pad_mode="valid"),
    dict(kernel=(3, 3, 3), pad_mode="same", stride=2),
    dict(kernel=(2, 3, 2), pad_mode="pad", pad=(1, 0, 1, 2, 0, 1), stride=(2, 1, 3), dilation=(1, 2, 1),
         output_padding=(1, 1, 2)),
    dict(kernel=(2, 2, 2), pad_mode="valid", stride=3, group=2),
    dict(kernel=(1, 3, 1), pad_mode="same", stride=(1, 2, 2), dilation=(1, 1, 2)),
]  # fmt: skip


def _op_and_ref(cfg, rng, dtype=np.float64, batch=2):
    cfg = dict(cfg)
    kernel, group = cfg.pop("kernel"), cfg.get("group", 1)
    op = ops.Conv3DTranspose(4, 6, kernel, **cfg)
    x = rng.standard_normal((batch, 4, 3, 4, 3)).astype(dtype)
    w = rng.standard_normal((4, 6 // group, *kernel)).astype(dtype)
    pads = op.pad
    ext = [_extent(n, k, s, d, op.pad_mode, pads[2 * i], pads[2 * i + 1], op.output_padding[i])
           for i, (n, k, s, d) in enumerate(zip(x.shape[2:], kernel, op.stride, op.dilation))]  # fmt: skip
    want = _conv_transpose_ref(x.astype(np.float64), w.astype(np.float64), op.stride, op.dilation, group,
                               [e[0] for e in ext], [e[1] for e in ext])  # fmt: skip
    return op, x, w, want


@pytest.mark.parametrize("index", range(len(CONFIGS)))
def test_conv3d_transpose_matches_numpy(index):
    rng = _rng(index)
    op, x, w, want = _op_and_ref(CONFIGS[index], rng)
    got = op(Tensor(x), Tensor(w))
    assert got.shape == want.shape and got.dtype == ms.float64
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-10, atol=1e-10)
    op32, x32, w32, want32 = _op_and_ref(CONFIGS[index], _rng(index), np.float32, batch=1)
    np.testing.assert_allclose(op32(Tensor(x32), Tensor(w32)).asnumpy(), want32, rtol=1e-4, atol=1e-4)


def test_conv3d_transpose_is_the_adjoint_of_conv3d():
    rng = _rng(10)
    kw = dict(pad_mode="pad", stride=(2, 1, 2), dilation=(1, 2, 1))
    w = rng.standard_normal((3, 4, 2, 2, 3)).astype(np.float32)  # conv3d: 4 -> 3 channels
    z = rng.standard_normal((2, 4, 5, 6, 6)).astype(np.float32)
    pads = (1, 1, 0, 1, 1, 0)
    forward = ops.conv3d(Tensor(z), Tensor(w), pad_mode="pad", padding=pads, stride=kw["stride"],
                         dilation=kw["dilation"])  # fmt: skip
    x = rng.standard_normal(forward.shape).astype(np.float32)
    dz = opforge.grad(lambda v: (ops.conv3d(v, Tensor(w), pad_mode="pad", padding=pads, stride=kw["stride"],
                                            dilation=kw["dilation"]) * Tensor(x)).sum())(Tensor(z))  # fmt: skip
    transposed = ops.Conv3DTranspose(3, 4, (2, 2, 3), pad=pads, output_padding=(1, 0, 0), **kw)(Tensor(x), Tensor(w))
    assert transposed.shape == z.shape
    np.testing.assert_allclose(transposed.asnumpy(), dz.asnumpy(), rtol=1e-4, atol=1e-4)


def test_conv3d_transpose_gradients_and_jit():
    rng = _rng(11)
    op = ops.Conv3DTranspose(2, 2, (2, 1, 2), pad_mode="pad", pad=(1, 0, 0, 0, 0, 1), stride=2, group=2)
    x, w = rng.standard_normal((1, 2, 2, 2, 2)), rng.standard_normal((2, 1, 2, 1, 2))
    dx, dw = opforge.grad(lambda a, b: (op(a, b) ** 2).sum(), grad_position=(0, 1))(Tensor(x), Tensor(w))
    np.testing.assert_allclose(dx.asnumpy(), numeric_grad(
        lambda v: float((op(Tensor(v), Tensor(w)) ** 2).sum().asnumpy()), x), rtol=1e-5, atol=1e-6)  # fmt: skip
    np.testing.assert_allclose(dw.asnumpy(), numeric_grad(
        lambda v: float((op(Tensor(x), Tensor(v)) ** 2).sum().asnumpy()), w), rtol=1e-5, atol=1e-6)  # fmt: skip
    np.testing.assert_allclose(opforge.jit(op)(Tensor(x), Tensor(w)).asnumpy(), op(Tensor(x), Tensor(w)).asnumpy())


def test_conv3d_transpose_bad_inputs():
    with pytest.raises(ValueError, match="'pad' and 'output_padding' must be 0"):
        ops.Conv3DTranspose(2, 2, 2, pad_mode="same", pad=1)
    with pytest.raises(ValueError, match="output_padding"):
        ops.Conv3DTranspose(2, 2, 2, pad_mode="pad", stride=2, output_padding=2)
    with pytest.raises(ValueError, match="divisible by 'group'"):
        ops.Conv3DTranspose(3, 2, 2, group=2)
    with pytest.raises(ValueError, match="pad_mode"):
        ops.Conv3DTranspose(2, 2, 2, pad_mode="full")
    with pytest.raises(TypeError, match="'kernel_size'"):
        ops.Conv3DTranspose(2, 2, 2.0)
    op = ops.Conv3DTranspose(2, 4, 2)
    x = Tensor(np.zeros((1, 2, 2, 2, 2), np.float32))
    with pytest.raises(ValueError, match=r"'weight' must have shape .*\[2, 4, 2, 2, 2\]"):
        op(x, Tensor(np.zeros((4, 2, 2, 2, 2), np.float32)))
    with pytest.raises(ValueError, match="in_channel=2"):
        op(Tensor(np.zeros((1, 3, 2, 2, 2), np.float32)), Tensor(np.zeros((2, 4, 2, 2, 2), np.float32)))
    with pytest.raises(ValueError, match="5-D"):
        op(Tensor(np.zeros((1, 2, 2, 2), np.float32)), Tensor(np.zeros((2, 4, 2, 2, 2), np.float32)))
    with pytest.raises(TypeError, match="Conv3DTranspose"):
        op(x, Tensor(np.zeros((2, 4, 2, 2, 2), np.float64)))
    with pytest.raises(ValueError, match="'bias' must be None"):
        op(x, Tensor(np.zeros((2, 4, 2, 2, 2), np.float32)), x)


# -- nn layers -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pad_mode, padding", [("same", 0), ("valid", 0), ("pad", 1)])
@pytest.mark.parametrize("stride", [1, 2, 3])
def test_conv1d_transpose_matches_numpy(pad_mode, padding, stride):
    rng = _rng(stride)
    net = nn.Conv1dTranspose(4, 6, 3, stride=stride, pad_mode=pad_mode, padding=padding, dilation=2, group=2,
                             has_bias=True, bias_init="normal", dtype=ms.float64)  # fmt: skip
    assert net.weight.shape == (4, 3, 1, 3)
    x = rng.standard_normal((2, 4, 5))
    head, out = _extent(5, 3, stride, 2, pad_mode, padding, padding)
    want = _conv_transpose_ref(x, net.weight.asnumpy()[:, :, 0], (stride,), (2,), 2, [head], [out])
    want = want + net.bias.asnumpy()[None, :, None]
    got = net(Tensor(x))
    assert got.shape == (2, 6, out)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12, atol=1e-12)


def test_conv1d_transpose_weight_init_gradient_and_errors():
    w = np.arange(12, dtype=np.float32).reshape(2, 2, 3) / 10
    net = nn.Conv1dTranspose(2, 2, 3, stride=2, pad_mode="valid", weight_init=Tensor(w))
    np.testing.assert_array_equal(net.weight.asnumpy(), w[:, :, None, :])
    x = np.random.default_rng(4).standard_normal((1, 2, 3)).astype(np.float32)
    dx = opforge.grad(lambda v: (net(v) ** 2).sum())(Tensor(x))
    want = numeric_grad(lambda v: float((net(Tensor(v.astype(np.float32))).asnumpy().astype(np.float64) ** 2).sum()),
                        x.astype(np.float64), eps=1e-3)  # fmt: skip
    np.testing.assert_allclose(dx.asnumpy(), want, rtol=2e-3, atol=2e-3)
    with pytest.raises(ValueError, match="'padding' must be 0 unless"):
        nn.Conv1dTranspose(2, 2, 3, pad_mode="same", padding=1)
    with pytest.raises(TypeError, match="'kernel_size'"):
        nn.Conv1dTranspose(2, 2, (3,))
    with pytest.raises(ValueError, match="3-D"):
        net(Tensor(np.zeros((1, 2, 1, 3), np.float32)))
    with pytest.raises(ValueError, match="3-D"):
        nn.Conv1dTranspose(2, 2, 3, weight_init=Tensor(np.zeros((2, 2, 1, 3), np.float32)))


@pytest.mark.parametrize("pad_mode, padding, output_padding", [("same", 0, 0), ("valid", 0, 0), ("pad", (1, 0, 1), 1)])
def test_conv3d_transpose_layer(pad_mode, padding, output_padding):
    rng = _rng(5)
    net = nn.Conv3dTranspose(2, 4, (2, 3, 2), stride=2, pad_mode=pad_mode, padding=padding,
                             output_padding=output_padding, has_bias=True, bias_init="normal")  # fmt: skip
    assert net.weight.shape == (2, 4, 2, 3, 2)
    x = rng.standard_normal((1, 2, 3, 2, 3)).astype(np.float32)
    pads = (0, 0, 0) if padding == 0 else padding
    ext = [_extent(n, k, 2, 1, pad_mode, p, p, output_padding) for n, k, p in zip(x.shape[2:], (2, 3, 2), pads)]
    want = _conv_transpose_ref(x.astype(np.float64), net.weight.asnumpy().astype(np.float64), (2, 2, 2), (1, 1, 1), 1,
                               [e[0] for e in ext], [e[1] for e in ext])  # fmt: skip
    want = want + net.bias.asnumpy()[None, :, None, None, None]
    got = net(Tensor(x))
    assert got.shape == want.shape
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-4, atol=1e-4)
    # one training step moves the weight
    loss = nn.MSELoss()
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.SGD(net.trainable_params(), learning_rate=0.1))
    before = net.weight.asnumpy().copy()
    step(Tensor(x), Tensor(np.zeros(want.shape, np.float32)))
    assert not np.allclose(before, net.weight.asnumpy())
    with pytest.raises(ValueError, match="5-D"):
        net(Tensor(np.zeros((1, 2, 3, 3), np.float32)))
