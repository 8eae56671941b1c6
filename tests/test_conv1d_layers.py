"""nn.Conv1d, nn.MaxPool1d and nn.AvgPool1d as MindSpore builds them (2-D primitives over an inserted H of 1):
MindSpore's weight shape [out, in / group, 1, k], pad modes, groups, dilation, bias, 3-D Tensor weight_init,
gradients through the layers, against NumPy references."""

from __future__ import annotations

import numpy as np
import pytest

import opforge
from opforge import Tensor, nn


def _conv1d_ref(x, w, stride, pads, dilation, group):
    """x [N, C, L], w [O, C / group, K] (cross-correlation, zero padding)."""
    n, c, length = x.shape
    o, cg, k = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), pads))
    span = dilation * (k - 1) + 1
    out_len = (xp.shape[2] - span) // stride + 1
    out = np.zeros((n, o, out_len))
    og = o // group
    for oc in range(o):
        g = oc // og
        for t in range(out_len):
            window = xp[:, g * cg : (g + 1) * cg, t * stride : t * stride + span : dilation]
            out[:, oc, t] = np.einsum("nck,ck->n", window, w[oc])
    return out


@pytest.mark.parametrize(
    "pad_mode, padding, stride, dilation, group, pads",
    [
        ("same", 0, 1, 1, 1, None),
        ("valid", 0, 2, 1, 2, (0, 0)),
        ("pad", 2, 1, 2, 1, (2, 2)),
        ("pad", (1, 0), 3, 1, 4, (1, 0)),
        ("same", 0, 2, 1, 1, None),  # the pads follow from "same": computed below
    ],
)
def test_conv1d_matches_numpy(rng, pad_mode, padding, stride, dilation, group, pads):
    x = rng.standard_normal((2, 4, 9))
    conv = nn.Conv1d(
        4, 8, 3, stride, pad_mode, padding, dilation, group, has_bias=True, bias_init="normal", dtype=opforge.float64
    )
    assert conv.weight.shape == (8, 4 // group, 1, 3)  # MindSpore's layout
    w = conv.weight.asnumpy()[:, :, 0, :]
    if pad_mode == "same":
        out_len = -(-9 // stride)
        total = max(0, (out_len - 1) * stride + 3 - 9)
        pads = (total // 2, total - total // 2)
    want = _conv1d_ref(x, w, stride, pads, dilation, group) + conv.bias.asnumpy()[None, :, None]
    np.testing.assert_allclose(conv(Tensor(x)).asnumpy(), want, rtol=1e-10, atol=1e-12)


def test_conv1d_mindspore_example_weight_init_tensor_and_checks(rng):
    net = nn.Conv1d(120, 240, 4, has_bias=False, weight_init="normal")
    assert net(Tensor(np.ones([1, 120, 640], np.float32))).shape == (1, 240, 640)
    w = rng.standard_normal((3, 2, 2)).astype(np.float32)
    conv = nn.Conv1d(2, 3, 2, pad_mode="valid", weight_init=Tensor(w))
    np.testing.assert_array_equal(conv.weight.asnumpy(), w[:, :, None, :])
    assert [p.name for p in conv.trainable_params()] == ["weight"]
    with pytest.raises(TypeError, match="'kernel_size' must be an int"):
        nn.Conv1d(2, 3, (1, 2))
    with pytest.raises(ValueError, match="'stride' must be at least 1"):
        nn.Conv1d(2, 3, 2, stride=0)
    with pytest.raises(ValueError, match="For 'Conv1d'.*divisible"):
        nn.Conv1d(3, 4, 2, group=2)
    with pytest.raises(ValueError, match=r"3-D \(N, C, L\)"):
        conv(Tensor(np.ones((1, 2, 1, 5), np.float32)))


def test_conv1d_gradients_match_finite_differences(rng):
    conv = nn.Conv1d(2, 3, 3, pad_mode="pad", padding=1, has_bias=True, dtype=opforge.float64)
    x = rng.standard_normal((2, 2, 5))
    w_out = rng.standard_normal((2, 3, 5))
    loss = lambda t: (conv(t) * Tensor(w_out)).sum()  # noqa: E731
    gx, (gw, gb) = opforge.grad(loss, grad_position=0, weights=conv.trainable_params())(Tensor(x))
    eps = 1e-6
    num = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[idx] = eps
        num[idx] = (float(loss(Tensor(x + d)).asnumpy()) - float(loss(Tensor(x - d)).asnumpy())) / (2 * eps)
    np.testing.assert_allclose(gx.asnumpy(), num, rtol=1e-6, atol=1e-8)
    assert gw.shape == (3, 2, 1, 3) and gb.shape == (3,)
    np.testing.assert_allclose(gb.asnumpy(), w_out.sum(axis=(0, 2)), rtol=1e-10)


def _pool1d_ref(x, k, s, pad_mode, reduce):
    length = x.shape[-1]
    if pad_mode == "valid":
        out_len, before = (length - k) // s + 1, 0
    else:
        out_len = -(-length // s)
        before = max(0, (out_len - 1) * s + k - length) // 2
    cols = []
    for t in range(out_len):
        a, b = max(0, t * s - before), min(length, t * s - before + k)
        cols.append(reduce(x[..., a:b], axis=-1))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("cls, reduce", [(nn.MaxPool1d, np.max), (nn.AvgPool1d, np.mean)])
@pytest.mark.parametrize("k, s, pad_mode", [(2, 2, "valid"), (3, 1, "same"), (3, 2, "same"), (1, 1, "valid")])
def test_pool1d_matches_numpy(rng, cls, reduce, k, s, pad_mode):
    x = rng.standard_normal((2, 3, 7)).astype(np.float32)
    pool = cls(kernel_size=k, stride=s, pad_mode=pad_mode)
    np.testing.assert_allclose(pool(Tensor(x)).asnumpy(), _pool1d_ref(x, k, s, pad_mode, reduce), rtol=1e-6)
    unbatched = pool(Tensor(x[0]))  # (C, L)
    np.testing.assert_allclose(unbatched.asnumpy(), _pool1d_ref(x[0], k, s, pad_mode, reduce), rtol=1e-6)


def test_pool1d_defaults_checks_and_gradient(rng):
    assert nn.AvgPool1d().kernel_size == 1 and nn.MaxPool1d().stride == 1
    with pytest.raises(TypeError, match="'kernel_size' must be an int"):
        nn.MaxPool1d(kernel_size=(2,))
    with pytest.raises(ValueError, match="3-D"):
        nn.AvgPool1d(2, 2)(Tensor(np.ones((1, 1, 2, 4), np.float32)))
    x = rng.standard_normal((1, 2, 6))
    g = opforge.grad(lambda t: nn.AvgPool1d(2, 2)(t).sum())(Tensor(x))
    np.testing.assert_allclose(g.asnumpy(), np.full_like(x, 0.5))
