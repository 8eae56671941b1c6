"""MindSpore's ``ops.ResizeNearestNeighbor``, composed of Gather: the source index of every output row and column
depends on the static shapes only, so it is computed here on the host and the data moves through one Gather per
resized dim (its bprop scatters the gradient back; vmap, ``jit`` and both backends follow)."""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge.ops.frontend_ops import _resize_size
from opforge.ops.functional import _nearest_taps
from opforge.primitives import array_ops
from opforge.primitives.validator import Validator as validator
from opforge.tensor import Tensor

__all__ = ["ResizeNearestNeighbor"]

_gather = array_ops.Gather()
_DTYPES = (
    mstype.float16, mstype.float32, mstype.float64, mstype.int8, mstype.int16, mstype.int32, mstype.int64,
    mstype.uint8, mstype.uint16, mstype.bool_,
)  # fmt: skip


class ResizeNearestNeighbor:
    r"""``ResizeNearestNeighbor(size, align_corners=False, half_pixel_centers=False)(input_x)``: MindSpore's
    nearest-neighbour resize of ``input_x`` [N, C, H, W] to [N, C, new_height, new_width], ``size`` =
    (new_height, new_width) a tuple or list of 2 positive ints.

    Per dim of ``n`` inputs and ``m`` outputs, output ``d`` copies input
    :math:`\min(\lfloor d \cdot n / m \rfloor, n - 1)`; with ``align_corners`` (m > 1),
    :math:`\operatorname{round}(d \cdot (n - 1) / (m - 1))` (half away from zero); with ``half_pixel_centers``,
    ``d + 0.5`` in place of ``d`` (both True is a ValueError, as MindSpore's).

    Not a kernel of its own: a Gather per resized dim with indices computed on the host from the static shapes,
    so it is differentiable (the gradient of the float dtypes sums over the outputs that copied an input) and
    runs under vmap and ``jit``. dtypes (CPU, GPU): float16, float32, float64, int8, int16, int32, int64, uint8,
    uint16, bool; the output has ``input_x``'s dtype.
    """

    def __init__(self, size, align_corners=False, half_pixel_centers=False):
        self.name = "ResizeNearestNeighbor"
        if not isinstance(size, (tuple, list)):
            raise TypeError(
                f"For '{self.name}', the 'size' must be a tuple or list of 2 ints, but got {type(size).__name__}."
            )
        self.size = _resize_size(self.name, size)
        validator.check_value_type("align_corners", align_corners, [bool], self.name)
        validator.check_value_type("half_pixel_centers", half_pixel_centers, [bool], self.name)
        if align_corners and half_pixel_centers:
            raise ValueError(
                f"For '{self.name}', the 'align_corners' and 'half_pixel_centers' cannot both be True: "
                f"if half_pixel_centers is True, align_corners must be False."
            )
        self.align_corners = align_corners
        self.half_pixel_centers = half_pixel_centers

    def __call__(self, input_x):
        if not isinstance(input_x, Tensor):
            raise TypeError(f"For '{self.name}', the 'input_x' must be a Tensor, but got {type(input_x).__name__}.")
        validator.check_tensor_dtype_valid("input_x", input_x.dtype, _DTYPES, self.name)
        if input_x.ndim != 4:
            raise ValueError(
                f"For '{self.name}', the 'input_x' must be 4-D (N, C, H, W), but got shape {list(input_x.shape)}."
            )
        if any(d <= 0 for d in input_x.shape[2:]):
            raise ValueError(
                f"For '{self.name}', the H and W of 'input_x' must be known and non-empty, "
                f"but got shape {list(input_x.shape)}."
            )
        out = input_x
        for axis, n, m in zip((2, 3), input_x.shape[2:], self.size):
            taps = _nearest_taps(n, m, self.align_corners, self.half_pixel_centers)
            if m != n or (taps != np.arange(n)).any():  # the identity needs no Gather
                out = _gather(out, Tensor(taps, device=input_x.device), axis)
        return out

    def __repr__(self) -> str:
        return (
            f"{self.name}<size={self.size}, align_corners={self.align_corners}, "
            f"half_pixel_centers={self.half_pixel_centers}>"
        )
