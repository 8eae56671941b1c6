"""MindSpore's ``SlicePatches``: an image cut into a grid of patches, one output column each (MindSpore's
``dataset_slice`` sample feeds each rank of a model-parallel network one patch), and the ``SliceMode`` it takes."""

from __future__ import annotations

import numpy as np

__all__ = ["SliceMode", "SlicePatches"]


class SliceMode:
    """What ``SlicePatches`` does with the rows and columns that do not divide: ``PAD`` them up to a whole patch
    (bottom and right, with ``fill_value``) or ``DROP`` them."""

    PAD, DROP = "pad", "drop"


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"For 'SlicePatches', the '{name}' must be an int, but got {type(value).__name__}.")
    if value <= 0:
        raise ValueError(f"For 'SlicePatches', the '{name}' must be positive, but got {value}.")
    return int(value)


class SlicePatches:
    """``SlicePatches(num_height=1, num_width=1, slice_mode=SliceMode.PAD, fill_value=0)``: an image <H, W> or
    <H, W, C> cut into ``num_height`` x ``num_width`` patches, returned row by row (``num_height * num_width``
    outputs, for that many output columns). A patch is ceil(H / num_height) x ceil(W / num_width) with
    ``SliceMode.PAD`` (the image padded at the bottom and the right with ``fill_value``, in [0, 255]), or
    floor(...) with ``SliceMode.DROP`` (the remainder dropped). Any dtype."""

    def __init__(self, num_height=1, num_width=1, slice_mode=SliceMode.PAD, fill_value=0):
        self.num_height = _positive_int("num_height", num_height)
        self.num_width = _positive_int("num_width", num_width)
        if slice_mode not in (SliceMode.PAD, SliceMode.DROP):
            raise TypeError(f"For 'SlicePatches', the 'slice_mode' must be a SliceMode, but got {slice_mode!r}.")
        if isinstance(fill_value, bool) or not isinstance(fill_value, (int, np.integer)):
            raise TypeError(
                f"For 'SlicePatches', the 'fill_value' must be an int, but got {type(fill_value).__name__}."
            )
        if not 0 <= fill_value <= 255:
            raise ValueError(f"For 'SlicePatches', the 'fill_value' must be in [0, 255], but got {fill_value}.")
        self.slice_mode, self.fill_value = slice_mode, int(fill_value)

    def __call__(self, img):
        img = np.asarray(img)
        if img.ndim not in (2, 3):
            raise RuntimeError(f"For 'SlicePatches', the image must be <H, W> or <H, W, C>, but got shape {img.shape}.")
        h, w = img.shape[:2]
        if self.slice_mode == SliceMode.PAD:
            ph, pw = -(-h // self.num_height), -(-w // self.num_width)
            pads = [(0, ph * self.num_height - h), (0, pw * self.num_width - w)] + [(0, 0)] * (img.ndim - 2)
            img = np.pad(img, pads, constant_values=self.fill_value)
        else:
            ph, pw = h // self.num_height, w // self.num_width
        if self.num_height == self.num_width == 1:
            return img
        return tuple(
            np.ascontiguousarray(img[i * ph : (i + 1) * ph, j * pw : (j + 1) * pw])
            for i in range(self.num_height)
            for j in range(self.num_width)
        )
