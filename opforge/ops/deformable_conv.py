r"""Deformable convolution from primitives: MindSpore's ``ops.deformable_conv2d`` and its first half, the
``DeformableOffsets`` operator (DCNv2: sampling positions shifted by learned offsets, weighted by a mask).

``DeformableOffsets`` gathers, for every output pixel ``(i, j)`` and kernel tap ``(p, q)``, the input at the
shifted position, channel by channel:

.. math:: y[n, c, i k_h + p, j k_w + q] = m \cdot \mathrm{bilinear}(x[n, c],\;
          i s_h + p d_h - pad_{top} + \Delta y,\; j s_w + q d_w - pad_{left} + \Delta x)

where ``(Δx, Δy, m)`` are ``offsets[n, (0|1|2) * G K + g K + p k_w + q, i, j]`` (``K = k_h k_w``, ``g`` the
deformable group of channel ``c``: ``G`` groups of ``C / G`` channels; x offsets first, then y offsets, then the
mask, as MindSpore lays them out). Bilinear interpolation reads zero outside the input (each corner outside
contributes nothing). ``deformable_conv2d`` convolves that [N, C, H_out k_h, W_out k_w] tensor with the weight at
stride ``(k_h, k_w)`` (each output pixel sees exactly its own taps) and adds the bias.

The sampling is opforge/ops/sampling.py's corner gathers (GatherNd, Mul, Add) and the convolution the Conv2D
primitive, so gradients reach the input, the offsets, the mask, the weight and the bias, and ``jit`` and both
backends come with those primitives. Supported dtypes: float16 and float32 (MindSpore's), float64.
"""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge.ops import functional as F
from opforge.ops.sampling import interpolate, linear_corners
from opforge.primitives.validator import Validator as validator
from opforge.tensor import Tensor

__all__ = ["DeformableOffsets", "deformable_conv2d"]

_FLOATS = (mstype.float16, mstype.float32, mstype.float64)


def _ints(op: str, arg: str, value, n: int, batch_channel_ones: bool = False) -> tuple:
    if (
        not isinstance(value, (tuple, list))
        or len(value) != n
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise TypeError(f"For '{op}', the '{arg}' must be a tuple of {n} ints, but got {value!r}.")
    if batch_channel_ones and (value[0] != 1 or value[1] != 1):
        raise ValueError(f"For '{op}', the '{arg}' must be 1 along N and C (its first two values), but got {value}.")
    return tuple(value)


class DeformableOffsets:
    """MindSpore's ``ops.operations.nn_ops.DeformableOffsets(strides, pads, ksize, dilations=(1, 1, 1, 1),
    data_format="NCHW", deformable_groups=1, modulated=True)``: ``(x, offsets)`` to the sampled taps [N, C,
    H_out * k_h, W_out * k_w] (the module's docstring gives the formula). ``strides`` and ``dilations`` are
    4 ints (1 along N and C), ``pads`` (top, bottom, left, right), ``ksize`` (k_h, k_w); only NCHW and the
    modulated form (with a mask), as MindSpore supports."""

    def __init__(self, strides, pads, ksize, dilations=(1, 1, 1, 1), data_format="NCHW", deformable_groups=1,
                 modulated=True):  # fmt: skip
        op = "DeformableOffsets"
        self.strides = _ints(op, "strides", strides, 4, batch_channel_ones=True)
        self.pads = _ints(op, "pads", pads, 4)
        self.ksize = _ints(op, "ksize", ksize, 2)
        self.dilations = _ints(op, "dilations", dilations, 4, batch_channel_ones=True)
        if min(self.strides) < 1 or min(self.dilations) < 1 or min(self.ksize) < 1 or min(self.pads) < 0:
            raise ValueError(
                f"For '{op}', 'strides', 'dilations' and 'ksize' must be positive and 'pads' non-negative, but got "
                f"{self.strides}, {self.dilations}, {self.ksize}, {self.pads}."
            )
        validator.check_value_type("data_format", data_format, [str], op)
        if data_format != "NCHW":
            raise ValueError(f"For '{op}', the 'data_format' must be 'NCHW', but got {data_format!r}.")
        validator.check_value_type("deformable_groups", deformable_groups, [int], op)
        if deformable_groups < 1:
            raise ValueError(f"For '{op}', the 'deformable_groups' must be positive, but got {deformable_groups}.")
        validator.check_value_type("modulated", modulated, [bool], op)
        if not modulated:
            raise ValueError(f"For '{op}', the 'modulated' must be True (the only form MindSpore supports).")
        self.deformable_groups = deformable_groups

    def output_size(self, height: int, width: int) -> tuple:
        (kh, kw), (_, _, sh, sw), (_, _, dh, dw) = self.ksize, self.strides, self.dilations
        top, bottom, left, right = self.pads
        return (height + top + bottom - dh * (kh - 1) - 1) // sh + 1, (
            width + left + right - dw * (kw - 1) - 1
        ) // sw + 1

    def _check(self, x, offsets) -> tuple:
        op = "DeformableOffsets"
        for arg, t in (("x", x), ("offsets", offsets)):
            if not isinstance(t, Tensor):
                raise TypeError(f"For '{op}', the '{arg}' must be a Tensor, but got {type(t).__name__}.")
            if t.dtype not in _FLOATS:
                raise TypeError(f"For '{op}', the '{arg}' must be float16, float32 or float64, but got {t.dtype}.")
            if t.ndim != 4:
                raise ValueError(f"For '{op}', the '{arg}' must be 4-D (NCHW), but got shape {list(t.shape)}.")
        if offsets.dtype != x.dtype:
            raise TypeError(
                f"For '{op}', the 'offsets' must have the dtype of 'x' ({x.dtype}), but got {offsets.dtype}."
            )
        n, c, height, width = x.shape
        if c % self.deformable_groups:
            raise ValueError(
                f"For '{op}', the channels of 'x' ({c}) must divide by 'deformable_groups' ({self.deformable_groups})."
            )
        out_h, out_w = self.output_size(height, width)
        if out_h < 1 or out_w < 1:
            raise ValueError(f"For '{op}', the kernel does not fit the padded input {list(x.shape)}.")
        want = (n, 3 * self.deformable_groups * self.ksize[0] * self.ksize[1], out_h, out_w)
        if tuple(offsets.shape) != want:
            raise ValueError(f"For '{op}', the 'offsets' must have shape {list(want)}, but got {list(offsets.shape)}.")
        return n, c, height, width, out_h, out_w

    def __call__(self, x, offsets) -> Tensor:
        n, c, height, width, out_h, out_w = self._check(x, offsets)
        groups, (kh, kw) = self.deformable_groups, self.ksize
        (_, _, sh, sw), (_, _, dh, dw) = self.strides, self.dilations
        top, _, left, _ = self.pads
        # the sample grid [N, G, H_out, k_h, W_out, k_w]: rows i * k_h + p and columns j * k_w + q of the output
        parts = F.transpose(F.reshape(offsets, (n, 3, groups, kh, kw, out_h, out_w)), (1, 0, 2, 5, 3, 6, 4))
        dx, dy, mask = parts[0], parts[1], parts[2]
        base_y = np.arange(out_h)[:, None] * sh + np.arange(kh)[None, :] * dh - top
        base_x = np.arange(out_w)[:, None] * sw + np.arange(kw)[None, :] * dw - left
        y = dy + Tensor(base_y.reshape(1, 1, out_h, kh, 1, 1), x.dtype, device=x.device)
        xs = dx + Tensor(base_x.reshape(1, 1, 1, 1, out_w, kw), x.dtype, device=x.device)
        cg = c // groups
        source = F.reshape(F.transpose(F.reshape(x, (n, groups, cg, height, width)), (0, 1, 3, 4, 2)),
                           (n * groups, height, width, cg))  # fmt: skip
        batch = Tensor(np.arange(n * groups, dtype=np.int32).reshape(n, groups, 1, 1, 1, 1), device=x.device)
        grid = (n, groups, out_h, kh, out_w, kw)
        taps = interpolate(source, batch, [linear_corners(y, height), linear_corners(xs, width)], grid)
        taps = taps * F.expand_dims(mask, -1)  # [N, G, H_out, k_h, W_out, k_w, C / G]
        taps = F.transpose(taps, (0, 1, 6, 2, 3, 4, 5))
        return F.reshape(taps, (n, c, out_h * kh, out_w * kw))


