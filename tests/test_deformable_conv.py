"""ops.deformable_conv2d and DeformableOffsets (opforge/ops/deformable_conv.py) against a loop-by-loop NumPy
transcription of MindSpore's DeformableOffsets kernel (the tap at each shifted position, bilinear with zero outside,
times the mask) followed by a direct convolution of the taps; against plain conv2d when the offsets are zero and
the mask one; gradients (float64) against central differences; jit; the GPU (the host emulation of the CUDA
sources without a GPU); bad arguments."""

import numpy as np
import pytest

import opforge
from opforge import Tensor, ops
from opforge.ops.operations import DeformableOffsets
from opforge.testing import numeric_grad

# -- NumPy reference ------------------------------------------------------------------------------------------------


def _bilinear(img, y, x):
    """MindSpore's DeformableBilinear: 0 past (-1, H) x (-1, W); each corner outside reads 0."""
    h, w = img.shape
    if y <= -1 or y >= h or x <= -1 or x >= w:
        return 0.0
    top, left = int(np.floor(y)), int(np.floor(x))
    t, lw = y - top, x - left
    total = 0.0
    for yy, wy in ((top, 1 - t), (top + 1, t)):
        for xx, wx in ((left, 1 - lw), (left + 1, lw)):
            if 0 <= yy < h and 0 <= xx < w:
                total += wy * wx * img[yy, xx]
    return total


def _offsets_ref(x, offsets, ksize, strides, pads, dilations, groups):
    n, c, h, w = x.shape
    kh, kw = ksize
    out_h, out_w = offsets.shape[2:]
    off = offsets.reshape(n, 3, groups, kh, kw, out_h, out_w)
    out = np.zeros((n, c, out_h * kh, out_w * kw))
    for b in range(n):
        for ch in range(c):
            g = ch // (c // groups)
            for i in range(out_h):
                for j in range(out_w):
                    for p in range(kh):
                        for q in range(kw):
                            dx, dy, m = off[b, :, g, p, q, i, j]
                            y = i * strides[2] + p * dilations[2] - pads[0] + dy
                            xx = j * strides[3] + q * dilations[3] - pads[2] + dx
                            out[b, ch, i * kh + p, j * kw + q] = m * _bilinear(x[b, ch], y, xx)
    return out


def _conv_taps_ref(taps, weight, bias, groups):
    n, c = taps.shape[:2]
    o, cg, kh, kw = weight.shape
    out_h, out_w = taps.shape[2] // kh, taps.shape[3] // kw
    blocks = taps.reshape(n, c, out_h, kh, out_w, kw)
    out = np.zeros((n, o, out_h, out_w))
    og = o // groups
    for g in range(groups):
        part = blocks[:, g * cg : (g + 1) * cg]
        out[:, g * og : (g + 1) * og] = np.einsum("ncipjq,ocpq->noij", part, weight[g * og : (g + 1) * og])
    return out if bias is None else out + bias[None, :, None, None]


CASES = [
    # ksize, strides, pads, dilations, deformable_groups, groups, x shape
    ((3, 3), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), 1, 1, (2, 4, 5, 6)),
    ((2, 3), (1, 1, 2, 1), (1, 0, 2, 1), (1, 1, 2, 1), 2, 2, (1, 4, 7, 5)),
    ((1, 1), (1, 1, 1, 2), (0, 0, 0, 0), (1, 1, 1, 1), 4, 1, (1, 4, 3, 4)),
]


def _inputs(rng, case, dtype=np.float64, spread=2.5):
    ksize, strides, pads, dilations, dg, groups, shape = case
    sampler = DeformableOffsets(strides, pads, ksize, dilations, "NCHW", dg, True)
    out_h, out_w = sampler.output_size(*shape[2:])
    x = rng.standard_normal(shape).astype(dtype)
    offsets = rng.uniform(-spread, spread, (shape[0], 3 * dg * ksize[0] * ksize[1], out_h, out_w)).astype(dtype)
    weight = rng.standard_normal((6, shape[1] // groups, *ksize)).astype(dtype)
    bias = rng.standard_normal(6).astype(dtype)
    return sampler, x, offsets, weight, bias


@pytest.mark.parametrize("case", CASES)
def test_offsets_and_convolution_match_the_kernel_transcription(case):
    rng = np.random.default_rng(0)
    sampler, x, offsets, weight, bias = _inputs(rng, case)
    ksize, strides, pads, dilations, dg, groups, _ = case
    taps = _offsets_ref(x, offsets, ksize, strides, pads, dilations, dg)
    np.testing.assert_allclose(sampler(Tensor(x), Tensor(offsets)).asnumpy(), taps, rtol=1e-12, atol=1e-12)
    got = ops.deformable_conv2d(Tensor(x), Tensor(weight), Tensor(offsets), ksize, strides, pads, Tensor(bias),
                                dilations, groups, dg)  # fmt: skip
    np.testing.assert_allclose(got.asnumpy(), _conv_taps_ref(taps, weight, bias, groups), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-5), (np.float16, 2e-2)])
