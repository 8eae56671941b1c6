"""MindSpore's image-quality cells (nn.SSIM, nn.MSSSIM, nn.PSNR, nn.ImageGradients; opforge/nn/image_quality.py)
and ops.fold / nn.Fold (opforge/ops/frontend_fold.py): MindSpore's documented examples, independent NumPy
references in float64 (SSIM's Gaussian-window statistics by sliding windows, col2im by loops), gradients against
central differences of the references, jit against eager, and bad arguments."""

from __future__ import annotations

import numpy as np
import pytest

import opforge
from opforge import Tensor, nn, ops
from opforge import dtype as mstype
from opforge.testing import numeric_grad

# -- NumPy references (float64) ---------------------------------------------------------------------------


def np_window(size, sigma):
    offsets = np.arange(size) - (size - 1) // 2  # MindSpore's: -size // 2 + 1 ... size // 2
    g = np.exp(-(offsets.astype(np.float64) ** 2) / (2.0 * sigma**2))
    w = np.outer(g, g)
    return w / w.sum()


def np_filter(x, window):
    """Valid correlation of every [.., H, W] plane with ``window``."""
    size = window.shape[0]
    views = np.lib.stride_tricks.sliding_window_view(x, (size, size), axis=(-2, -1))
    return np.einsum("...ij,ij->...", views, window)


