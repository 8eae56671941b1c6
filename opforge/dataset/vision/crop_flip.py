"""MindSpore's ``Crop``, ``HorizontalFlip``, ``VerticalFlip``, ``RandomVerticalFlip`` and ``RandomResize``
(``dataset.vision``, ``vision.c_transforms``), C++ transforms in MindSpore, here on HWC (or HW) arrays of any
dtype: the zoo's DepthNet and Non-local crop with ``Crop``, SSIM-AE and UniSiam flip with
``RandomVerticalFlip``, FaceNet resizes with ``RandomResize``. A bad image shape is a RuntimeError, as
MindSpore's C++ transforms report it."""

from __future__ import annotations

import numpy as np

from opforge.dataset.vision.grayscale import check_prob
from opforge.dataset.vision.random_source import transform_rng
from opforge.dataset.vision.resize import Inter, Resize

__all__ = ["Crop", "HorizontalFlip", "VerticalFlip", "RandomVerticalFlip", "RandomResize"]

_INT32_MAX = 2**31 - 1
_FLOAT_MAX_INTEGER = 2**24


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _image(where: str, img) -> np.ndarray:
    img = np.asarray(img)
    if img.ndim not in (2, 3):
        raise RuntimeError(f"{where}: the image must be <H, W> or <H, W, C>, but got shape {img.shape}.")
    return img


def _size(where: str, size, high: int) -> tuple:
    """MindSpore's size check: an int, or a sequence of 2 ints (height, width), each in [1, high]."""
    if _is_int(size):
        values = (size,)
    elif isinstance(size, (list, tuple)) and len(size) == 2 and all(_is_int(v) for v in size):
        values = tuple(size)
    else:
        raise TypeError(f"For '{where}', the 'size' must be an int or a sequence (h, w) of 2 ints, but got {size!r}.")
    if not all(1 <= v <= high for v in values):
        raise ValueError(f"For '{where}', the 'size' must be in [1, {high}], but got {size!r}.")
    return tuple(int(v) for v in values)


class Crop:
    """MindSpore's ``Crop(coordinates, size)``: the ``size`` region (an int for a square, or (height, width))
    whose upper left corner is ``coordinates`` (top, left): ``img[top:top + h, left:left + w]``."""

    random = False

    def __init__(self, coordinates, size):
        if not isinstance(coordinates, (list, tuple)):
            raise TypeError(
                f"For 'Crop', the 'coordinates' must be a sequence (top, left), but got {type(coordinates).__name__}."
            )
        if len(coordinates) != 2 or not all(_is_int(v) for v in coordinates):
            raise TypeError(f"For 'Crop', the 'coordinates' must be 2 ints (top, left), but got {coordinates!r}.")
        if not all(0 <= v <= _INT32_MAX for v in coordinates):
            raise ValueError(f"For 'Crop', the 'coordinates' must not be negative, but got {coordinates!r}.")
        size = _size("Crop", size, _FLOAT_MAX_INTEGER)
        self.coordinates = (int(coordinates[0]), int(coordinates[1]))
        self.size = size * 2 if len(size) == 1 else size

    def __call__(self, img):
        img = _image("Crop", img)
        (top, left), (h, w) = self.coordinates, self.size
        if top + h > img.shape[0] or left + w > img.shape[1]:
            raise RuntimeError(
                f"Crop: the crop of {(h, w)} at (top, left) {(top, left)} exceeds the image of {img.shape[:2]}."
            )
        return img[top : top + h, left : left + w]


class HorizontalFlip:
    """MindSpore's ``HorizontalFlip()``: the image mirrored left to right."""

    random = False

    def __call__(self, img):
        return np.ascontiguousarray(_image("HorizontalFlip", img)[:, ::-1])


class VerticalFlip:
    """MindSpore's ``VerticalFlip()``: the image mirrored top to bottom."""

    random = False

    def __call__(self, img):
        return np.ascontiguousarray(_image("VerticalFlip", img)[::-1])


class RandomVerticalFlip:
    """MindSpore's ``RandomVerticalFlip(prob=0.5)``: the image mirrored top to bottom with probability
    ``prob``, else unchanged."""

    random = True

    def __init__(self, prob=0.5):
        self.prob = check_prob("RandomVerticalFlip", prob)

    def __call__(self, img):
        img = _image("RandomVerticalFlip", img)
        return np.ascontiguousarray(img[::-1]) if transform_rng().random() < self.prob else img


class RandomResize:
    """MindSpore's ``RandomResize(size)``: ``Resize(size, interpolation)`` with the interpolation drawn
    uniformly from MindSpore's four, ``Inter.BILINEAR``, ``Inter.NEAREST``, ``Inter.BICUBIC`` and
    ``Inter.AREA`` (its C++ draws an InterpolationMode in 0..3), once per call; given several images (input
    columns), each is resized with the same one. ``size``: an int resizes the shorter side to it keeping the
    aspect; (height, width) resizes to it."""

    random = True
    modes = (Inter.BILINEAR, Inter.NEAREST, Inter.BICUBIC, Inter.AREA)

    def __init__(self, size):
        checked = _size("RandomResize", size, _INT32_MAX)
        self.size = checked[0] if len(checked) == 1 else checked

    def __call__(self, *imgs):
        if not imgs:
            raise RuntimeError("RandomResize: give at least one image.")
        mode = self.modes[int(transform_rng().integers(0, len(self.modes)))]
        out = tuple(Resize(self.size, mode)(_image("RandomResize", img)) for img in imgs)
        return out[0] if len(out) == 1 else out
