"""Image layers (MindSpore's ``nn.PixelShuffle``, ``nn.Upsample`` and ``nn.ResizeBilinear``), built on the
functional forms ``ops.pixel_shuffle`` (Reshape and Transpose), ``ops.interpolate`` (nearest: a Gather per
spatial dim; linear and bilinear: two Gathers, Mul and Add per dim) and ``ops.ResizeBilinearV2``."""

from __future__ import annotations

from opforge import ops
from opforge.nn.cell import Cell
from opforge.ops import resize
from opforge.primitives.validator import Validator as validator

__all__ = ["PixelShuffle", "Upsample", "ResizeBilinear"]

_UPSAMPLE_MODES = ("nearest", "linear", "bilinear")


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
    recompute_scale_factor=None)``: ``ops.interpolate`` with these arguments. opforge implements the modes
    "nearest", "linear" ([N, C, W]) and "bilinear" ([N, C, H, W]; ``align_corners`` False or None: half-pixel
    centres); another mode raises ValueError when the layer is built."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None):
        super().__init__()
        if mode not in _UPSAMPLE_MODES:
            raise ValueError(
                f"For 'Upsample', the 'mode' must be one of {list(_UPSAMPLE_MODES)} (the modes opforge implements), "
                f"but got {mode!r}."
            )
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def construct(self, x):
        return ops.interpolate(
            x, self.size, self.scale_factor, self.mode, self.align_corners, self.recompute_scale_factor
        )

    def extend_repr(self) -> str:
        return f"size={self.size}, scale_factor={self.scale_factor}, mode={self.mode}"


class ResizeBilinear(Cell):
    """MindSpore's ``nn.ResizeBilinear(half_pixel_centers=False)`` (deprecated there since 2.0 for
    ``ops.ResizeBilinearV2`` and ``ops.interpolate``): ``construct(x, size=None, scale_factor=None,
    align_corners=False)`` resizes ``x`` [N, C, H, W] to ``size`` (a tuple or list of 2 positive ints) or to
    [N, C, H * scale_factor, W * scale_factor] (``scale_factor`` a positive int), exactly one of the two given:
    ``ops.ResizeBilinearV2(align_corners, half_pixel_centers)(x, size)`` (its formula; float16, float32 and
    float64 on the CPU and the GPU; ``half_pixel_centers`` and ``align_corners`` both True is a ValueError)."""

    def __init__(self, half_pixel_centers=False):
        super().__init__()
        self.half_pixel_centers = validator.check_value_type(
            "half_pixel_centers", half_pixel_centers, [bool], "ResizeBilinear"
        )

    def construct(self, x, size=None, scale_factor=None, align_corners=False):
        name = "ResizeBilinear"
        resize.check_float_input(name, "x", x, 4)
        validator.check_value_type("align_corners", align_corners, [bool], name)
        if align_corners and self.half_pixel_centers:
            raise ValueError(
                f"For '{name}', the 'align_corners' and 'half_pixel_centers' cannot both be True: if "
                f"half_pixel_centers is True, align_corners must be False."
            )
        if (size is None) == (scale_factor is None):
            raise ValueError(
                f"For '{name}', exactly one of 'size' and 'scale_factor' must be given, but got size={size!r} and "
                f"scale_factor={scale_factor!r}."
            )
        if size is not None:
            if not isinstance(size, (tuple, list)):
                raise TypeError(
                    f"For '{name}', the 'size' must be a tuple or list of 2 ints, but got {type(size).__name__}."
                )
        else:
            validator.check_value_type("scale_factor", scale_factor, [int], name)
            if scale_factor < 1:
                raise ValueError(f"For '{name}', the 'scale_factor' must be a positive int, but got {scale_factor}.")
            size = (x.shape[2] * scale_factor, x.shape[3] * scale_factor)
        op = ops.ResizeBilinearV2(align_corners, self.half_pixel_centers)
        op.name = name  # its errors name the layer
        return op(x, size)

    def extend_repr(self) -> str:
        return f"half_pixel_centers={self.half_pixel_centers}"
