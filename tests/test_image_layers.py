"""nn.PixelShuffle / ops.pixel_shuffle and nn.Upsample / ops.interpolate (nearest) against NumPy and MindSpore's
documented example, with gradients through them. (Bilinear and linear modes: tests/test_resize_bilinear.py.)"""

from __future__ import annotations

import numpy as np
import pytest

import opforge
from opforge import Tensor, nn, ops


def _pixel_shuffle_ref(x, r):
    *lead, c, h, w = x.shape
    out = np.zeros((*lead, c // (r * r), h * r, w * r), x.dtype)
    for ch in range(c // (r * r)):
        for i in range(r):
            for j in range(r):
                out[..., ch, i::r, j::r] = x[..., ch * r * r + i * r + j, :, :]
    return out


@pytest.mark.parametrize("shape, r", [((1, 4, 2, 3), 2), ((2, 1, 9, 2, 2), 3), ((8, 3, 3), 2)])
def test_pixel_shuffle_matches_numpy(rng, shape, r):
    x = rng.standard_normal(shape).astype(np.float32)
    np.testing.assert_array_equal(nn.PixelShuffle(r)(Tensor(x)).asnumpy(), _pixel_shuffle_ref(x, r))


def test_pixel_shuffle_checks_and_gradient(rng):
    with pytest.raises(ValueError, match="divisible"):
        ops.pixel_shuffle(Tensor(np.ones((1, 3, 2, 2), np.float32)), 2)
    with pytest.raises(ValueError, match="upscale_factor"):
        ops.pixel_shuffle(Tensor(np.ones((1, 4, 2, 2), np.float32)), 0)
    x = rng.standard_normal((1, 4, 2, 2))
    w = rng.standard_normal((1, 1, 4, 4))
    g = opforge.grad(lambda t: (ops.pixel_shuffle(t, 2) * Tensor(w)).sum())(Tensor(x))
    # The adjoint of a permutation is its inverse: the weights gathered back into x's layout.
    want = np.stack([w[0, 0, i::2, j::2] for i in range(2) for j in range(2)])[None]
    np.testing.assert_allclose(g.asnumpy(), want)


def test_upsample_mindspore_example():
    x = Tensor(np.array([[[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]]], np.float32))
    out = nn.Upsample(size=(5, 5))(x)
    want = [[1, 1, 2, 3, 4]] * 3 + [[5, 5, 6, 7, 8]] * 2
    np.testing.assert_array_equal(out.asnumpy(), np.asarray(want, np.float32)[None, None])


def test_interpolate_nearest_scale_factor_ranks_and_gradient(rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_array_equal(ops.interpolate(Tensor(x), scale_factor=2.0).asnumpy(), np.repeat(x, 2, axis=-1))
    x4 = rng.standard_normal((1, 2, 3, 5))
    up = nn.Upsample(scale_factor=(2, 1.5))
    rows, cols = np.floor(np.arange(6) / 2).astype(int), np.floor(np.arange(7) / 1.5).astype(int)
    np.testing.assert_array_equal(up(Tensor(x4)).asnumpy(), x4[:, :, rows][:, :, :, cols])
    g = opforge.grad(lambda t: ops.upsample(t, size=(6, 10)).sum())(Tensor(x4))
    np.testing.assert_allclose(g.asnumpy(), np.full_like(x4, 4.0))  # each input copied 2 x 2 times
    with pytest.raises(ValueError, match="the 'mode' must be one of"):
        nn.Upsample(size=2, mode="bicubic")  # bilinear and linear: tests/test_resize_bilinear.py
    with pytest.raises(ValueError, match="exactly one"):
        ops.interpolate(Tensor(x4))
    with pytest.raises(ValueError, match="align_corners"):
        ops.interpolate(Tensor(x4), size=(2, 2), align_corners=True)
