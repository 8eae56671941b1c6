"""``RandomCrop`` with MindSpore's padding arguments (``padding`` as an int or a 2- or 4-sequence,
``pad_if_needed``, ``fill_value``, ``padding_mode``) and the ``Border`` modes it pads with. The zoo's CIFAR-10
pipelines (GoogleNet, SqueezeNet, AlexNet, InceptionV3) write ``RandomCrop((32, 32), (4, 4, 4, 4))``."""

from __future__ import annotations

import numpy as np

from opforge.dataset.vision.random_source import transform_rng as _rng

__all__ = ["Border", "RandomCrop"]


class Border:
    """Padding modes (MindSpore's names): ``CONSTANT`` (``fill_value``), ``EDGE`` (the border pixel repeated),
    ``REFLECT`` (mirrored without the border pixel), ``SYMMETRIC`` (mirrored with it)."""

    CONSTANT, EDGE, REFLECT, SYMMETRIC = "constant", "edge", "reflect", "symmetric"


_MODES = (Border.CONSTANT, Border.EDGE, Border.REFLECT, Border.SYMMETRIC)


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _crop_size(size) -> tuple:
    values = (size, size) if _is_int(size) else tuple(size) if isinstance(size, (list, tuple)) else None
    if values is None or len(values) != 2 or not all(_is_int(v) for v in values):
        raise TypeError(f"For 'RandomCrop', 'size' must be an int or a sequence of 2 ints, but got {size!r}.")
    if min(values) <= 0:
        raise ValueError(f"For 'RandomCrop', 'size' must be positive, but got {size!r}.")
    return int(values[0]), int(values[1])


def _borders(padding) -> tuple:
    """(left, top, right, bottom) from MindSpore's forms: one int for all borders, 2 values (left and right,
    top and bottom), 4 values (left, top, right, bottom)."""
    if padding is None:
        return 0, 0, 0, 0
    values = (padding,) if _is_int(padding) else tuple(padding) if isinstance(padding, (list, tuple)) else None
    if values is None or len(values) not in (1, 2, 4) or not all(_is_int(v) for v in values):
        raise TypeError(
            f"For 'RandomCrop', 'padding' must be an int or a sequence of 2 or 4 ints, but got {padding!r}."
        )
    if min(values) < 0:
        raise ValueError(f"For 'RandomCrop', 'padding' must be non-negative, but got {padding!r}.")
    if len(values) == 1:
        return values * 4
    if len(values) == 2:
        return values[0], values[1], values[0], values[1]
    return values


def _fill(fill_value) -> tuple:
    values = (fill_value,) * 3 if _is_int(fill_value) else fill_value
    if not isinstance(values, tuple) or len(values) != 3 or not all(_is_int(v) for v in values):
        raise TypeError(f"For 'RandomCrop', 'fill_value' must be an int or a tuple of 3 ints, but got {fill_value!r}.")
    if not all(0 <= v <= 255 for v in values):
        raise ValueError(f"For 'RandomCrop', 'fill_value' must be in [0, 255], but got {fill_value!r}.")
    return values


def _pad(img: np.ndarray, left: int, top: int, right: int, bottom: int, mode: str, fill: tuple) -> np.ndarray:
    if not (left or top or right or bottom):
        return img
    widths = [(top, bottom), (left, right)] + [(0, 0)] * (img.ndim - 2)
    if mode != Border.CONSTANT:
        return np.pad(img, widths, mode=mode)
    if img.ndim == 2 or img.shape[2] != len(fill) or len(set(fill)) == 1:
        return np.pad(img, widths, constant_values=fill[0])
    # a per-channel fill (R, G, B): pad each channel with its value
    return np.stack([np.pad(img[..., c], widths[:2], constant_values=v) for c, v in enumerate(fill)], -1)


class RandomCrop:
    """A ``size`` crop (height, width) at a random place of an HWC (or HW) image, after padding it by
    ``padding`` (an int for every border; 2 values: left and right, top and bottom; 4 values: left, top,
    right, bottom) and, with ``pad_if_needed``, by the shortfall on each side of a side shorter than the crop.
    Padding is ``padding_mode`` (``Border``), with ``fill_value`` (an int or an R, G, B tuple) for
    ``Border.CONSTANT``. Any dtype."""

    def __init__(self, size, padding=None, pad_if_needed=False, fill_value=0, padding_mode=Border.CONSTANT):
        self.size = _crop_size(size)
        self.padding = _borders(padding)
        if not isinstance(pad_if_needed, bool):
            raise TypeError(f"For 'RandomCrop', 'pad_if_needed' must be a bool, but got {pad_if_needed!r}.")
        self.pad_if_needed = pad_if_needed
        self.fill_value = _fill(fill_value)
        if padding_mode not in _MODES:
            raise TypeError(
                f"For 'RandomCrop', 'padding_mode' must be a Border mode {_MODES}, but got {padding_mode!r}."
            )
        self.padding_mode = padding_mode

    def __call__(self, img):
        img = np.asarray(img)
        if img.ndim not in (2, 3):
            raise ValueError(f"For 'RandomCrop', the image must be <H, W> or <H, W, C>, but got shape {img.shape}.")
        img = _pad(img, *self.padding, self.padding_mode, self.fill_value)
        ch, cw = self.size
        if self.pad_if_needed:
            dh, dw = max(ch - img.shape[0], 0), max(cw - img.shape[1], 0)
            img = _pad(img, dw, dh, dw, dh, self.padding_mode, self.fill_value)
        h, w = img.shape[:2]
        if ch > h or cw > w:
            raise ValueError(f"For 'RandomCrop', the crop {self.size} is larger than the padded image {(h, w)}.")
        rng = _rng()
        top, left = int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1))
        return img[top : top + ch, left : left + cw]
