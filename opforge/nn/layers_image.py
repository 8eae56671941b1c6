"""Image layers (MindSpore's ``nn.PixelShuffle``, ``nn.Upsample``, ``nn.ResizeBilinear`` and ``nn.CentralCrop``),
built on the
functional forms ``ops.pixel_shuffle`` (Reshape and Transpose), ``ops.interpolate`` (nearest: a Gather per
spatial dim; linear and bilinear: two Gathers, Mul and Add per dim) and ``ops.ResizeBilinearV2``, and ``ops.Slice``."""

from __future__ import annotations

from opforge import ops
from opforge.nn.cell import Cell
from opforge.ops import resize
from opforge.primitives.validator import Validator as validator

__all__ = ["PixelShuffle", "Upsample", "ResizeBilinear", "CentralCrop"]

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


class PixelUnshuffle(Cell):
    """MindSpore's ``nn.PixelUnshuffle(downscale_factor)``, the inverse of ``PixelShuffle``: [*, C, H * r, W * r]
    to [*, C * r * r, H, W] with r = ``downscale_factor``,
    ``out[..., c * r * r + i * r + j, h, w] = x[..., c, h * r + i, w * r + j]`` (Reshape and Transpose). Every
    dtype."""

    def __init__(self, downscale_factor):
        super().__init__()
        if isinstance(downscale_factor, bool) or not isinstance(downscale_factor, int) or downscale_factor < 1:
            raise ValueError(
                f"For 'PixelUnshuffle', the 'downscale_factor' must be a positive int, but got {downscale_factor!r}."
            )
        self.downscale_factor = downscale_factor

    def construct(self, input):  # noqa: A002 (MindSpore's name)
        r, shape = self.downscale_factor, tuple(input.shape)
        if len(shape) < 3 or shape[-2] % r or shape[-1] % r:
            raise ValueError(
                f"For 'PixelUnshuffle', the input must have rank 3 or more and H, W (dims -2, -1) divisible by "
                f"downscale_factor={r}, but got shape {list(shape)}."
            )
        *lead, c, h, w = shape
        k = len(lead)
        x = ops.reshape(input, (*lead, c, h // r, r, w // r, r))
        x = ops.transpose(x, (*range(k), k, k + 2, k + 4, k + 1, k + 3))
        return ops.reshape(x, (*lead, c * r * r, h // r, w // r))

    def extend_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


__all__ += ["PixelUnshuffle"]


class CentralCrop(Cell):
    """The central part of images (MindSpore's ``nn.CentralCrop(central_fraction)``): of an image (C, H, W) or
    a batch (N, C, H, W), of any dtype, the rows ``[top, H - top)`` and columns ``[left, W - left)`` with
    ``top = int((H - H * central_fraction) / 2)`` and ``left = int((W - W * central_fraction) / 2)`` (an
    ``ops.Slice``); ``central_fraction`` is a float in (0, 1], 1.0 returning the input itself."""

    def __init__(self, central_fraction):
        super().__init__()
        if isinstance(central_fraction, bool) or not isinstance(central_fraction, (int, float)):
            raise TypeError(
                f"For 'CentralCrop', the 'central_fraction' must be a float, but got {type(central_fraction).__name__}."
            )
        if not 0.0 < central_fraction <= 1.0:
            raise ValueError(
                f"For 'CentralCrop', the 'central_fraction' must be in (0, 1], but got {central_fraction}."
            )
        self.central_fraction = float(central_fraction)
        self.slice = ops.Slice()

    def construct(self, image):
        shape = image.shape
        if len(shape) not in (3, 4):
            raise ValueError(
                f"For 'CentralCrop', the 'image' must be 3-D (C, H, W) or 4-D (N, C, H, W), "
                f"but got shape {list(shape)}."
            )
        if self.central_fraction == 1.0:
            return image
        h, w = shape[-2], shape[-1]
        top = int((float(h) - float(h * self.central_fraction)) / 2)
        left = int((float(w) - float(w * self.central_fraction)) / 2)
        begin = (0,) * (len(shape) - 2) + (top, left)
        size = tuple(shape[:-2]) + (h - 2 * top, w - 2 * left)
        return self.slice(image, begin, size)

    def extend_repr(self) -> str:
        return f"central_fraction={self.central_fraction}"
