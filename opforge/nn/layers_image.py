"""Image layers (MindSpore's ``nn.PixelShuffle`` and ``nn.Upsample``), built on the functional forms
``ops.pixel_shuffle`` (Reshape and Transpose) and ``ops.interpolate`` (nearest: a Gather per spatial dim)."""

from __future__ import annotations

from opforge import ops
from opforge.nn.cell import Cell

__all__ = ["PixelShuffle", "Upsample"]


class PixelShuffle(Cell):
    """Rearranges [*, C * r * r, H, W] into [*, C, H * r, W * r] with r = ``upscale_factor`` (MindSpore's
    ``nn.PixelShuffle``): ``out[..., c, h * r + i, w * r + j] = x[..., c * r * r + i * r + j, h, w]``."""

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def construct(self, input):  # noqa: A002 (MindSpore's name)
        return ops.pixel_shuffle(input, self.upscale_factor)

    def extend_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class Upsample(Cell):
    """MindSpore's ``nn.Upsample(size=None, scale_factor=None, mode="nearest", align_corners=None,
    recompute_scale_factor=None)``: ``ops.interpolate`` with these arguments (opforge implements
    ``mode="nearest"``; another mode raises ValueError when the layer is built)."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None):
        super().__init__()
        if mode != "nearest":
            raise ValueError(f"For 'Upsample', only mode 'nearest' is implemented in opforge, but got {mode!r}.")
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def construct(self, x):
        return ops.interpolate(
            x, self.size, self.scale_factor, self.mode, self.align_corners, self.recompute_scale_factor
        )

    def extend_repr(self) -> str:
        return f"size={self.size}, scale_factor={self.scale_factor}, mode={self.mode}"
