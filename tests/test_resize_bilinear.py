"""Bilinear resizing: ops.ResizeBilinearV2, ops.ResizeBilinear, nn.ResizeBilinear and the "linear" / "bilinear"
modes of ops.interpolate and nn.Upsample, against a per-pixel NumPy reference and MindSpore's documented
examples, on the CPU and the GPU; gradients against finite differences, jit and vmap against eager calls, and
bad inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest

import opforge
from opforge import Tensor, nn, ops
from opforge import dtype as mstype
from opforge.testing import check_gradient

BACKENDS = ("CPU", "GPU")  # the GPU: a real one, else the host emulation of the CUDA sources (conftest.py)
TOLS = {np.float16: (2e-3, 2e-3), np.float32: (1e-5, 1e-5), np.float64: (1e-12, 1e-12)}


# ---------------------------------------------------------------------------------------------
# The reference: each output pixel from its four neighbours (TensorFlow's formulation: the lower
# neighbour floor(src) and the upper ceil(src), clamped to the image)


def _source(d: int, n: int, m: int, mode: str) -> float:
    if mode == "align_corners":
        return d * (n - 1) / (m - 1) if m > 1 else 0.0
    if mode == "half_pixel":
        return max((d + 0.5) * n / m - 0.5, 0.0)
    return d * n / m  # "asymmetric": ResizeBilinearV2's default


def _neighbours(d: int, n: int, m: int, mode: str) -> tuple:
    s = _source(d, n, m, mode)
    lower = min(math.floor(s), n - 1)
    upper = min(math.ceil(s), n - 1)
    return lower, upper, s - math.floor(s)


def bilinear_ref(x: np.ndarray, out_h: int, out_w: int, mode: str) -> np.ndarray:
    x = x.astype(np.float64)
    n, c, h, w = x.shape
    out = np.zeros((n, c, out_h, out_w))
    for i in range(out_h):
        top, bottom, dy = _neighbours(i, h, out_h, mode)
        for j in range(out_w):
            left, right, dx = _neighbours(j, w, out_w, mode)
            out[:, :, i, j] = (
                x[:, :, top, left] * (1 - dy) * (1 - dx)
                + x[:, :, top, right] * (1 - dy) * dx
                + x[:, :, bottom, left] * dy * (1 - dx)
                + x[:, :, bottom, right] * dy * dx
            )
    return out


def linear_ref(x: np.ndarray, out_w: int, mode: str) -> np.ndarray:
    x = x.astype(np.float64)
    out = np.zeros(x.shape[:-1] + (out_w,))
    for j in range(out_w):
        left, right, dx = _neighbours(j, x.shape[-1], out_w, mode)
        out[..., j] = x[..., left] * (1 - dx) + x[..., right] * dx
    return out


def _mode(align_corners: bool, half_pixel_centers: bool) -> str:
    return "align_corners" if align_corners else ("half_pixel" if half_pixel_centers else "asymmetric")


def _close(got: Tensor, want: np.ndarray, dtype) -> None:
    assert got.dtype.np_dtype == np.dtype(dtype), f"dtype {got.dtype}, expected {np.dtype(dtype)}"
    assert got.shape == want.shape
    rtol, atol = TOLS[dtype]
    np.testing.assert_allclose(got.asnumpy().astype(np.float64), want, rtol=rtol, atol=atol)


# (input shape, output size): upsampling, downsampling, a dim of 1 on either side, non-square, identity
SHAPES = [
    ((2, 3, 4, 5), (7, 9)),
    ((1, 2, 9, 7), (4, 3)),
    ((1, 1, 1, 5), (3, 8)),
    ((2, 1, 6, 4), (1, 4)),
    ((1, 2, 5, 5), (1, 1)),
    ((1, 1, 3, 8), (6, 5)),
    ((1, 2, 4, 6), (4, 6)),
    ((1, 1, 8, 8), (4, 2)),  # integer downsampling: every output on an input pixel
]
MODES = [(False, False), (True, False), (False, True)]  # (align_corners, half_pixel_centers)


# ---------------------------------------------------------------------------------------------
# MindSpore's documented examples


def test_resize_bilinear_v2_mindspore_example():
    x = Tensor(np.array([[[[1, 2, 3, 4, 5], [1, 2, 3, 4, 5]]]], np.float32))
    out = ops.ResizeBilinearV2()(x, (5, 5))
    np.testing.assert_array_equal(out.asnumpy(), np.tile(np.arange(1, 6, dtype=np.float32), (1, 1, 5, 1)))
    np.testing.assert_array_equal(ops.ResizeBilinear((5, 5))(x).asnumpy(), out.asnumpy())


def test_nn_resize_bilinear_mindspore_example():
    x = Tensor(np.array([[[[1, 2, 3, 4], [5, 6, 7, 8]]]], np.float32))
    result = nn.ResizeBilinear()(x, size=(5, 5))
    want = [
        [1.0, 1.8, 2.6, 3.4, 4.0],
        [2.6, 3.4, 4.2, 5.0, 5.6],
        [4.2, 5.0, 5.8, 6.6, 7.2],
        [5.0, 5.8, 6.6, 7.4, 8.0],
        [5.0, 5.8, 6.6, 7.4, 8.0],
    ]
    assert result.shape == (1, 1, 5, 5)
    np.testing.assert_allclose(result.asnumpy()[0, 0], want, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# Against the reference: every mode, dtype and backend


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("align_corners, half_pixel_centers", MODES)
def test_resize_bilinear_v2_matches_reference(rng, backend, dtype, align_corners, half_pixel_centers):
    op = ops.ResizeBilinearV2(align_corners, half_pixel_centers)
    mode = _mode(align_corners, half_pixel_centers)
    for shape, size in SHAPES:
        x = rng.uniform(-3, 3, shape).astype(dtype)
        _close(op(Tensor(x, device=backend), size), bilinear_ref(x, *size, mode), dtype)


@pytest.mark.parametrize("align_corners, half_pixel_centers", MODES)
def test_resize_bilinear_older_operator_matches_reference(rng, align_corners, half_pixel_centers):
    mode = _mode(align_corners, half_pixel_centers)
    for shape, size in SHAPES:
        x = rng.uniform(-3, 3, shape).astype(np.float32)
        out = ops.ResizeBilinear(size, align_corners, half_pixel_centers)(Tensor(x))
        _close(out, bilinear_ref(x, *size, mode), np.float32)


def test_size_as_list_or_int_tensor(rng):
    x = rng.standard_normal((2, 2, 3, 4)).astype(np.float32)
    want = bilinear_ref(x, 5, 2, "asymmetric")
    op = ops.ResizeBilinearV2()
    for size in ([5, 2], Tensor(np.array([5, 2], np.int32)), Tensor(np.array([5, 2], np.int64)), (np.int64(5), 2)):
        _close(op(Tensor(x), size), want, np.float32)
    assert op.infer_shape([2, 2, 3, 4], (5, 2)) == [2, 2, 5, 2]
    assert op.infer_dtype(mstype.float16) is mstype.float16


def test_from_the_operations_namespace():
    from opforge.ops import operations as P

    assert P.ResizeBilinearV2 is ops.ResizeBilinearV2 and P.ResizeBilinear is ops.ResizeBilinear


# ---------------------------------------------------------------------------------------------
# nn.ResizeBilinear


@pytest.mark.parametrize("half_pixel_centers", [False, True])
def test_nn_resize_bilinear_size_and_scale_factor(rng, half_pixel_centers):
    layer = nn.ResizeBilinear(half_pixel_centers=half_pixel_centers)
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    mode = "half_pixel" if half_pixel_centers else "asymmetric"
    _close(layer(Tensor(x), size=(6, 3)), bilinear_ref(x, 6, 3, mode), np.float32)
    _close(layer(Tensor(x), scale_factor=3), bilinear_ref(x, 12, 15, mode), np.float32)
    _close(layer(Tensor(x), (6, 3)), bilinear_ref(x, 6, 3, mode), np.float32)
    if not half_pixel_centers:
        out = layer(Tensor(x), scale_factor=2, align_corners=True)
        _close(out, bilinear_ref(x, 8, 10, "align_corners"), np.float32)


# ---------------------------------------------------------------------------------------------
# ops.interpolate and nn.Upsample: "bilinear" and "linear"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("align_corners", [None, False, True])
def test_interpolate_bilinear_matches_reference(rng, backend, align_corners):
    mode = "align_corners" if align_corners else "half_pixel"  # interpolate: False/None are half-pixel centres
    for shape, size in SHAPES:
        x = rng.uniform(-3, 3, shape).astype(np.float32)
        out = ops.interpolate(Tensor(x, device=backend), size=size, mode="bilinear", align_corners=align_corners)
        _close(out, bilinear_ref(x, *size, mode), np.float32)
    x = rng.standard_normal((1, 2, 3, 5)).astype(np.float64)
    out = ops.interpolate(
        Tensor(x, device=backend), scale_factor=(2, 1.5), mode="bilinear", align_corners=align_corners
    )
    _close(out, bilinear_ref(x, 6, 7, mode), np.float64)  # out = floor(in * scale); the ratio in / out


@pytest.mark.parametrize("align_corners", [False, True])
def test_interpolate_linear_and_upsample(rng, align_corners):
    mode = "align_corners" if align_corners else "half_pixel"
    for shape, size in [((2, 3, 5), 9), ((1, 2, 9), 4), ((1, 1, 1), 3), ((2, 1, 6), 1)]:
        x = rng.uniform(-3, 3, shape).astype(np.float32)
        want = linear_ref(x, size, mode)
        _close(ops.interpolate(Tensor(x), size=size, mode="linear", align_corners=align_corners), want, np.float32)
        _close(nn.Upsample(size=(size,), mode="linear", align_corners=align_corners)(Tensor(x)), want, np.float32)
    x = rng.standard_normal((2, 3, 4, 6)).astype(np.float32)
    up = nn.Upsample(scale_factor=2.0, mode="bilinear", align_corners=align_corners)
    _close(up(Tensor(x)), bilinear_ref(x, 8, 12, mode), np.float32)
    out = ops.upsample(Tensor(x), size=(3, 3), mode="bilinear", align_corners=align_corners)
    _close(out, bilinear_ref(x, 3, 3, mode), np.float32)


def test_interpolate_bilinear_half_precision(rng):
    x = rng.uniform(-3, 3, (1, 2, 5, 6)).astype(np.float16)
    _close(ops.interpolate(Tensor(x), size=(7, 4), mode="bilinear"), bilinear_ref(x, 7, 4, "half_pixel"), np.float16)


# ---------------------------------------------------------------------------------------------
# Gradients, jit, vmap


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("align_corners, half_pixel_centers", MODES)
def test_resize_bilinear_v2_gradient(rng, backend, align_corners, half_pixel_centers):
    op = ops.ResizeBilinearV2(align_corners, half_pixel_centers)
    for shape, size in [((1, 2, 3, 4), (5, 7)), ((2, 1, 6, 5), (4, 2)), ((1, 1, 1, 3), (2, 5))]:
        x = rng.standard_normal(shape)
        check_gradient(lambda t, op=op, size=size: op(t, size), (x,), rng, device=backend, where=f"{shape}->{size}")


def test_interpolate_linear_gradient(rng):
    x = rng.standard_normal((2, 2, 5))
    check_gradient(lambda t: ops.interpolate(t, size=8, mode="linear", align_corners=True), (x,), rng)
    x = rng.standard_normal((1, 2, 4, 3))
    check_gradient(lambda t: ops.interpolate(t, scale_factor=1.5, mode="bilinear"), (x,), rng)


def test_gradient_of_a_constant_weight_spreads_to_the_taps():
    # Upsampling 2 -> 3 with align_corners: the middle output is the mean of the two inputs.
    g = opforge.grad(lambda t: ops.ResizeBilinearV2(align_corners=True)(t, (1, 3)).sum())(Tensor(np.ones((1, 1, 1, 2))))
    np.testing.assert_allclose(g.asnumpy(), [[[[1.5, 1.5]]]])


def test_jit_equals_eager(rng):
    x = Tensor(rng.standard_normal((2, 3, 5, 4)).astype(np.float32))

    def f(t):
        a = ops.ResizeBilinearV2(half_pixel_centers=True)(t, (7, 3))
        b = ops.interpolate(t, size=(7, 3), mode="bilinear", align_corners=True)
        return a + b

    np.testing.assert_array_equal(opforge.jit(f)(x).asnumpy(), f(x).asnumpy())

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.resize = nn.ResizeBilinear()
            self.up = nn.Upsample(scale_factor=2.0, mode="bilinear")

        def construct(self, t):
            return self.up(self.resize(t, scale_factor=2))

    net = Net()
    np.testing.assert_array_equal(opforge.jit(net)(x).asnumpy(), net(x).asnumpy())
    grad = opforge.grad(lambda t: f(t).sum())
    np.testing.assert_allclose(opforge.jit(grad)(x).asnumpy(), grad(x).asnumpy(), rtol=1e-6)


def test_vmap_equals_a_loop(rng):
    xs = rng.standard_normal((3, 2, 1, 4, 5)).astype(np.float32)
    op = ops.ResizeBilinearV2(align_corners=True)
    got = opforge.vmap(lambda t: op(t, (6, 2)))(Tensor(xs))
    want = np.stack([op(Tensor(x), (6, 2)).asnumpy() for x in xs])
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# Bad inputs: the errors name the operator and the argument


def _x(shape=(1, 1, 2, 2), dtype=np.float32):
    return Tensor(np.ones(shape, dtype))


BAD_INPUTS = [
    ("align-corners-int", lambda: ops.ResizeBilinearV2(align_corners=1), TypeError, "'ResizeBilinearV2'",
     "align_corners"),
    ("half-pixel-str", lambda: ops.ResizeBilinearV2(half_pixel_centers="yes"), TypeError, "'ResizeBilinearV2'",
     "half_pixel_centers"),
    ("both-true", lambda: ops.ResizeBilinearV2(True, True), ValueError, "'ResizeBilinearV2'", "half_pixel_centers"),
    ("x-3d", lambda: ops.ResizeBilinearV2()(_x((1, 2, 2)), (3, 3)), ValueError, "'ResizeBilinearV2'",
     "'x' must be 4-D"),
    ("x-int32", lambda: ops.ResizeBilinearV2()(_x(dtype=np.int32), (3, 3)), TypeError, "'ResizeBilinearV2'", "'x'"),
    ("x-numpy", lambda: ops.ResizeBilinearV2()(np.ones((1, 1, 2, 2)), (3, 3)), TypeError, "'ResizeBilinearV2'", "'x'"),
    ("size-3", lambda: ops.ResizeBilinearV2()(_x(), (3, 3, 3)), ValueError, "'ResizeBilinearV2'", "'size'"),
    ("size-zero", lambda: ops.ResizeBilinearV2()(_x(), (0, 3)), ValueError, "'ResizeBilinearV2'", "positive"),
    ("size-float", lambda: ops.ResizeBilinearV2()(_x(), (2.5, 3)), TypeError, "'ResizeBilinearV2'", "'size'"),
    ("size-int", lambda: ops.ResizeBilinearV2()(_x(), 3), TypeError, "'ResizeBilinearV2'", "'size'"),
    ("size-2d-tensor", lambda: ops.ResizeBilinearV2()(_x(), Tensor(np.ones((1, 2), np.int32))), ValueError,
     "'ResizeBilinearV2'", "1-D"),
    ("size-float-tensor", lambda: ops.ResizeBilinearV2()(_x(), Tensor(np.ones(2, np.float32))), TypeError,
     "'ResizeBilinearV2'", "'size'"),
    ("old-size-int", lambda: ops.ResizeBilinear(5), TypeError, "'ResizeBilinear'", "'size'"),
    ("old-both-true", lambda: ops.ResizeBilinear((2, 2), True, True), ValueError, "'ResizeBilinear'", "align_corners"),
    ("old-x-float-bf16", lambda: ops.ResizeBilinear((2, 2))(Tensor(np.ones((1, 1, 2, 2)), mstype.bfloat16)),
     TypeError, "'ResizeBilinear'", "'x'"),
    ("nn-half-pixel-int", lambda: nn.ResizeBilinear(half_pixel_centers=1), TypeError, "'ResizeBilinear'",
     "half_pixel_centers"),
    ("nn-neither", lambda: nn.ResizeBilinear()(_x()), ValueError, "'ResizeBilinear'", "exactly one"),
    ("nn-both", lambda: nn.ResizeBilinear()(_x(), size=(2, 2), scale_factor=2), ValueError, "'ResizeBilinear'",
     "exactly one"),
    ("nn-scale-float", lambda: nn.ResizeBilinear()(_x(), scale_factor=1.5), TypeError, "'ResizeBilinear'",
     "scale_factor"),
    ("nn-scale-zero", lambda: nn.ResizeBilinear()(_x(), scale_factor=0), ValueError, "'ResizeBilinear'",
     "scale_factor"),
    ("nn-size-int", lambda: nn.ResizeBilinear()(_x(), size=4), TypeError, "'ResizeBilinear'", "'size'"),
    ("nn-size-3", lambda: nn.ResizeBilinear()(_x(), size=(1, 2, 3)), ValueError, "'ResizeBilinear'", "'size'"),
    ("nn-x-3d", lambda: nn.ResizeBilinear()(_x((1, 2, 2)), size=(3, 3)), ValueError, "'ResizeBilinear'", "'x'"),
    ("nn-align-and-half-pixel", lambda: nn.ResizeBilinear(True)(_x(), size=(3, 3), align_corners=True), ValueError,
     "'ResizeBilinear'", "align_corners"),
    ("interp-bicubic", lambda: ops.interpolate(_x(), size=(3, 3), mode="bicubic"), ValueError, "'interpolate'",
     "'mode'"),
    ("interp-bilinear-3d", lambda: ops.interpolate(_x((1, 1, 4)), size=3, mode="bilinear"), ValueError,
     "'interpolate'", "4-D"),
    ("interp-linear-4d", lambda: ops.interpolate(_x(), size=(3, 3), mode="linear"), ValueError, "'interpolate'", "3-D"),
    ("interp-align-int", lambda: ops.interpolate(_x(), size=(3, 3), mode="bilinear", align_corners=1), TypeError,
     "'interpolate'", "align_corners"),
    ("interp-int-input", lambda: ops.interpolate(_x(dtype=np.int32), size=(3, 3), mode="bilinear"), TypeError,
     "'interpolate'", "'input'"),
    ("interp-size-0", lambda: ops.interpolate(_x(), size=(0, 3), mode="bilinear"), ValueError, "'interpolate'",
     "positive"),
    ("upsample-bicubic", lambda: nn.Upsample(size=2, mode="bicubic"), ValueError, "'Upsample'", "'mode'"),
]  # fmt: skip


@pytest.mark.parametrize("call, exc, op, match", [pytest.param(*c[1:], id=c[0]) for c in BAD_INPUTS])
def test_bad_inputs_name_the_operator_and_the_argument(call, exc, op, match):
    with pytest.raises(exc) as info:
        call()
    message = str(info.value)
    assert op in message, message
    assert match in message, message
