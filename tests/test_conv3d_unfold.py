"""MindSpore's 3-D convolution (``ops.Conv3D``, ``ops.conv3d``, ``nn.Conv3d``) and image patches (``nn.Unfold``,
``ops.unfold``), which opforge composes of other primitives (opforge/ops/frontend_conv.py): against NumPy
references written as direct loops over the output windows, for every pad mode, strides, dilations, groups, a
kernel of depth 1, odd and empty sizes, float16 and float32, on the CPU and the GPU; gradients (first and second
order) against finite differences; ``jit`` against eager; unknown batch sizes; the argument checks.

Having no kernel and no bprop of their own, these operators are not in the registry sweeps
(tests/test_op_sweep.py, tests/test_grad_sweep.py are generated from the kernel and bprop registries): this
file is their sweep."""

from __future__ import annotations

import numpy as np
import pytest

import opforge
from opforge import Tensor, nn, ops
from opforge import dtype as mstype
from opforge.testing import ErrorInput, check_error_input, check_gradient, check_second_order_gradient

# ---------------------------------------------------------------------------------------------
# NumPy references


def _same_pads(size, k, s, d) -> tuple:
    out = -(-size // s)
    total = max(0, (out - 1) * s + d * (k - 1) + 1 - size)
    return total // 2, total - total // 2


def _conv3d_pads(x_shape, kernel, stride, dilation, pad_mode, pad) -> tuple:
    """((head, tail), (top, bottom), (left, right))."""
    if pad_mode == "valid":
        return ((0, 0),) * 3
    if pad_mode == "same":
        return tuple(_same_pads(n, k, s, d) for n, k, s, d in zip(x_shape[2:], kernel, stride, dilation))
    pad = (pad,) * 6 if isinstance(pad, int) else pad
    return (pad[0], pad[1]), (pad[2], pad[3]), (pad[4], pad[5])


def _conv3d_ref(x, w, stride, dilation, pads, group):
    """x [N, C, D, H, W], w [O, C / group, kd, kh, kw]: each output the sum over its window (zero padding)."""
    n, _, *_ = x.shape
    o, cg, *k = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), *pads))
    spans = [dilation[i] * (k[i] - 1) + 1 for i in range(3)]
    outs = [(xp.shape[2 + i] - spans[i]) // stride[i] + 1 for i in range(3)]
    y = np.zeros((n, o, *outs))
    per_group = o // group
    for oc in range(o):
        g = oc // per_group
        for t in range(outs[0]):
            for i in range(outs[1]):
                for j in range(outs[2]):
                    d0, h0, w0 = t * stride[0], i * stride[1], j * stride[2]
                    window = xp[
                        :,
                        g * cg : (g + 1) * cg,
                        d0 : d0 + spans[0] : dilation[0],
                        h0 : h0 + spans[1] : dilation[1],
                        w0 : w0 + spans[2] : dilation[2],
                    ]
                    y[:, oc, t, i, j] = np.einsum("ncdhw,cdhw->n", window, w[oc].astype(np.float64))
    return y


def _patches_ref(x, kernel, stride, rate, pads):
    """[N, C, kh, kw, Hout, Wout]: element (n, c, i, j, r, s) is x_padded[n, c, r * sh + i * rh, s * sw + j * rw]."""
    xp = np.pad(x, ((0, 0), (0, 0), pads[:2], pads[2:]))
    n, c, h, w = xp.shape
    (kh, kw), (sh, sw), (rh, rw) = kernel, stride, rate
    h_out = (h - rh * (kh - 1) - 1) // sh + 1
    w_out = (w - rw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, c, kh, kw, h_out, w_out), x.dtype)
    for i in range(kh):
        for j in range(kw):
            for r in range(h_out):
                for s in range(w_out):
                    out[:, :, i, j, r, s] = xp[:, :, r * sh + i * rh, s * sw + j * rw]
    return out


