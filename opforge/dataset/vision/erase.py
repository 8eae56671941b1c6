"""``RandomErasing``: MindSpore's random erasing of a rectangle of a CHW image (``vision.RandomErasing`` and
``vision.py_transforms.RandomErasing``, the same transform; the zoo's DDAG and MVD person re-identification
pipelines run it after ``ToTensor`` and ``Normalize``), and the two steps it is made of, ``get_erase_params``
(the rectangle) and ``erase`` (writing it), which ``py_transforms.Cutout`` shares.

The rectangle is drawn as MindSpore's: up to ``max_attempts`` times an area ``s * H * W`` with
``s ~ U(scale)`` and an aspect ``r ~ U(ratio)`` (uniform, not log-uniform) give ``w = round(sqrt(s H W r))`` and
``h = round(w / r)`` (Python's rounding); the first with ``h < H`` and ``w < W`` is placed at a uniform top,
then left (``bounded``), or centred at a uniform point (x in [0, W], y in [0, H]) and clipped to the image (not
``bounded``: Cutout). No rectangle fitting: the whole image, erased with its own values (an unchanged image).
Random draws come from the dataset seed (``dataset.config.set_seed``) when it is set."""

from __future__ import annotations

import math
import numbers

import numpy as np

from opforge.dataset.vision.random_source import transform_rng

__all__ = ["RandomErasing", "get_erase_params", "erase"]


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _chw(where: str, img) -> np.ndarray:
    if not isinstance(img, np.ndarray):
        raise TypeError(f"For '{where}', the image must be a numpy.ndarray of shape <C, H, W>, but got {type(img)}.")
    if img.ndim != 3:
        raise TypeError(f"For '{where}', the image must be <C, H, W>, but got {img.ndim} dimensions.")
    return img