def deformable_conv2d(x, weight, offsets, kernel_size, strides, padding, bias=None, dilations=(1, 1, 1, 1),
                      groups=1, deformable_groups=1, modulated=True) -> Tensor:  # fmt: skip
    """MindSpore's ``ops.deformable_conv2d``: the deformable 2-D convolution (DCNv2) of ``x`` [N, C_in, H, W] with
    ``weight`` [C_out, C_in / groups, k_h, k_w], sampling at the positions ``offsets`` [N, 3 * deformable_groups *
    k_h * k_w, H_out, W_out] shifts (x offsets, y offsets, then the mask), plus ``bias`` [C_out]. ``kernel_size``
    (k_h, k_w); ``strides`` and ``dilations`` 4 ints (1 along N and C); ``padding`` (top, bottom, left, right).
    Returns [N, C_out, H_out, W_out]. float16, float32 (and float64) on the CPU and the GPU."""
    op = "deformable_conv2d"
    _ints(op, "strides", strides, 4, batch_channel_ones=True)
    _ints(op, "padding", padding, 4)
    _ints(op, "dilations", dilations, 4, batch_channel_ones=True)
    if not isinstance(x, Tensor) or x.ndim != 4:
        raise TypeError(f"For '{op}', the 'x' must be a 4-D Tensor, but got {x!r}.")
    if not isinstance(weight, Tensor) or weight.ndim != 4:
        raise TypeError(f"For '{op}', the 'weight' must be a 4-D Tensor, but got {weight!r}.")
    kernel_size = _ints(op, "kernel_size", kernel_size, 2)
    if tuple(weight.shape[2:]) != kernel_size:
        raise ValueError(
            f"For '{op}', the 'weight' must have the kernel size {list(kernel_size)} in its last two dims, but got "
            f"shape {list(weight.shape)}."
        )
    validator.check_value_type("groups", groups, [int], op)
    if groups < 1 or x.shape[1] % groups or weight.shape[1] * groups != x.shape[1]:
        raise ValueError(
            f"For '{op}', the 'weight' must have C_in / groups = {x.shape[1]} / {groups} input channels, but got "
            f"shape {list(weight.shape)}."
        )
    sampler = DeformableOffsets(strides, padding, kernel_size, dilations, "NCHW", deformable_groups, modulated)
    taps = sampler(x, offsets)
    return F.conv2d(taps, weight, bias, stride=kernel_size, pad_mode="valid", groups=groups)
