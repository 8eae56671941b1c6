"""ops.grid_sample (GridSampler2D/3D) and ops.affine_grid (AffineGrid) of opforge/ops/grid_sample.py against a
point-by-point NumPy transcription of PyTorch's grid sampler (the semantics MindSpore's kernels share),
MindSpore's documented example, gradients (float64) against central differences with respect to the input,
the grid and theta, jit against eager, and bad inputs."""

import itertools

import numpy as np
import pytest

import opforge
from opforge import Tensor, ops
from opforge import dtype as ms
from opforge.testing import numeric_grad

MODES = ["bilinear", "nearest"]
PADDINGS = ["zeros", "border", "reflection"]


def _rng(seed=0):
    return np.random.default_rng(seed)


# -- NumPy reference ------------------------------------------------------------------------------------------------


def _unnormalize(c, size, align):
    return (c + 1) / 2 * (size - 1) if align else ((c + 1) * size - 1) / 2


def _reflect(c, twice_low, twice_high):
    if twice_low == twice_high:
        return 0.0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    c = abs(c - low)
    extra = np.fmod(c, span)
    flips = int(np.floor(c / span))
    return extra + low if flips % 2 == 0 else span - extra + low


def _source_index(c, size, padding, align):
    c = _unnormalize(c, size, align)
    if padding == "border":
        c = min(max(c, 0.0), size - 1.0)
    elif padding == "reflection":
        c = _reflect(c, 0, 2 * (size - 1)) if align else _reflect(c, -1, 2 * size - 1)
        c = min(max(c, 0.0), size - 1.0)
    return c


def _grid_sample_ref(x, grid, mode, padding, align):
    n, c = x.shape[:2]
    sizes = x.shape[2:]
    k = len(sizes)
    out = np.zeros((n, c) + grid.shape[1:-1])
    for b in range(n):
        for p in np.ndindex(*grid.shape[1:-1]):
            pos = [_source_index(grid[(b,) + p][k - 1 - d], sizes[d], padding, align) for d in range(k)]
            if mode == "nearest":
                idx = [int(np.rint(v)) for v in pos]
                if all(0 <= i < s for i, s in zip(idx, sizes)):
                    out[(b, slice(None)) + p] = x[(b, slice(None)) + tuple(idx)]
                continue
            lows = [int(np.floor(v)) for v in pos]
            acc = np.zeros(c)
            for corner in itertools.product((0, 1), repeat=k):
                idx = [lo + o for lo, o in zip(lows, corner)]
                wgt = np.prod([(v - lo) if o else (1 - (v - lo)) for v, lo, o in zip(pos, lows, corner)])
                if all(0 <= i < s for i, s in zip(idx, sizes)):
                    acc += wgt * x[(b, slice(None)) + tuple(idx)]
            out[(b, slice(None)) + p] = acc
    return out


def _affine_grid_ref(theta, size, align):
    spatial = size[2:]

    def coords(s):
        if s == 1:
            return np.zeros(1)
        return np.linspace(-1, 1, s) if align else (np.arange(s) * 2 + 1) / s - 1

    axes = [coords(s) for s in spatial]
    out = np.zeros((size[0], *spatial, len(spatial)))
    for b in range(size[0]):
        for p in np.ndindex(*spatial):
            point = [axes[d][p[d]] for d in range(len(spatial))][::-1] + [1.0]  # x, y(, z), 1
            out[(b,) + p] = theta[b] @ np.array(point)
    return out


# -- grid_sample ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("mode", MODES)
def test_grid_sample_2d_matches_numpy(mode, padding, align):
    rng = _rng(1)
    x = rng.standard_normal((2, 3, 4, 5))
    grid = rng.uniform(-1.6, 1.6, (2, 3, 6, 2))
    got = ops.grid_sample(Tensor(x), Tensor(grid), mode, padding, align)
    assert got.shape == (2, 3, 3, 6) and got.dtype == ms.float64
    np.testing.assert_allclose(got.asnumpy(), _grid_sample_ref(x, grid, mode, padding, align), rtol=1e-12, atol=1e-12)
    cls = ops.GridSampler2D(mode, padding, align)(Tensor(x.astype(np.float32)), Tensor(grid.astype(np.float32)))
    np.testing.assert_allclose(cls.asnumpy(), got.asnumpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("mode", MODES)
def test_grid_sample_3d_matches_numpy(mode, padding):
    rng = _rng(2)
    x = rng.standard_normal((1, 2, 3, 4, 3))
    grid = rng.uniform(-1.4, 1.4, (1, 2, 3, 2, 3))
    for align in (False, True):
        got = ops.GridSampler3D(mode, padding, align)(Tensor(x), Tensor(grid))
        assert got.shape == (1, 2, 2, 3, 2)
        want = _grid_sample_ref(x, grid, mode, padding, align)
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12, atol=1e-12)