def test_float32_and_float16(dtype, tol):
    rng = np.random.default_rng(1)
    case = CASES[1]
    sampler, x, offsets, weight, bias = _inputs(rng, case, dtype)
    ksize, strides, pads, dilations, dg, groups, _ = case
    wide = [a.astype(np.float64) for a in (x, offsets, weight, bias)]
    taps = _offsets_ref(wide[0], wide[1], ksize, strides, pads, dilations, dg)
    want = _conv_taps_ref(taps, wide[2], wide[3], groups)
    got = ops.deformable_conv2d(Tensor(x), Tensor(weight), Tensor(offsets), ksize, strides, pads, Tensor(bias),
                                dilations, groups, dg)  # fmt: skip
    assert got.dtype == opforge.dtype.nptype_to_dtype(dtype)
    np.testing.assert_allclose(got.asnumpy().astype(np.float64), want, rtol=tol, atol=tol * np.abs(want).max())


def test_zero_offsets_and_unit_mask_are_a_plain_convolution():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 6, 7)).astype(np.float32)
    weight = rng.standard_normal((5, 3, 3, 3)).astype(np.float32)
    offsets = np.zeros((2, 27, 3, 4), np.float32)
    offsets[:, 18:] = 1.0  # the mask
    got = ops.deformable_conv2d(Tensor(x), Tensor(weight), Tensor(offsets), (3, 3), (1, 1, 2, 2), (1, 1, 1, 1))
    plain = ops.conv2d(Tensor(x), Tensor(weight), stride=2, pad_mode="pad", padding=1)
    np.testing.assert_allclose(got.asnumpy(), plain.asnumpy(), rtol=1e-5, atol=1e-5)


def test_gradients_reach_input_offsets_weight_and_bias():
    rng = np.random.default_rng(3)
    case = CASES[1]
    _, x, offsets, weight, bias = _inputs(rng, case, spread=1.3)
    ksize, strides, pads, dilations, dg, groups, _ = case

    def f(a, o, wt, b):
        y = ops.deformable_conv2d(a, o, wt, ksize, strides, pads, b, dilations, groups, dg)
        return (y * y).sum()

    def loss(a, o, wt, b):
        return f(a, wt, o, b)

    arrays = [x, offsets, weight, bias]
    grads = opforge.grad(loss, grad_position=(0, 1, 2, 3))(*(Tensor(a) for a in arrays))
    for k, g in enumerate(grads):

        def at(v, k=k):
            args = [Tensor(v if i == k else a) for i, a in enumerate(arrays)]
            return float(loss(*args).asnumpy())

        np.testing.assert_allclose(g.asnumpy(), numeric_grad(at, arrays[k]), rtol=1e-5, atol=1e-6)


def test_jit_and_the_gpu_match_eager():
    rng = np.random.default_rng(4)
    case = CASES[0]
    _, x, offsets, weight, bias = (a.astype(np.float32) if isinstance(a, np.ndarray) else a
                                   for a in _inputs(rng, case))  # fmt: skip
    ksize, strides, pads, dilations, dg, groups, _ = case

    def f(a, o, wt, b):
        return ops.deformable_conv2d(a, wt, o, ksize, strides, pads, b, dilations, groups, dg)

    eager = f(Tensor(x), Tensor(offsets), Tensor(weight), Tensor(bias)).asnumpy()
    jitted = opforge.jit(f)(Tensor(x), Tensor(offsets), Tensor(weight), Tensor(bias)).asnumpy()
    np.testing.assert_allclose(jitted, eager, rtol=1e-6, atol=1e-6)
    on_gpu = f(*(Tensor(a, device="GPU") for a in (x, offsets, weight, bias)))
    assert on_gpu.device == "GPU"
    np.testing.assert_allclose(on_gpu.asnumpy(), eager, rtol=1e-5, atol=1e-5)