def _nn_unfold_ref(x, kernel, stride, rate, padding):
    """MindSpore's nn.Unfold: channel (i * kw + j) * C + c."""
    pads = (0, 0, 0, 0)
    if padding == "same":
        pads = (
            *_same_pads(x.shape[2], kernel[0], stride[0], rate[0]),
            *_same_pads(x.shape[3], kernel[1], stride[1], rate[1]),
        )
    p = _patches_ref(x, kernel, stride, rate, pads)  # [N, C, kh, kw, Ho, Wo]
    n, c, kh, kw, ho, wo = p.shape
    return p.transpose(0, 2, 3, 1, 4, 5).reshape(n, kh * kw * c, ho, wo)


def _ops_unfold_ref(x, kernel, dilation, padding, stride):
    """MindSpore 2.x's (PyTorch's) ops.unfold: row c * kh * kw + i * kw + j, column r * Wout + s."""
    p = _patches_ref(x, kernel, stride, dilation, (padding[0], padding[0], padding[1], padding[1]))
    n, c, kh, kw, ho, wo = p.shape
    return p.reshape(n, c * kh * kw, ho * wo)


# ---------------------------------------------------------------------------------------------
# ops.Conv3D against the reference

# (x shape, attrs): odd sizes, every pad mode, strides, dilations, groups, a kernel of depth 1, an empty batch.
CONV3D_CASES = {
    "valid k3": ((2, 3, 5, 6, 7), {"out_channel": 4, "kernel_size": 3}),
    "valid kd1 s2": ((1, 2, 5, 5, 6), {"out_channel": 3, "kernel_size": (1, 3, 2), "stride": 2}),
    "pad 6-tuple s(2,1,3) d(1,2,1) group2": (
        (2, 4, 5, 6, 7),
        {
            "out_channel": 6,
            "kernel_size": (3, 2, 3),
            "pad_mode": "pad",
            "pad": (1, 0, 2, 1, 0, 3),
            "stride": (2, 1, 3),
            "dilation": (1, 2, 1),
            "group": 2,
        },
    ),
    "pad int d2": ((1, 2, 4, 5, 4), {"out_channel": 2, "kernel_size": 2, "pad_mode": "pad", "pad": 1, "dilation": 2}),
    "same even kernel s2": (
        (2, 2, 7, 5, 6),
        {"out_channel": 4, "kernel_size": (2, 4, 3), "pad_mode": "same", "stride": (2, 2, 1)},
    ),
    "same d(2,1,2) group3 depthwise": (
        (1, 3, 6, 5, 7),
        {"out_channel": 3, "kernel_size": 3, "pad_mode": "SAME", "dilation": (2, 1, 2), "group": 3},
    ),
    "5-tuple stride and dilation": (
        (1, 2, 6, 7, 5),
        {"out_channel": 2, "kernel_size": (2, 2, 1), "stride": (1, 1, 2, 3, 1), "dilation": (1, 1, 2, 1, 1)},
    ),
    "window deeper than the input, padded": (
        (1, 1, 2, 3, 3),
        {"out_channel": 2, "kernel_size": (3, 1, 1), "pad_mode": "pad", "pad": (1, 1, 0, 0, 0, 0)},
    ),
    "1x1x1 kernel": ((3, 4, 2, 3, 2), {"out_channel": 5, "kernel_size": 1}),
    "empty batch": ((0, 2, 4, 4, 4), {"out_channel": 3, "kernel_size": 3, "pad_mode": "same"}),
}