def np_ssim_terms(x, y, max_val=1.0, size=11, sigma=1.5, k1=0.01, k2=0.03):
    """Per (n, c): the mean SSIM map and the mean contrast-structure map."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    w = np_window(size, sigma)
    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mx, my = np_filter(x, w), np_filter(y, w)
    sxx = np_filter(x * x, w) - mx * mx
    syy = np_filter(y * y, w) - my * my
    sxy = np_filter(x * y, w) - mx * my
    cs = (2 * sxy + c2) / (sxx + syy + c2)
    ssim = (2 * mx * my + c1) / (mx * mx + my * my + c1) * cs
    return ssim.mean(axis=(-2, -1)), cs.mean(axis=(-2, -1))


def np_ssim(x, y, **kw):
    return np_ssim_terms(x, y, **kw)[0].mean(-1)


def np_avg_pool2(x):
    n, c, h, w = x.shape
    x = x[:, :, : h // 2 * 2, : w // 2 * 2]
    return x.reshape(n, c, h // 2, 2, w // 2, 2).mean(axis=(3, 5))


def np_msssim(x, y, max_val=1.0, powers=(0.0448, 0.2856, 0.3001, 0.2363, 0.1333), size=11, sigma=1.5):
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    values = []
    for level in range(len(powers)):
        ssim, cs = np_ssim_terms(x, y, max_val, size, sigma)
        values.append(np.maximum(ssim if level == len(powers) - 1 else cs, 0.0))
        x, y = np_avg_pool2(x), np_avg_pool2(y)
    return np.prod(np.stack(values, -1) ** np.asarray(powers), -1).mean(-1)


def np_psnr(x, y, max_val=1.0):
    mse = ((np.asarray(x, np.float64) - np.asarray(y, np.float64)) ** 2).mean(axis=(1, 2, 3))
    return 10.0 * np.log10(max_val**2 / mse)


def np_fold(cols, size, kernel, dilation=(1, 1), padding=(0, 0), stride=(1, 1)):
    n, ckk, length = cols.shape
    kh, kw = kernel
    c = ckk // (kh * kw)
    hp, wp = size[0] + 2 * padding[0], size[1] + 2 * padding[1]
    h_out = (hp - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    w_out = (wp - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    assert h_out * w_out == length
    out = np.zeros((n, c, hp, wp), cols.dtype)
    for ch in range(c):
        for i in range(kh):
            for j in range(kw):
                row = ch * kh * kw + i * kw + j
                for r in range(h_out):
                    for s in range(w_out):
                        out[:, ch, r * stride[0] + i * dilation[0], s * stride[1] + j * dilation[1]] += cols[
                            :, row, r * w_out + s
                        ]
    return out[:, :, padding[0] : padding[0] + size[0], padding[1] : padding[1] + size[1]]


def _pair_of_images(rng, shape, noise=0.1):
    a = rng.uniform(0.0, 1.0, shape)
    b = np.clip(a + rng.normal(0.0, noise, shape), 0.0, 1.0)
    return a.astype(np.float32), b.astype(np.float32)


# -- SSIM ---------------------------------------------------------------------------------------------------


def test_ssim_mindspore_example():
    img = Tensor(np.ones([1, 3, 16, 16], np.float32))
    out = nn.SSIM()(img, img)
    assert out.shape == (1,) and out.dtype == mstype.float32
    np.testing.assert_allclose(out.asnumpy(), [1.0], rtol=1e-6)


@pytest.mark.parametrize(
    "shape, kwargs",
    [
        ((2, 3, 16, 16), {}),
        ((1, 2, 12, 9), {"filter_size": 7, "filter_sigma": 1.0, "max_val": 2, "k1": 0.02, "k2": 0.05}),
        ((2, 1, 8, 8), {"filter_size": 4, "filter_sigma": 0.8}),  # an even window: one more tap after the centre
        ((1, 1, 5, 5), {"filter_size": 1, "filter_sigma": 1.0}),
    ],
)
def test_ssim_matches_numpy(rng, shape, kwargs):
    a, b = _pair_of_images(rng, shape)
    got = nn.SSIM(**kwargs)(Tensor(a), Tensor(b)).asnumpy()
    ref_kw = {"size": kwargs.get("filter_size", 11), "sigma": kwargs.get("filter_sigma", 1.5)}
    ref_kw.update({k: kwargs[k] for k in ("max_val", "k1", "k2") if k in kwargs})
    np.testing.assert_allclose(got, np_ssim(a, b, **ref_kw), rtol=2e-5, atol=2e-6)


def test_ssim_float16_keeps_the_dtype(rng):
    a, b = _pair_of_images(rng, (2, 2, 11, 11))
    a16, b16 = a.astype(np.float16), b.astype(np.float16)
    out = nn.SSIM()(Tensor(a16), Tensor(b16))
    assert out.dtype == mstype.float16
    np.testing.assert_allclose(out.asnumpy().astype(np.float64), np_ssim(a16, b16), rtol=2e-3, atol=2e-3)


def test_ssim_gradient_matches_central_differences(rng):
    a, b = _pair_of_images(rng, (1, 2, 7, 7), noise=0.2)
    ssim = nn.SSIM(filter_size=5, filter_sigma=1.0)
    grad = opforge.grad(lambda x: 1.0 - ssim(x, Tensor(b)).sum())(Tensor(a)).asnumpy()
    numeric = numeric_grad(lambda v: 1.0 - float(np_ssim(v, b, size=5, sigma=1.0).sum()), a.astype(np.float64))
    np.testing.assert_allclose(grad, numeric, rtol=2e-3, atol=2e-5)


def test_ssim_and_psnr_under_jit_equal_eager(rng):
    ssim, psnr = nn.SSIM(filter_size=5), nn.PSNR()
    fn = opforge.jit(lambda x, y: ssim(x, y) + psnr(x, y))
    for _ in range(3):  # the trace, its replay, new values
        a, b = _pair_of_images(rng, (2, 2, 9, 9))
        eager = ssim(Tensor(a), Tensor(b)) + psnr(Tensor(a), Tensor(b))
        np.testing.assert_allclose(fn(Tensor(a), Tensor(b)).asnumpy(), eager.asnumpy(), rtol=1e-6)


def test_ssim_bad_arguments():
    with pytest.raises(TypeError, match="'SSIM'.*'max_val'"):
        nn.SSIM(max_val="1")
    with pytest.raises(ValueError, match="'SSIM'.*'max_val'"):
        nn.SSIM(max_val=0)
    with pytest.raises(TypeError, match="'SSIM'.*'filter_size'"):
        nn.SSIM(filter_size=11.0)
    with pytest.raises(ValueError, match="'SSIM'.*'filter_size'"):
        nn.SSIM(filter_size=0)
    for name in ("filter_sigma", "k1", "k2"):
        with pytest.raises(TypeError, match=f"'SSIM'.*'{name}' must be a float"):
            nn.SSIM(**{name: 1})
    with pytest.raises(ValueError, match="'filter_sigma'"):
        nn.SSIM(filter_sigma=0.0)
    ssim = nn.SSIM()
    img = Tensor(np.ones((1, 1, 11, 11), np.float32))
    with pytest.raises(TypeError, match="'SSIM'.*'img1'.*Float64"):
        ssim(Tensor(np.ones((1, 1, 11, 11))), Tensor(np.ones((1, 1, 11, 11))))
    with pytest.raises(ValueError, match="'SSIM'.*4-D"):
        ssim(Tensor(np.ones((1, 11, 11), np.float32)), Tensor(np.ones((1, 11, 11), np.float32)))
    with pytest.raises(ValueError, match="'SSIM'.*>= filter_size"):
        ssim(Tensor(np.ones((1, 1, 10, 11), np.float32)), Tensor(np.ones((1, 1, 10, 11), np.float32)))
    with pytest.raises(ValueError, match="'img2' must have the shape"):
        ssim(img, Tensor(np.ones((1, 1, 11, 12), np.float32)))
    with pytest.raises(TypeError, match="'img2' must have the dtype"):
        ssim(img, Tensor(np.ones((1, 1, 11, 11), np.float16)))
    with pytest.raises(TypeError, match="'img1' must be a Tensor"):
        ssim(np.ones((1, 1, 11, 11), np.float32), img)


# -- MS-SSIM ------------------------------------------------------------------------------------------------


def test_msssim_mindspore_example():
    img = Tensor(np.ones((1, 3, 128, 128), np.float32))
    np.testing.assert_allclose(nn.MSSSIM(power_factors=(0.033, 0.033, 0.033))(img, img).asnumpy(), [1.0], rtol=1e-6)


def test_msssim_matches_numpy(rng):
    a, b = _pair_of_images(rng, (2, 2, 27, 30), noise=0.05)
    powers = (0.2, 0.3, 0.5)
    got = nn.MSSSIM(power_factors=powers, filter_size=5, filter_sigma=1.0)(Tensor(a), Tensor(b))
    assert got.shape == (2,) and got.dtype == mstype.float32
    np.testing.assert_allclose(got.asnumpy(), np_msssim(a, b, powers=powers, size=5, sigma=1.0), rtol=1e-4)


def test_msssim_default_scales_and_uint8(rng):
    a, b = _pair_of_images(rng, (1, 1, 176, 176), noise=0.05)
    got = nn.MSSSIM()(Tensor(a), Tensor(b)).asnumpy()
    np.testing.assert_allclose(got, np_msssim(a, b), rtol=1e-4)
    a8, b8 = (a * 255).astype(np.uint8)[..., :40, :40], (b * 255).astype(np.uint8)[..., :40, :40]
    msssim = nn.MSSSIM(max_val=255, power_factors=(0.5, 0.5), filter_size=7)
    ref = np_msssim(a8 / 255.0, b8 / 255.0, max_val=1.0, powers=(0.5, 0.5), size=7)
    np.testing.assert_allclose(msssim(Tensor(a8), Tensor(b8)).asnumpy(), ref, rtol=1e-4)


def test_msssim_gradient_matches_central_differences(rng):
    a, b = _pair_of_images(rng, (1, 1, 8, 8), noise=0.2)
    msssim = nn.MSSSIM(power_factors=(0.4, 0.6), filter_size=3, filter_sigma=1.0)
    grad = opforge.grad(lambda x: msssim(x, Tensor(b)).sum())(Tensor(a)).asnumpy()
    numeric = numeric_grad(
        lambda v: float(np_msssim(v, b, powers=(0.4, 0.6), size=3, sigma=1.0).sum()), a.astype(np.float64)
    )
    np.testing.assert_allclose(grad, numeric, rtol=5e-3, atol=5e-5)


def test_msssim_bad_arguments():
    with pytest.raises(TypeError, match="'MSSSIM'.*'power_factors'"):
        nn.MSSSIM(power_factors=0.5)
    with pytest.raises(ValueError, match="'MSSSIM'.*'power_factors'"):
        nn.MSSSIM(power_factors=())
    with pytest.raises(TypeError, match="'MSSSIM'.*'k2'"):
        nn.MSSSIM(k2=0)
    msssim = nn.MSSSIM(power_factors=(0.5, 0.5), filter_size=7)
    with pytest.raises(ValueError, match="'MSSSIM'.*at scale 1"):
        msssim(Tensor(np.ones((1, 1, 12, 12), np.float32)), Tensor(np.ones((1, 1, 12, 12), np.float32)))
    with pytest.raises(TypeError, match="'MSSSIM'.*'img1'"):
        msssim(Tensor(np.ones((1, 1, 16, 16), np.int32)), Tensor(np.ones((1, 1, 16, 16), np.int32)))


# -- PSNR ---------------------------------------------------------------------------------------------------


def test_psnr_mindspore_example():
    img1 = Tensor(np.array([[[[1, 2, 3, 4], [1, 2, 3, 4]]]]))
    img2 = Tensor(np.array([[[[3, 4, 5, 6], [3, 4, 5, 6]]]]))
    out = nn.PSNR()(img1, img2)
    assert out.dtype == mstype.float32
    np.testing.assert_allclose(out.asnumpy(), [-6.0206], atol=1e-4)


@pytest.mark.parametrize("dtype, max_val", [(np.float32, 1.0), (np.float64, 2), (np.uint8, 255), (np.int32, 100.7)])
def test_psnr_matches_numpy(rng, dtype, max_val):
    a, b = _pair_of_images(rng, (3, 2, 5, 6))
    if np.dtype(dtype).kind in "iu":
        a, b = (a * 200).astype(dtype), (b * 200).astype(dtype)
    else:
        a, b = a.astype(dtype), b.astype(dtype)
    want = np_psnr(a, b, int(max_val) if np.dtype(dtype).kind in "iu" else max_val)  # ints truncate max_val
    np.testing.assert_allclose(nn.PSNR(max_val)(Tensor(a), Tensor(b)).asnumpy(), want, rtol=1e-5)


def test_psnr_gradient_matches_central_differences(rng):
    a, b = _pair_of_images(rng, (2, 1, 3, 4), noise=0.3)
    grad = opforge.grad(lambda x: nn.PSNR(2.0)(x, Tensor(b)).sum())(Tensor(a)).asnumpy()
    numeric = numeric_grad(lambda v: float(np_psnr(v, b, 2.0).sum()), a.astype(np.float64))
    np.testing.assert_allclose(grad, numeric, rtol=1e-3, atol=1e-4)


def test_psnr_bad_arguments():
    with pytest.raises(TypeError, match="'PSNR'.*'max_val'"):
        nn.PSNR(True)
    with pytest.raises(ValueError, match="'PSNR'.*'max_val'"):
        nn.PSNR(-1.0)
    with pytest.raises(ValueError, match="'PSNR'.*4-D"):
        nn.PSNR()(Tensor(np.ones((2, 3), np.float32)), Tensor(np.ones((2, 3), np.float32)))
    with pytest.raises(TypeError, match="'PSNR'.*real dtype"):
        c = Tensor(np.ones((1, 1, 2, 2), np.complex64))
        nn.PSNR()(c, c)


# -- ImageGradients -----------------------------------------------------------------------------------------


def test_image_gradients_mindspore_example():
    dy, dx = nn.ImageGradients()(Tensor(np.array([[[[1, 2], [3, 4]]]]), mstype.int32))
    assert dy.dtype == mstype.int32 and dx.dtype == mstype.int32
    assert dy.asnumpy().tolist() == [[[[2, 2], [0, 0]]]]
    assert dx.asnumpy().tolist() == [[[[1, 0], [1, 0]]]]


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 2, 1, 4), (1, 1, 3, 1), (1, 1, 1, 1)])
def test_image_gradients_match_numpy(rng, shape):
    x = rng.standard_normal(shape).astype(np.float32)
    dy, dx = nn.ImageGradients()(Tensor(x))
    want_dy, want_dx = np.zeros_like(x), np.zeros_like(x)
    want_dy[:, :, :-1] = x[:, :, 1:] - x[:, :, :-1]
    want_dx[:, :, :, :-1] = x[:, :, :, 1:] - x[:, :, :, :-1]
    np.testing.assert_array_equal(dy.asnumpy(), want_dy)
    np.testing.assert_array_equal(dx.asnumpy(), want_dx)


def test_image_gradients_gradient_and_errors(rng):
    x = rng.standard_normal((1, 2, 3, 4))
    r1, r2 = rng.standard_normal(x.shape), rng.standard_normal(x.shape)

    def loss(v):
        dy, dx = nn.ImageGradients()(v)
        return (dy * Tensor(r1)).sum() + (dx * Tensor(r2)).sum()

    def ref(v):
        dy, dx = np.zeros_like(v), np.zeros_like(v)
        dy[:, :, :-1] = v[:, :, 1:] - v[:, :, :-1]
        dx[:, :, :, :-1] = v[:, :, :, 1:] - v[:, :, :, :-1]
        return float((dy * r1).sum() + (dx * r2).sum())

    np.testing.assert_allclose(opforge.grad(loss)(Tensor(x)).asnumpy(), numeric_grad(ref, x), rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError, match="'ImageGradients'.*4-D"):
        nn.ImageGradients()(Tensor(np.ones((2, 2), np.float32)))


# -- fold -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "size, kernel, dilation, padding, stride",
    [
        ((5, 6), (2, 3), (1, 1), (0, 0), (1, 1)),
        ((7, 6), (2, 3), (1, 2), (1, 0), (2, 1)),
        ((8, 8), (2, 2), (2, 2), (2, 2), (2, 2)),
        ((4, 5), (1, 1), (1, 1), (0, 1), (3, 2)),
        ((6, 6), (3, 3), (1, 1), (1, 1), (3, 3)),
    ],
)
def test_fold_matches_numpy_and_is_unfolds_adjoint(rng, size, kernel, dilation, padding, stride):
    x = rng.standard_normal((2, 3, *size)).astype(np.float32)
    cols = ops.unfold(Tensor(x), kernel, dilation, padding, stride)
    c = rng.standard_normal(cols.shape).astype(np.float32)
    got = ops.fold(Tensor(c), size, kernel, dilation, padding, stride).asnumpy()
    assert got.shape == x.shape
    np.testing.assert_allclose(got, np_fold(c, size, kernel, dilation, padding, stride), rtol=1e-6, atol=1e-6)
    # <unfold(x), c> == <x, fold(c)>
    np.testing.assert_allclose((cols.asnumpy() * c).sum(), (x * got).sum(), rtol=1e-4)


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.complex64, np.complex128])
def test_fold_dtypes(rng, dtype):
    c = rng.standard_normal((1, 8, 6))
    if np.dtype(dtype).kind == "c":
        c = c + 1j * rng.standard_normal(c.shape)
    c = c.astype(dtype)
    out = ops.fold(Tensor(c), (3, 4), 2, stride=1)
    assert out.dtype.np_dtype == np.dtype(dtype)
    tol = 2e-3 if dtype == np.float16 else 1e-12
    np.testing.assert_allclose(out.asnumpy(), np_fold(c, (3, 4), (2, 2)), rtol=tol, atol=tol)


def test_fold_mindspore_example_and_output_size_forms(rng):
    x = Tensor(rng.random((16, 64, 25)).astype(np.float32))
    output_size = Tensor(np.array([8, 8], np.int32))
    assert ops.fold(x, output_size, [2, 2], [2, 2], [2, 2], [2, 2]).shape == (16, 16, 8, 8)
    assert ops.fold(x, [8, 8], 2, 2, 2, 2).shape == (16, 16, 8, 8)
    assert ops.fold(x, 8, (2, 2), 2, (2,), 2).shape == (16, 16, 8, 8)


def test_nn_fold_inverts_unfold_with_disjoint_windows(rng):
    x = rng.standard_normal((2, 3, 6, 9)).astype(np.float32)
    cols = ops.unfold(Tensor(x), (2, 3), stride=(2, 3))
    np.testing.assert_array_equal(nn.Fold((6, 9), (2, 3), stride=(2, 3))(cols).asnumpy(), x)
    unbatched = nn.Fold([6, 9], (2, 3), stride=(2, 3))(cols[0])
    np.testing.assert_array_equal(unbatched.asnumpy(), x[0])


def test_fold_gradient_vmap_and_jit(rng):
    c = rng.standard_normal((2, 12, 12))
    r = rng.standard_normal((2, 3, 4, 5))

    def loss(v):
        return (ops.fold(v, (4, 5), 2, padding=(1, 0), stride=(2, 1)) * Tensor(r)).sum()

    numeric = numeric_grad(lambda v: float((np_fold(v, (4, 5), (2, 2), padding=(1, 0), stride=(2, 1)) * r).sum()), c)
    np.testing.assert_allclose(opforge.grad(loss)(Tensor(c)).asnumpy(), numeric, rtol=1e-6, atol=1e-8)
    traced = opforge.jit(lambda v: ops.fold(v, (4, 5), 2, padding=(1, 0), stride=(2, 1)))
    for _ in range(2):
        np.testing.assert_allclose(traced(Tensor(c)).asnumpy(), np_fold(c, (4, 5), (2, 2), (1, 1), (1, 0), (2, 1)))
    batched = ops.vmap(lambda v: ops.fold(v, (4, 5), 2, padding=(1, 0), stride=(2, 1)))(Tensor(c[None]))
    np.testing.assert_allclose(batched.asnumpy()[0], np_fold(c, (4, 5), (2, 2), (1, 1), (1, 0), (2, 1)))


def test_fold_bad_arguments():
    x = Tensor(np.ones((1, 8, 6), np.float32))
    with pytest.raises(ValueError, match="'fold'.*dim 2 \\(6\\).*sliding blocks"):
        ops.fold(x, (4, 4), 2)
    with pytest.raises(ValueError, match="'fold'.*divisible by kernel_size"):
        ops.fold(x, (3, 4), 3)
    with pytest.raises(ValueError, match="'fold'.*3-D"):
        ops.fold(Tensor(np.ones((8, 6), np.float32)), (3, 4), 2)
    with pytest.raises(TypeError, match="'fold'.*'input'.*Int32"):
        ops.fold(Tensor(np.ones((1, 8, 6), np.int32)), (3, 4), 2)
    with pytest.raises(ValueError, match="'fold'.*'kernel_size'.*positive"):
        ops.fold(x, (3, 4), (2, 0))
    with pytest.raises(ValueError, match="'fold'.*'padding'.*non-negative"):
        ops.fold(x, (3, 4), 2, padding=-1)
    with pytest.raises(TypeError, match="'fold'.*'stride'"):
        ops.fold(x, (3, 4), 2, stride=1.0)
    with pytest.raises(ValueError, match="'fold'.*'output_size'"):
        ops.fold(x, Tensor(np.array([3.0, 4.0], np.float32)), 2)
    with pytest.raises(ValueError, match="'fold'.*does not fit"):
        ops.fold(Tensor(np.ones((1, 9, 1), np.float32)), (2, 2), 3)
    with pytest.raises(TypeError, match="'fold'.*'input' must be a Tensor"):
        ops.fold(np.ones((1, 8, 6), np.float32), (3, 4), 2)


# -- the GPU (a real one, or the host emulation of the CUDA sources: tests/conftest.py) -----------------------


def test_image_quality_and_fold_on_the_gpu(rng):
    a, b = _pair_of_images(rng, (1, 2, 9, 10))
    cpu, gpu = (Tensor(a), Tensor(b)), (Tensor(a, device="GPU"), Tensor(b, device="GPU"))
    cells = [nn.SSIM(filter_size=5), nn.MSSSIM(power_factors=(0.5, 0.5), filter_size=3), nn.PSNR()]
    for cell in cells:
        out = cell(*gpu)
        assert out.device == "GPU", type(cell).__name__
        np.testing.assert_allclose(out.asnumpy(), cell(*cpu).asnumpy(), rtol=1e-5, err_msg=type(cell).__name__)
    dy, dx = nn.ImageGradients()(gpu[0])
    np.testing.assert_array_equal(dx.asnumpy(), nn.ImageGradients()(cpu[0])[1].asnumpy())
    c = rng.standard_normal((2, 8, 6)).astype(np.float32)
    out = ops.fold(Tensor(c, device="GPU"), (3, 4), 2, padding=(1, 0), stride=(2, 1))
    assert out.device == "GPU"
    np.testing.assert_allclose(out.asnumpy(), np_fold(c, (3, 4), (2, 2), (1, 1), (1, 0), (2, 1)), rtol=1e-6)