def get_erase_params(np_img, scale, ratio, value, bounded, max_attempts):
    """MindSpore's ``get_erase_params``: ``(top, left, height, width, erase_value)`` of the rectangle to erase in
    the CHW image (module docstring); ``erase_value`` is ``value`` (a number), per-channel values of shape
    (C, h, w) (a sequence of 3), or standard normal draws of that shape (the string 'random'). When no
    rectangle fits: ``(0, 0, H, W, np_img)``."""
    np_img = _chw("RandomErasing", np_img)
    channels, height, width = np_img.shape
    rng = transform_rng()
    for _ in range(int(max_attempts)):
        area = rng.uniform(scale[0], scale[1]) * height * width
        aspect = rng.uniform(ratio[0], ratio[1])
        erase_w = int(round(math.sqrt(area * aspect)))
        erase_h = int(round(erase_w / aspect))
        if erase_h < height and erase_w < width:
            if bounded:
                top = int(rng.integers(0, height - erase_h + 1))
                left = int(rng.integers(0, width - erase_w + 1))
            else:
                x, y = int(rng.integers(0, width + 1)), int(rng.integers(0, height + 1))
                x1, x2 = min(max(x - erase_w // 2, 0), width), min(max(x + erase_w // 2, 0), width)
                y1, y2 = min(max(y - erase_h // 2, 0), height), min(max(y + erase_h // 2, 0), height)
                top, left, erase_h, erase_w = y1, x1, y2 - y1, x2 - x1
            shape = (channels, erase_h, erase_w)
            if _is_number(value):
                erase_value = value
            elif isinstance(value, (str, bytes)):
                erase_value = rng.standard_normal(shape)
            elif isinstance(value, (tuple, list)) and len(value) == 3:
                erase_value = np.ones(shape) * np.asarray(value)[:, None, None]
            else:
                raise ValueError(
                    "For 'RandomErasing', the 'value' must be a number, the string 'random' or a sequence of 3 "
                    f"values (R, G, B), but got {value!r}."
                )
            return top, left, erase_h, erase_w, erase_value
    return 0, 0, height, width, np_img


def erase(np_img, i, j, height, width, erase_value, inplace=False):
    """MindSpore's ``erase``: the CHW image with rows ``i:i+height`` and columns ``j:j+width`` of every channel
    set to ``erase_value`` (a copy unless ``inplace``)."""
    np_img = _chw("RandomErasing", np_img)
    if not inplace:
        np_img = np_img.copy()
    np_img[:, i : i + height, j : j + width] = erase_value
    return np_img


def _pair(name: str, value, positive_low: bool) -> tuple:
    if not isinstance(value, (list, tuple)) or not all(_is_number(v) for v in value):
        raise TypeError(f"For 'RandomErasing', the '{name}' must be a sequence of two numbers, but got {value!r}.")
    if len(value) != 2:
        raise TypeError(f"For 'RandomErasing', the '{name}' must be a sequence of length 2, but got {value!r}.")
    if value[0] > value[1]:
        raise ValueError(f"For 'RandomErasing', the '{name}' must be in (min, max) order, but got {value!r}.")
    if value[0] < 0 or (positive_low and value[0] <= 0) or value[1] <= 0:
        raise ValueError(f"For 'RandomErasing', the '{name}' must be positive, but got {value!r}.")
    return float(value[0]), float(value[1])


class RandomErasing:
    """MindSpore's ``RandomErasing(prob=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False,
    max_attempts=10)`` on a CHW numpy image (after ``ToTensor``): with probability ``prob`` a random rectangle
    (module docstring) of every channel set to ``value``: an int in [0, 255], 3 ints (one per channel), or
    'random' (standard normal values per pixel). ``inplace`` writes into the input array."""

    random = True

    def __init__(self, prob=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False, max_attempts=10):
        if not _is_number(prob):
            raise TypeError(f"For 'RandomErasing', the 'prob' must be a float, but got {type(prob).__name__}.")
        if not 0 <= prob <= 1:
            raise ValueError(f"For 'RandomErasing', the 'prob' must be in [0, 1], but got {prob}.")
        scale = _pair("scale", scale, positive_low=False)
        ratio = _pair("ratio", ratio, positive_low=True)
        if isinstance(value, bool) or not isinstance(value, (int, list, tuple, str)):
            raise TypeError(
                f"For 'RandomErasing', the 'value' must be an int, a sequence or a str, but got {type(value).__name__}."
            )
        if isinstance(value, str) and value != "random":
            raise ValueError(f"For 'RandomErasing', a str 'value' must be 'random', but got {value!r}.")
        if isinstance(value, (list, tuple)):
            if len(value) != 3:
                raise ValueError(f"For 'RandomErasing', a sequence 'value' must have 3 values, but got {value!r}.")
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
                raise TypeError(f"For 'RandomErasing', the 'value' must hold ints, but got {value!r}.")
        if isinstance(value, int) or isinstance(value, (list, tuple)):
            if not all(0 <= v <= 255 for v in (value if isinstance(value, (list, tuple)) else (value,))):
                raise ValueError(f"For 'RandomErasing', the 'value' must be in [0, 255], but got {value!r}.")
        if not isinstance(inplace, bool):
            raise TypeError(f"For 'RandomErasing', the 'inplace' must be a bool, but got {type(inplace).__name__}.")
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int):
            raise TypeError(
                f"For 'RandomErasing', the 'max_attempts' must be an int, but got {type(max_attempts).__name__}."
            )
        if max_attempts < 1:
            raise ValueError(f"For 'RandomErasing', the 'max_attempts' must be positive, but got {max_attempts}.")
        self.prob, self.scale, self.ratio, self.value = float(prob), scale, ratio, value
        self.inplace, self.max_attempts = inplace, max_attempts

    def __call__(self, np_img):
        np_img = _chw("RandomErasing", np_img)
        if self.prob > transform_rng().random():
            top, left, h, w, value = get_erase_params(
                np_img, self.scale, self.ratio, self.value, True, self.max_attempts
            )
            return erase(np_img, top, left, h, w, value, self.inplace)
        return np_img