def test_grid_sample_identity_grid_and_float16():
    x = np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4)
    for align in (False, True):
        grid = ops.affine_grid(Tensor(np.array([[[1, 0, 0], [0, 1, 0]]], np.float32)), (1, 2, 4, 4), align)
        for mode in MODES:
            out = ops.grid_sample(Tensor(x), grid, mode, align_corners=align)
            np.testing.assert_allclose(out.asnumpy(), x, atol=1e-5)
    half = ops.grid_sample(Tensor(x.astype(np.float16)), Tensor(np.zeros((1, 2, 2, 2), np.float16)))
    assert half.dtype == ms.float16


@pytest.mark.parametrize("padding", PADDINGS)
def test_grid_sample_gradients(padding):
    rng = _rng(3)
    x = rng.standard_normal((1, 2, 3, 4))
    grid = rng.uniform(-1.3, 1.3, (1, 2, 3, 2))
    f = lambda a, g: ops.grid_sample(a, g, "bilinear", padding, False)  # noqa: E731
    got = opforge.grad(lambda a, g: (f(a, g) * f(a, g)).sum(), grad_position=(0, 1))(Tensor(x), Tensor(grid))
    wants = (
        numeric_grad(lambda v: float((f(Tensor(v), Tensor(grid)) ** 2).sum().asnumpy()), x),
        numeric_grad(lambda v: float((f(Tensor(x), Tensor(v)) ** 2).sum().asnumpy()), grid),
    )
    for g, want in zip(got, wants):
        np.testing.assert_allclose(g.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_grid_sample_3d_gradient_and_nearest_input_gradient():
    rng = _rng(4)
    x = rng.standard_normal((1, 1, 2, 3, 3))
    grid = rng.uniform(-1.2, 1.2, (1, 2, 2, 1, 3))
    f = lambda a, g: ops.grid_sample(a, g, "bilinear", "zeros", True)  # noqa: E731
    dx, dg = opforge.grad(lambda a, g: f(a, g).sum(), grad_position=(0, 1))(Tensor(x), Tensor(grid))
    np.testing.assert_allclose(dg.asnumpy(), numeric_grad(
        lambda v: float(f(Tensor(x), Tensor(v)).sum().asnumpy()), grid), rtol=1e-5, atol=1e-6)  # fmt: skip
    np.testing.assert_allclose(dx.asnumpy(), numeric_grad(
        lambda v: float(f(Tensor(v), Tensor(grid)).sum().asnumpy()), x), rtol=1e-5, atol=1e-6)  # fmt: skip
    # nearest: the input's gradient counts each pick; the grid's is zero
    x2, g2 = rng.standard_normal((1, 1, 3, 3)), rng.uniform(-1, 1, (1, 4, 4, 2))
    dx, dg = opforge.grad(lambda a, g: ops.grid_sample(a, g, "nearest").sum(), grad_position=(0, 1))(
        Tensor(x2), Tensor(g2)
    )
    want = numeric_grad(lambda v: float(ops.grid_sample(Tensor(v), Tensor(g2), "nearest").sum()
                                                        .asnumpy()), x2)  # fmt: skip
    np.testing.assert_allclose(dx.asnumpy(), want, atol=1e-6)
    assert not dg.asnumpy().any()


def test_grid_sample_jit_matches_eager():
    rng = _rng(5)
    x, grid = Tensor(rng.standard_normal((2, 2, 4, 4))), Tensor(rng.uniform(-1.2, 1.2, (2, 3, 3, 2)))
    f = lambda a, g: ops.grid_sample(a, g, "bilinear", "reflection", True)  # noqa: E731
    np.testing.assert_allclose(opforge.jit(f)(x, grid).asnumpy(), f(x, grid).asnumpy(), rtol=1e-12)


def test_grid_sample_bad_inputs():
    x, grid = Tensor(np.zeros((1, 1, 3, 3), np.float32)), Tensor(np.zeros((1, 2, 2, 2), np.float32))
    with pytest.raises(ValueError, match="'mode'"):
        ops.grid_sample(x, grid, "bicubic")
    with pytest.raises(ValueError, match="'padding_mode'"):
        ops.grid_sample(x, grid, padding_mode="wrap")
    with pytest.raises(TypeError, match="'align_corners'"):
        ops.grid_sample(x, grid, align_corners=1)
    with pytest.raises(TypeError, match="grid_sample"):
        ops.grid_sample(x, Tensor(np.zeros((1, 2, 2, 2), np.float64)))
    with pytest.raises(ValueError, match="'grid' must have shape"):
        ops.grid_sample(x, Tensor(np.zeros((1, 2, 2, 3), np.float32)))
    with pytest.raises(ValueError, match="4-D or 5-D"):
        ops.grid_sample(Tensor(np.zeros((1, 3, 3), np.float32)), grid)
    with pytest.raises(ValueError, match="5-D"):
        ops.GridSampler3D()(x, grid)
    with pytest.raises(TypeError, match="'input'"):
        ops.grid_sample(np.zeros((1, 1, 3, 3)), grid)


# -- affine_grid ------------------------------------------------------------------------------------------------------


def test_affine_grid_docs_example_and_numpy():
    theta = Tensor(np.array([[[0.8, 0.5, 0], [-0.5, 0.8, 0]]]), ms.float32)
    want = [[[[-0.78333336, -0.06666666], [-0.25, -0.4], [0.28333336, -0.73333335]],
             [[-0.28333336, 0.73333335], [0.25, 0.4], [0.78333336, 0.06666666]]]]  # fmt: skip
    np.testing.assert_allclose(ops.affine_grid(theta, (1, 3, 2, 3), False).asnumpy(), want, rtol=1e-6)
    np.testing.assert_allclose(ops.AffineGrid(align_corners=False)(theta, (1, 3, 2, 3)).asnumpy(), want, rtol=1e-6)
    rng = _rng(6)
    for size, shape in (((2, 1, 3, 4), (2, 2, 3)), ((2, 1, 1, 5), (2, 2, 3)), ((1, 2, 2, 3, 4), (1, 3, 4))):
        theta = rng.standard_normal(shape)
        for align in (False, True):
            got = ops.affine_grid(Tensor(theta), size, align)
            np.testing.assert_allclose(got.asnumpy(), _affine_grid_ref(theta, size, align), rtol=1e-12, atol=1e-12)
    assert ops.affine_grid(Tensor(np.zeros((1, 2, 3), np.float16)), (1, 1, 2, 2)).dtype == ms.float16


def test_affine_grid_then_grid_sample_gradient_in_theta_and_jit():
    rng = _rng(7)
    x = rng.standard_normal((1, 2, 4, 4))
    theta = np.array([[[0.9, 0.2, 0.1], [-0.15, 1.1, -0.05]]])

    def f(t):
        return ops.grid_sample(Tensor(x), ops.affine_grid(t, (1, 2, 3, 3), False), "bilinear", "border")

    got = opforge.grad(lambda t: f(t).sum())(Tensor(theta))
    want = numeric_grad(lambda v: float(f(Tensor(v)).sum().asnumpy()), theta)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(opforge.jit(f)(Tensor(theta)).asnumpy(), f(Tensor(theta)).asnumpy(), rtol=1e-12)


def test_affine_grid_bad_inputs():
    theta = Tensor(np.zeros((1, 2, 3), np.float32))
    with pytest.raises(TypeError, match="'size' must be a tuple"):
        ops.affine_grid(theta, [1, 1, 2, 2])
    with pytest.raises(ValueError, match="4 or 5"):
        ops.affine_grid(theta, (1, 1, 2))
    with pytest.raises(ValueError, match="needs a 'size' of 4"):
        ops.affine_grid(theta, (1, 1, 2, 2, 2))
    with pytest.raises(ValueError, match=r"\[N, 2, 3\] or \[N, 3, 4\]"):
        ops.affine_grid(Tensor(np.zeros((1, 2, 2), np.float32)), (1, 1, 2, 2))
    with pytest.raises(ValueError, match="size\\[0\\]"):
        ops.affine_grid(theta, (2, 1, 2, 2))
    with pytest.raises(TypeError, match="affine_grid"):
        ops.affine_grid(Tensor(np.zeros((1, 2, 3), np.int32)), (1, 1, 2, 2))
