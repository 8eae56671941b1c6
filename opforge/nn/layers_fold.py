"""``nn.Fold`` (MindSpore's ``mint.nn.Fold``, PyTorch's ``nn.Fold``): ``ops.fold`` as a cell, the inverse layout of
``ops.unfold`` (overlapping windows summed). See opforge/ops/frontend_fold.py."""

from __future__ import annotations

from opforge.nn.cell import Cell
from opforge.ops import functional as F
from opforge.ops.frontend_fold import fold
from opforge.tensor import Tensor

__all__ = ["Fold"]


class Fold(Cell):
    r"""``Fold(output_size, kernel_size, dilation=1, padding=0, stride=1)``: ``cell(input)`` is
    ``ops.fold(input, output_size, kernel_size, dilation, padding, stride)``, the sliding-window columns
    ``input`` [N, C * kh * kw, L] summed into [N, C, H, W] (or unbatched [C * kh * kw, L] into [C, H, W]):

    .. math:: out[n, c, y, x] = \sum_{i, j, r, s:\ r s_h + i d_h - p_h = y,\ s s_w + j d_w - p_w = x}
              input[n, c k_h k_w + i k_w + j, r W_{out} + s]

    ``output_size`` (H, W): 2 ints, an int, or a 1-D int Tensor of 2 elements; the others an int or 1 or 2 ints.
    dtypes: float16, float32, float64, complex64, complex128. ``Fold`` of ``ops.unfold`` of an image with
    non-overlapping windows gives the image back."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def construct(self, input):  # noqa: A002 (MindSpore's name)
        args = (self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)
        if isinstance(input, Tensor) and input.ndim == 2:  # unbatched columns
            return F.squeeze(fold(F.expand_dims(input, 0), *args), 0)
        return fold(input, *args)

    def extend_repr(self) -> str:
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
            f"padding={self.padding}, stride={self.stride}"
        )
