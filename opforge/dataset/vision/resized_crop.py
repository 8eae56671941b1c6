"""``RandomResizedCrop`` and ``RandomCropDecodeResize``: MindSpore's random area-and-aspect crop resized to a
fixed size (the ImageNet training crop; the model zoo's EfficientNet, DenseNet and CycleGAN pipelines use
them). The box is drawn as MindSpore's (its RandomCropAndResizeOp::GetCropBox): up to ``max_attempts``
times an area fraction ``s ~ U(scale)`` and an aspect ``r = exp(U(log ratio))`` give
``w = round(sqrt(s * r * H * W))`` and ``h = round(w / r)`` (at least 1); the first box that fits is placed
at a uniform left, then top; else the box of the image's aspect clamped to ``ratio``, centred. The crop is
then resized as ``Resize``."""

from __future__ import annotations

import math
import numbers

import numpy as np

from opforge.dataset.vision.decode import Decode
from opforge.dataset.vision.random_source import transform_rng
from opforge.dataset.vision.resize import Inter, Resize

__all__ = ["RandomResizedCrop", "RandomCropDecodeResize", "crop_box"]


def _check_size(where: str, size) -> tuple:
    values = (size, size) if isinstance(size, numbers.Integral) and not isinstance(size, bool) else size
    if (
        not isinstance(values, (tuple, list))
        or len(values) not in (1, 2)
        or not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in values)
    ):
        raise TypeError(f"For '{where}', 'size' must be an int or a sequence of one or two ints, but got {size!r}.")
    values = (values[0], values[0]) if len(values) == 1 else values
    if min(values) <= 0:
        raise ValueError(f"For '{where}', 'size' must be positive, but got {size!r}.")
    return int(values[0]), int(values[1])


def _check_range(where: str, name: str, value, low_bound: float, strict: bool) -> tuple:
    if (
        not isinstance(value, (tuple, list))
        or len(value) != 2
        or not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in value)
    ):
        raise TypeError(f"For '{where}', '{name}' must be a sequence of two numbers (min, max), but got {value!r}.")
    low, high = float(value[0]), float(value[1])
    if (low <= low_bound if strict else low < low_bound) or low > high:
        bound = f"0 {'<' if strict else '<='} min <= max"
        raise ValueError(f"For '{where}', '{name}' must be (min, max) with {bound}, but got {value!r}.")
    return low, high


def _round(value: float) -> int:
    return int(math.floor(value + 0.5))  # C++'s std::round of a positive value (Python's rounds half to even)


def crop_box(height: int, width: int, scale: tuple, ratio: tuple, attempts: int, rng) -> tuple:
    """(top, left, h, w) of the random crop of an image ``height`` x ``width``."""
    area = height * width
    log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
    for _ in range(attempts):
        target = area * rng.uniform(scale[0], scale[1])
        aspect = math.exp(rng.uniform(log_ratio[0], log_ratio[1]))
        w = max(1, _round(math.sqrt(target * aspect)))
        h = max(1, _round(w / aspect))
        if w <= width and h <= height:
            left = int(rng.integers(0, width - w + 1))
            return int(rng.integers(0, height - h + 1)), left, h, w
    aspect = width / height  # no box fitted: the image's aspect clamped to the range, centred
    if aspect < ratio[0]:
        w, h = width, max(1, _round(width / ratio[0]))
    elif aspect > ratio[1]:
        h, w = height, max(1, _round(height * ratio[1]))
    else:
        h, w = height, width
    return _round((height - h) / 2), _round((width - w) / 2), h, w


class RandomResizedCrop:
    """MindSpore's ``RandomResizedCrop(size, scale=(0.08, 1.0), ratio=(3/4, 4/3),
    interpolation=Inter.BILINEAR, max_attempts=10)`` on an HWC (or HW) image, uint8 or float: a random crop
    (module docstring) resized to ``size`` ((h, w), or an int for a square) with Pillow's ``interpolation``.
    The output keeps the input's dtype."""

    where = "RandomResizedCrop"

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=None, max_attempts=10):
        self.size = _check_size(self.where, size)
        self.scale = _check_range(self.where, "scale", scale, 0.0, strict=False)
        self.ratio = _check_range(self.where, "ratio", ratio, 0.0, strict=True)
        interpolation = Inter.BILINEAR if interpolation is None else interpolation
        if interpolation not in (Inter.NEAREST, Inter.BILINEAR, Inter.BICUBIC):
            raise ValueError(
                f"For '{self.where}', 'interpolation' must be Inter.NEAREST, Inter.BILINEAR or Inter.BICUBIC, but "
                f"got {interpolation!r}."
            )
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, numbers.Integral) or max_attempts < 1:
            raise ValueError(f"For '{self.where}', 'max_attempts' must be an int >= 1, but got {max_attempts!r}.")
        self.interpolation, self.max_attempts = interpolation, int(max_attempts)

    def __call__(self, img):
        img = np.asarray(img)
        if img.ndim not in (2, 3) or 0 in img.shape[:2]:
            raise ValueError(
                f"For '{self.where}', the image must be HWC or HW and not empty, but has shape {img.shape}."
            )
        top, left, h, w = crop_box(
            img.shape[0], img.shape[1], self.scale, self.ratio, self.max_attempts, transform_rng()
        )
        return Resize(self.size, self.interpolation)(img[top : top + h, left : left + w])


class RandomCropDecodeResize(RandomResizedCrop):
    """MindSpore's ``RandomCropDecodeResize(size, scale=(0.08, 1.0), ratio=(3/4, 4/3),
    interpolation=Inter.BILINEAR, max_attempts=10)``: ``Decode`` (an encoded image: bytes or a 1-D uint8
    array) then ``RandomResizedCrop``; the result is an RGB uint8 HWC image."""

    where = "RandomCropDecodeResize"

    def __call__(self, img):
        return super().__call__(Decode()(img))
