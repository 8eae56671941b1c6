"""``CutOut``: square patches of an image set to zero (the zoo's SqueezeNet ImageNet pipeline,
``CutOut(112)``)."""

from __future__ import annotations

import numpy as np

from opforge.dataset.vision.random_source import transform_rng as _rng

__all__ = ["CutOut"]


def _positive_int(name: str, value) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise TypeError(f"For 'CutOut', '{name}' must be an int, but got {type(value).__name__} {value!r}.")
    if value <= 0:
        raise ValueError(f"For 'CutOut', '{name}' must be larger than 0, but got {value}.")
    return int(value)


class CutOut:
    """``num_patches`` squares of side ``length`` at random places inside an image (each wholly inside it,
    drawn independently, so they may overlap) set to 0: out[y, x] = 0 for every (y, x) in a patch, img[y, x]
    elsewhere. The image is <H, W, C> (``is_hwc``) or <C, H, W>; any dtype."""

    def __init__(self, length, num_patches=1, is_hwc=True):
        self.length = _positive_int("length", length)
        self.num_patches = _positive_int("num_patches", num_patches)
        if not isinstance(is_hwc, bool):
            raise TypeError(f"For 'CutOut', 'is_hwc' must be a bool, but got {type(is_hwc).__name__}.")
        self.is_hwc = is_hwc

    def __call__(self, img):
        img = np.array(img)  # a copy: the patches are written into it
        if img.ndim != 3:
            raise ValueError(f"For 'CutOut', the image must be <H, W, C> or <C, H, W>, but got shape {img.shape}.")
        h, w = img.shape[:2] if self.is_hwc else img.shape[1:]
        if self.length > h or self.length > w:
            raise ValueError(f"For 'CutOut', the patch side {self.length} is larger than the image {(h, w)}.")
        rng = _rng()
        for _ in range(self.num_patches):
            top, left = int(rng.integers(0, h - self.length + 1)), int(rng.integers(0, w - self.length + 1))
            rows, cols = slice(top, top + self.length), slice(left, left + self.length)
            if self.is_hwc:
                img[rows, cols] = 0
            else:
                img[:, rows, cols] = 0
        return img