def _case_arrays(case, rng):
    shape, attrs = case
    prim = ops.Conv3D(**attrs)
    x = rng.uniform(-2, 2, shape)
    w = rng.uniform(-1, 1, (prim.out_channel, shape[1] // prim.group, *prim.kernel_size))
    return prim, x, w


def _case_ref(prim, x, w):
    pads = _conv3d_pads(x.shape, prim.kernel_size, prim.stride[2:], prim.dilation[2:], prim.pad_mode, prim.pad)
    return _conv3d_ref(x, w, prim.stride[2:], prim.dilation[2:], pads, prim.group)


@pytest.mark.parametrize("dtype, rtol, atol", [(np.float32, 1e-5, 1e-5), (np.float16, 2e-2, 2e-2)])
@pytest.mark.parametrize("case", CONV3D_CASES.values(), ids=CONV3D_CASES.keys())
def test_conv3d_matches_numpy(case, dtype, rtol, atol, rng):
    prim, x, w = _case_arrays(case, rng)
    x, w = x.astype(dtype), w.astype(dtype)
    want = _case_ref(prim, x, w)
    out = prim(Tensor(x), Tensor(w))
    assert out.dtype == mstype.to_dtype(np.dtype(dtype)) and out.shape == want.shape
    np.testing.assert_allclose(out.asnumpy().astype(np.float64), want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", ["pad 6-tuple s(2,1,3) d(1,2,1) group2", "same even kernel s2", "empty batch"])
def test_conv3d_on_the_gpu_matches_the_cpu(name, rng):
    prim, x, w = _case_arrays(CONV3D_CASES[name], rng)
    x, w = x.astype(np.float32), w.astype(np.float32)
    out = prim(Tensor(x, device="GPU"), Tensor(w, device="GPU"))
    assert out.device == "GPU"
    np.testing.assert_allclose(out.asnumpy(), prim(Tensor(x), Tensor(w)).asnumpy(), rtol=1e-5, atol=1e-5)


def test_conv3d_mindspore_example_and_attrs():
    x = Tensor(np.ones([16, 3, 10, 32, 32]), mstype.float16)
    weight = Tensor(np.ones([32, 3, 4, 3, 3]), mstype.float16)
    conv3d = ops.Conv3D(out_channel=32, kernel_size=(4, 3, 3))
    out = conv3d(x, weight)
    assert out.shape == (16, 32, 7, 30, 30) and out.dtype == mstype.float16
    assert float(out.asnumpy()[0, 0, 0, 0, 0]) == 108.0  # 3 * 4 * 3 * 3 ones
    assert conv3d.stride == (1, 1, 1, 1, 1) and conv3d.dilation == (1, 1, 1, 1, 1) and conv3d.pad == (0,) * 6
    assert ops.operations.Conv3D is ops.Conv3D
    assert ops.Conv3D(2, 3, pad_mode="pad", pad=2).pad == (2,) * 6
    assert conv3d(x=x, weight=weight, bias=None).shape == out.shape


def test_conv3d_functional_with_bias_and_padding_triple(rng):
    x = rng.standard_normal((2, 2, 4, 5, 3)).astype(np.float32)
    w = rng.standard_normal((3, 2, 2, 3, 2)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    out = ops.conv3d(Tensor(x), Tensor(w), Tensor(b), stride=(1, 2, 1), pad_mode="pad", padding=(1, 0, 2))
    want = _conv3d_ref(x, w, (1, 2, 1), (1, 1, 1), ((1, 1), (0, 0), (2, 2)), 1) + b[None, :, None, None, None]
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5, atol=1e-5)


def test_conv3d_with_an_unknown_batch_and_under_vmap(rng):
    prim, x, w = _case_arrays(CONV3D_CASES["same even kernel s2"], rng)
    x, w = x.astype(np.float32), w.astype(np.float32)
    placeholder = Tensor(shape=[None, *x.shape[1:]], dtype=mstype.float32)
    spec = opforge.eval_shape(prim, placeholder, Tensor(w))
    assert spec.shape == (-1, *_case_ref(prim, x, w).shape[1:]) and spec.dtype == mstype.float32
    with pytest.raises(ValueError, match=r"For 'Conv3D', the 'x' must have known dims at axes \[1, 2, 3, 4\]"):
        opforge.eval_shape(prim, Tensor(shape=[2, 2, None, 5, 6], dtype=mstype.float32), Tensor(w))
    batched = np.stack([x, 2 * x])
    out = ops.vmap(lambda t: prim(t, Tensor(w)))(Tensor(batched))
    for i in range(2):
        np.testing.assert_allclose(out.asnumpy()[i], prim(Tensor(batched[i]), Tensor(w)).asnumpy(), rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# Gradients: Conv3D is linear in x and in w, so central differences with a coarse, exact step are exact
# up to float32 rounding (Conv3D takes float16 and float32 only).

GRAD_CASES = [
    "valid kd1 s2",
    "pad 6-tuple s(2,1,3) d(1,2,1) group2",
    "same even kernel s2",
    "5-tuple stride and dilation",
]


@pytest.mark.parametrize("name", GRAD_CASES)
def test_conv3d_gradients_match_finite_differences(name, rng):
    prim, x, w = _case_arrays(CONV3D_CASES[name], rng)
    x, w = x[:1].astype(np.float32), w.astype(np.float32)
    check_gradient(prim, (x, w), rng, eps=0.25, rtol=1e-4, atol=1e-4, where=f"Conv3D {name}")


def test_conv3d_second_order_gradient_matches_finite_differences(rng):
    prim = ops.Conv3D(2, (2, 2, 2), pad_mode="pad", pad=(1, 0, 0, 1, 1, 0), stride=(2, 1, 1), group=2)
    x = rng.uniform(-2, 2, (1, 2, 3, 3, 2)).astype(np.float32)
    w = rng.uniform(-1, 1, (2, 1, 2, 2, 2)).astype(np.float32)
    check_second_order_gradient(prim, (x, w), rng, eps=0.25, rtol=1e-4, atol=1e-4, where="Conv3D")


# ---------------------------------------------------------------------------------------------
# nn.Conv3d


@pytest.mark.parametrize(
    "pad_mode, padding, stride, dilation, group, has_bias",
    [
        ("same", 0, 1, 1, 1, True),
        ("same", 0, (2, 1, 2), (1, 2, 1), 2, False),
        ("valid", 0, 2, 1, 1, True),
        ("valid", 0, 1, (2, 1, 1), 2, False),
        ("pad", 1, 1, 1, 1, True),
        ("pad", (1, 0, 2, 1, 0, 2), (1, 2, 3), 1, 2, True),
        ("pad", (0, 1, 2), 1, 2, 1, False),
    ],
)
def test_nn_conv3d_matches_numpy(pad_mode, padding, stride, dilation, group, has_bias, rng):
    x = rng.standard_normal((2, 4, 5, 6, 5)).astype(np.float32)
    net = nn.Conv3d(4, 6, (3, 2, 3), stride, pad_mode, padding, dilation, group, has_bias, bias_init="normal")
    assert net.weight.shape == (6, 4 // group, 3, 2, 3)
    assert [p.name for p in net.trainable_params()] == (["weight", "bias"] if has_bias else ["weight"])
    k, s = (3, 2, 3), net.stride
    pad = tuple(p for p in padding for _ in range(2)) if isinstance(padding, tuple) and len(padding) == 3 else padding
    pads = _conv3d_pads(x.shape, k, s, net.dilation, pad_mode, pad)
    want = _conv3d_ref(x, net.weight.asnumpy(), s, net.dilation, pads, group)
    if has_bias:
        want = want + net.bias.asnumpy()[None, :, None, None, None]
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-5)


def test_nn_conv3d_defaults_gradients_and_jit(rng):
    net = nn.Conv3d(2, 4, 3, pad_mode="pad", padding=1, has_bias=True)  # MindSpore 2.x's default initializers
    bound = np.sqrt(6 / ((1 + 5) * 2 * 27))  # HeUniform(negative_slope=sqrt(5)): gain sqrt(2 / 6), fan_in 54
    assert 0 < np.abs(net.weight.asnumpy()).max() <= bound
    assert 0 < np.abs(net.bias.asnumpy()).max() <= 1 / np.sqrt(54)
    x = Tensor(rng.standard_normal((2, 2, 3, 4, 3)).astype(np.float32))
    r = Tensor(rng.standard_normal((2, 4, 3, 4, 3)).astype(np.float32))

    def loss(t):
        return (net(t) * r).sum()

    gx, (gw, gb) = opforge.grad(loss, grad_position=0, weights=net.trainable_params())(x)
    np.testing.assert_allclose(gb.asnumpy(), r.asnumpy().sum(axis=(0, 2, 3, 4)), rtol=1e-5)
    xs, ws = x.asnumpy().astype(np.float64), net.weight.asnumpy().astype(np.float64)

    def ref_loss(xv, wv):  # the float64 reference of loss (the bias adds a constant)
        return float((_conv3d_ref(xv, wv, (1, 1, 1), (1, 1, 1), ((1, 1),) * 3, 1) * r.asnumpy()).sum())

    eps = 0.25  # linear in x and in w: central differences are exact up to rounding
    for idx in [(0, 0, 0, 0, 0), (1, 1, 2, 3, 2), (0, 1, 1, 2, 1)]:
        d = np.zeros_like(xs)
        d[idx] = eps
        assert abs(gx.asnumpy()[idx] - (ref_loss(xs + d, ws) - ref_loss(xs - d, ws)) / (2 * eps)) < 1e-4
    for idx in [(0, 0, 0, 0, 0), (3, 1, 2, 1, 2), (2, 0, 1, 2, 0)]:
        d = np.zeros_like(ws)
        d[idx] = eps
        assert abs(gw.asnumpy()[idx] - (ref_loss(xs, ws + d) - ref_loss(xs, ws - d)) / (2 * eps)) < 1e-3
    jitted = opforge.jit(lambda t: net(t))
    np.testing.assert_allclose(jitted(x).asnumpy(), net(x).asnumpy(), rtol=1e-6, atol=1e-6)
    jit_grad = opforge.jit(opforge.grad(loss, grad_position=0))
    np.testing.assert_allclose(jit_grad(x).asnumpy(), gx.asnumpy(), rtol=1e-6, atol=1e-6)


def test_nn_conv3d_trains_one_step(rng):
    opforge.nn.set_seed(0)
    net = nn.SequentialCell(nn.Conv3d(1, 2, 3, has_bias=True), nn.ReLU(), nn.Conv3d(2, 1, 1, pad_mode="valid"))
    x = Tensor(rng.standard_normal((2, 1, 4, 4, 4)).astype(np.float32))
    y = Tensor(rng.standard_normal((2, 1, 4, 4, 4)).astype(np.float32))
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1))
    first = float(step(x, y).asnumpy())
    second = float(step(x, y).asnumpy())
    assert second < first


# ---------------------------------------------------------------------------------------------
# nn.Unfold and ops.unfold


def test_nn_unfold_mindspore_example():
    """docs/mindspore's comparison with torch.nn.Unfold: tap-major channels, "same" pads after."""
    x = Tensor(np.arange(32).reshape((1, 2, 4, 4)).astype(np.float32))
    valid = nn.Unfold(ksizes=(1, 2, 2, 1), strides=(1, 1, 1, 1), rates=(1, 1, 1, 1), padding="valid")(x).asnumpy()
    assert valid.shape == (1, 8, 3, 3)
    np.testing.assert_array_equal(valid[0, :4, 0, 0], [0, 16, 1, 17])  # (tap (0, 0): c 0, 1), (tap (0, 1): ...)
    np.testing.assert_array_equal(valid[0, 7], [[21, 22, 23], [25, 26, 27], [29, 30, 31]])
    same = nn.Unfold([1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "SAME")(x).asnumpy()
    assert same.shape == (1, 8, 4, 4)
    np.testing.assert_array_equal(same[0, 2], [[1, 2, 3, 0], [5, 6, 7, 0], [9, 10, 11, 0], [13, 14, 15, 0]])
    net = nn.Unfold([1, 2, 2, 1], [1, 2, 2, 1], [1, 2, 2, 1])  # MindSpore's docstring example
    assert net(Tensor(np.ones((2, 3, 6, 6), np.float16))).shape == (2, 12, 2, 2)


@pytest.mark.parametrize(
    "shape, k, s, r, padding",
    [
        ((2, 3, 7, 8), (3, 2), (1, 1), (1, 1), "valid"),
        ((1, 2, 9, 7), (2, 3), (2, 3), (2, 1), "valid"),
        ((2, 1, 6, 5), (3, 3), (2, 1), (1, 2), "same"),
        ((1, 4, 5, 5), (2, 2), (3, 3), (1, 1), "same"),
        ((3, 2, 4, 6), (1, 1), (2, 2), (1, 1), "valid"),
        ((0, 2, 5, 5), (2, 2), (1, 1), (1, 1), "same"),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_nn_unfold_matches_numpy(shape, k, s, r, padding, dtype, rng):
    x = rng.integers(-9, 10, shape).astype(dtype)
    net = nn.Unfold([1, *k, 1], (1, *s, 1), [1, *r, 1], padding)
    out = net(Tensor(x))
    assert out.dtype == mstype.to_dtype(np.dtype(dtype))
    np.testing.assert_array_equal(out.asnumpy(), _nn_unfold_ref(x, k, s, r, padding))


def test_nn_unfold_gradient_and_gpu(rng):
    net = nn.Unfold([1, 2, 3, 1], [1, 2, 1, 1], [1, 1, 2, 1], "same")
    x = rng.standard_normal((2, 2, 5, 6))
    check_gradient(net, (x,), rng, where="Unfold")
    xf = x.astype(np.float32)
    np.testing.assert_array_equal(net(Tensor(xf, device="GPU")).asnumpy(), net(Tensor(xf)).asnumpy())


@pytest.mark.parametrize(
    "shape, kernel_size, dilation, padding, stride",
    [
        ((1, 2, 4, 4), 2, 1, 0, 1),
        ((2, 3, 7, 6), (3, 2), (1, 2), (1, 0), (2, 1)),
        ((1, 1, 5, 5), 3, 2, 2, 3),
        ((2, 2, 3, 5), [1, 2], [1], [0, 1], [1, 2]),
    ],
)
def test_ops_unfold_matches_numpy(shape, kernel_size, dilation, padding, stride, rng):
    x = rng.standard_normal(shape)

    def pair(v):
        return (v, v) if isinstance(v, int) else tuple(v) * (2 if len(v) == 1 else 1)

    want = _ops_unfold_ref(x, pair(kernel_size), pair(dilation), pair(padding), pair(stride))
    out = ops.unfold(Tensor(x), kernel_size, dilation, padding, stride)
    np.testing.assert_array_equal(out.asnumpy(), want)
    check_gradient(lambda t: ops.unfold(t, kernel_size, dilation, padding, stride), (x,), rng, where="unfold")


def test_ops_unfold_pytorch_layout_and_complex():
    x = Tensor(np.arange(32).reshape((1, 2, 4, 4)).astype(np.float32))
    out = ops.unfold(x, kernel_size=(2, 2))
    assert out.shape == (1, 8, 9)
    np.testing.assert_array_equal(out.asnumpy()[0, 1], [1, 2, 3, 5, 6, 7, 9, 10, 11])  # channel 0, tap (0, 1)
    np.testing.assert_array_equal(out.asnumpy()[0, 4], [16, 17, 18, 20, 21, 22, 24, 25, 26])  # channel 1, tap (0, 0)
    z = (np.arange(16) + 1j * np.arange(16)).reshape(1, 1, 4, 4).astype(np.complex64)
    np.testing.assert_array_equal(
        ops.unfold(Tensor(z), 3).asnumpy(), _ops_unfold_ref(z, (3, 3), (1, 1), (0, 0), (1, 1))
    )


# ---------------------------------------------------------------------------------------------
# Bad inputs: each error names the operator and the argument

_F32 = mstype.float32


def _t(shape, dtype=_F32):
    return Tensor(np.ones(shape, dtype.np_dtype))


_X, _W = _t((1, 2, 4, 4, 4)), _t((3, 2, 2, 2, 2))

CONV3D_ERRORS = [
    ErrorInput("kernel_size-pair", lambda: ops.Conv3D(3, (2, 2)), ValueError, "'kernel_size'"),
    ErrorInput("kernel_size-list", lambda: ops.Conv3D(3, [2, 2, 2]), TypeError, "'kernel_size'"),
    ErrorInput("kernel_size-zero", lambda: ops.Conv3D(3, (2, 0, 2)), ValueError, "'kernel_size'"),
    ErrorInput("kernel_size-bool", lambda: ops.Conv3D(3, True), TypeError, "'kernel_size'"),
    ErrorInput("stride-zero", lambda: ops.Conv3D(3, 2, stride=0), ValueError, "'stride'"),
    ErrorInput("stride-4-tuple", lambda: ops.Conv3D(3, 2, stride=(1, 1, 1, 1)), ValueError, "'stride'"),
    ErrorInput(
        "stride-5-tuple-not-1-1", lambda: ops.Conv3D(3, 2, stride=(2, 1, 1, 1, 1)), ValueError, "(1, 1, d, h, w)"
    ),
    ErrorInput("dilation-negative", lambda: ops.Conv3D(3, 2, dilation=(1, -1, 1)), ValueError, "'dilation'"),
    ErrorInput("pad-4-tuple", lambda: ops.Conv3D(3, 2, pad_mode="pad", pad=(1, 1, 1, 1)), ValueError, "'pad'"),
    ErrorInput("pad-negative", lambda: ops.Conv3D(3, 2, pad_mode="pad", pad=-1), ValueError, "'pad'"),
    ErrorInput("pad-float", lambda: ops.Conv3D(3, 2, pad_mode="pad", pad=1.0), TypeError, "'pad'"),
    ErrorInput("pad-without-pad-mode", lambda: ops.Conv3D(3, 2, pad_mode="same", pad=1), ValueError, "'pad_mode'"),
    ErrorInput("pad_mode-unknown", lambda: ops.Conv3D(3, 2, pad_mode="full"), ValueError, "'pad_mode'"),
    ErrorInput("pad_mode-int", lambda: ops.Conv3D(3, 2, pad_mode=1), TypeError, "'pad_mode'"),
    ErrorInput("mode-2", lambda: ops.Conv3D(3, 2, mode=2), ValueError, "'mode'"),
    ErrorInput("data_format-NCHW", lambda: ops.Conv3D(3, 2, data_format="NCHW"), ValueError, "'data_format'"),
    ErrorInput("out_channel-zero", lambda: ops.Conv3D(0, 2), ValueError, "'out_channel'"),
    ErrorInput("group-zero", lambda: ops.Conv3D(3, 2, group=0), ValueError, "'group'"),
    ErrorInput("out_channel-not-divisible", lambda: ops.Conv3D(3, 2, group=2), ValueError, "'group'"),
    ErrorInput("x-numpy", lambda: ops.Conv3D(3, 2)(np.ones((1, 2, 4, 4, 4), np.float32), _W), TypeError, "'x'"),
    ErrorInput("weight-list", lambda: ops.Conv3D(3, 2)(_X, [1.0]), TypeError, "'weight'"),
    ErrorInput("x-4d", lambda: ops.Conv3D(3, 2)(_t((1, 2, 4, 4)), _W), ValueError, "'x' must be 5-D"),
    ErrorInput("weight-4d", lambda: ops.Conv3D(3, 2)(_X, _t((3, 2, 2, 2))), ValueError, "'weight' must be 5-D"),
    ErrorInput("weight-kernel-mismatch", lambda: ops.Conv3D(3, 3)(_X, _W), ValueError, "'weight' must have shape"),
    ErrorInput("weight-out-channel-mismatch", lambda: ops.Conv3D(4, 2)(_X, _W), ValueError, "out_channel=4"),
    ErrorInput("channels-mismatch", lambda: ops.Conv3D(3, 2)(_t((1, 3, 4, 4, 4)), _W), ValueError, "channels"),
    ErrorInput("int32", lambda: ops.Conv3D(3, 2)(_t((1, 2, 4, 4, 4), mstype.int32), _W), TypeError, "'x'"),
    ErrorInput(
        "float64", lambda: ops.Conv3D(3, 2)(_t((1, 2, 4, 4, 4), mstype.float64), _W), TypeError, "[Float16, Float32]"
    ),
    ErrorInput(
        "dtype-mismatch", lambda: ops.Conv3D(3, 2)(_X, _t((3, 2, 2, 2, 2), mstype.float16)), TypeError, "'weight'"
    ),
    ErrorInput("bias-not-none", lambda: ops.Conv3D(3, 2)(_X, _W, _t((3,))), ValueError, "'bias'"),
    ErrorInput("window-larger-than-input", lambda: ops.Conv3D(3, 5)(_X, _t((3, 2, 5, 5, 5))), ValueError, "larger"),
]


@pytest.mark.parametrize("err", CONV3D_ERRORS, ids=lambda e: e.desc)
def test_conv3d_errors_name_the_operator_and_the_argument(err):
    check_error_input("Conv3D", err)


def _conv3d_layer_errors():
    """(the operator the message names, the error): the layer's own checks, then those its Conv3D makes."""
    return [
        (
            "Conv3d",
            ErrorInput("in_channels-not-divisible", lambda: nn.Conv3d(3, 4, 2, group=2), ValueError, "divisible"),
        ),
        ("Conv3d", ErrorInput("kernel_size-pair", lambda: nn.Conv3d(2, 4, (2, 2)), ValueError, "tuple of 3")),
        ("Conv3d", ErrorInput("has_bias-int", lambda: nn.Conv3d(2, 4, 2, has_bias=1), TypeError, "'has_bias'")),
        (
            "Conv3D",
            ErrorInput("data_format-NCHW", lambda: nn.Conv3d(2, 4, 2, data_format="NCHW"), ValueError, "'data_format'"),
        ),  # fmt: skip
        ("Conv3D", ErrorInput("input-4d", lambda: nn.Conv3d(2, 4, 2)(_t((1, 2, 4, 4))), ValueError, "5-D")),
    ]


UNFOLD_ERRORS = [
    ErrorInput("ksizes-int", lambda: nn.Unfold(2, [1, 1, 1, 1], [1, 1, 1, 1]), TypeError, "'ksizes'"),
    ErrorInput("ksizes-pair", lambda: nn.Unfold([2, 2], [1, 1, 1, 1], [1, 1, 1, 1]), ValueError, "'ksizes'"),
    ErrorInput(
        "strides-not-1-at-the-ends",
        lambda: nn.Unfold([1, 2, 2, 1], [2, 1, 1, 1], [1, 1, 1, 1]),
        ValueError,
        "'strides'",
    ),  # fmt: skip
    ErrorInput("rates-zero", lambda: nn.Unfold([1, 2, 2, 1], [1, 1, 1, 1], [1, 0, 1, 1]), ValueError, "'rates'"),
    ErrorInput("padding-int", lambda: nn.Unfold([1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], 0), TypeError, "'padding'"),
    ErrorInput(
        "padding-full", lambda: nn.Unfold([1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "full"), ValueError, "'padding'"
    ),  # fmt: skip
    ErrorInput(
        "input-3d", lambda: nn.Unfold([1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1])(_t((2, 4, 4))), ValueError, "4-D"
    ),  # fmt: skip
    ErrorInput(
        "input-numpy",
        lambda: nn.Unfold([1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1])(np.ones((1, 1, 3, 3))),
        TypeError,
        "Tensor",
    ),  # fmt: skip
    ErrorInput(
        "window-larger-than-input",
        lambda: nn.Unfold([1, 3, 3, 1], [1, 1, 1, 1], [1, 2, 1, 1])(_t((1, 1, 4, 4))),
        ValueError,
        "larger",
    ),  # fmt: skip
]

OPS_UNFOLD_ERRORS = [
    ErrorInput("int32", lambda: ops.unfold(_t((1, 1, 4, 4), mstype.int32), 2), TypeError, "'input'"),
    ErrorInput("input-3d", lambda: ops.unfold(_t((1, 4, 4)), 2), ValueError, "'input' must be 4-D"),
    ErrorInput("kernel_size-three", lambda: ops.unfold(_t((1, 1, 4, 4)), (2, 2, 2)), ValueError, "'kernel_size'"),
    ErrorInput("kernel_size-str", lambda: ops.unfold(_t((1, 1, 4, 4)), "2"), TypeError, "'kernel_size'"),
    ErrorInput("dilation-zero", lambda: ops.unfold(_t((1, 1, 4, 4)), 2, dilation=0), ValueError, "'dilation'"),
    ErrorInput("padding-negative", lambda: ops.unfold(_t((1, 1, 4, 4)), 2, padding=-1), ValueError, "'padding'"),
    ErrorInput("stride-float", lambda: ops.unfold(_t((1, 1, 4, 4)), 2, stride=1.5), TypeError, "'stride'"),
]


@pytest.mark.parametrize(
    "op, err",
    _conv3d_layer_errors() + [("Unfold", e) for e in UNFOLD_ERRORS] + [("unfold", e) for e in OPS_UNFOLD_ERRORS],
    ids=lambda v: v if isinstance(v, str) else v.desc,
)
def test_layer_and_functional_errors_name_the_operator_and_the_argument(op, err):
    check_error_input(op, err)