def test_bad_arguments_name_the_argument():
    x = Tensor(np.zeros((1, 2, 4, 4), np.float32))
    w = Tensor(np.zeros((2, 2, 3, 3), np.float32))
    good = Tensor(np.zeros((1, 27, 4, 4), np.float32))
    s, p = (1, 1, 1, 1), (1, 1, 1, 1)
    with pytest.raises(ValueError, match="'offsets' must have shape \\[1, 27, 4, 4\\]"):
        ops.deformable_conv2d(x, w, Tensor(np.zeros((1, 18, 4, 4), np.float32)), (3, 3), s, p)
    with pytest.raises(ValueError, match="'modulated' must be True"):
        ops.deformable_conv2d(x, w, good, (3, 3), s, p, modulated=False)
    with pytest.raises(ValueError, match="'strides' must be 1 along N and C"):
        ops.deformable_conv2d(x, w, good, (3, 3), (2, 1, 1, 1), p)
    with pytest.raises(TypeError, match="'padding' must be a tuple of 4 ints"):
        ops.deformable_conv2d(x, w, good, (3, 3), s, (1, 1))
    with pytest.raises(TypeError, match="'offsets' must have the dtype of 'x'"):
        ops.deformable_conv2d(x, w, Tensor(np.zeros((1, 27, 4, 4))), (3, 3), s, p)
    with pytest.raises(ValueError, match="kernel size \\[2, 2\\]"):
        ops.deformable_conv2d(x, w, good, (2, 2), s, p)
    with pytest.raises(ValueError, match="must divide by 'deformable_groups'"):
        ops.deformable_conv2d(x, w, Tensor(np.zeros((1, 81, 4, 4), np.float32)), (3, 3), s, p, deformable_groups=3)
    with pytest.raises(TypeError, match="'x' must be float16, float32 or float64"):
        DeformableOffsets(s, p, (3, 3))(Tensor(np.zeros((1, 2, 4, 4), np.int32)), good)
    with pytest.raises(ValueError, match="'data_format' must be 'NCHW'"):
        DeformableOffsets(s, p, (3, 3), data_format="NHWC")


class ModulatedDeformConv(opforge.nn.Conv2d):
    """The DBNet backbone's modulated deformable convolution, as the model zoo writes it: a zero-initialised
    Conv2d predicts the offsets and the mask logits (split, sigmoid, concatenated back)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=1):
        super().__init__(in_channels, out_channels, kernel_size, stride=stride, pad_mode="pad", padding=padding)
        self.de_stride, self.de_padding = (1, 1, stride, stride), (padding,) * 4
        self.conv_offset = opforge.nn.Conv2d(in_channels, 3 * self.kernel_size[0] * self.kernel_size[1],
                                             self.kernel_size, stride=stride, pad_mode="pad", padding=padding,
                                             has_bias=True, weight_init="Zero")  # fmt: skip

    def construct(self, x):
        o1, o2, mask = ops.split(self.conv_offset(x), axis=1, output_num=3)
        offset = ops.concat((o1, o2, ops.Sigmoid()(mask)), axis=1)
        return ops.deformable_conv2d(x, self.weight, offset, self.kernel_size, self.de_stride, self.de_padding,
                                     bias=self.bias, deformable_groups=1, modulated=True)  # fmt: skip


def test_the_zoo_dbnet_layer_starts_as_half_a_convolution_and_trains_its_offsets():
    rng = np.random.default_rng(5)
    layer = ModulatedDeformConv(3, 4, 3, stride=2)
    x = Tensor(rng.standard_normal((2, 3, 9, 8)).astype(np.float32))
    plain = ops.conv2d(x, layer.weight, stride=2, pad_mode="pad", padding=1)
    # zero offsets and a mask of sigmoid(0) = 0.5 at initialisation
    np.testing.assert_allclose(layer(x).asnumpy(), 0.5 * plain.asnumpy(), rtol=1e-5, atol=1e-5)
    target = Tensor(rng.standard_normal(plain.shape).astype(np.float32))
    step = opforge.nn.TrainOneStepCell(opforge.nn.WithLossCell(layer, opforge.nn.MSELoss()),
                                       opforge.nn.Momentum(layer.trainable_params(), 0.05, 0.9))  # fmt: skip
    losses = [float(step(x, target).asnumpy()) for _ in range(15)]
    assert losses[-1] < 0.8 * losses[0]
    assert np.abs(layer.conv_offset.weight.asnumpy()).max() > 0  # the offsets' predictor learned
