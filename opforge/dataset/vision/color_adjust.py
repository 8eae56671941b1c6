"""``RandomColorAdjust``: MindSpore's random brightness, contrast, saturation and hue jitter of an RGB image
(SSD's and YOLO's training pipelines run it before ``Normalize``)."""

from __future__ import annotations

import numbers

import numpy as np

from opforge.dataset.vision.random_source import transform_rng


def _factor_range(name: str, value, center: float, bound=None) -> tuple:
    """A float v gives [max(0, c - v), c + v] (hue: [-v, v]); a sequence is the range [min, max]."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, list, tuple)):
        raise TypeError(
            f"For 'RandomColorAdjust', '{name}' must be a float or a sequence of two floats, but got "
            f"{type(value).__name__}."
        )
    if isinstance(value, numbers.Real):
        if value < 0:
            raise ValueError(f"For 'RandomColorAdjust', '{name}' must not be negative, but got {value}.")
        low, high = (max(0.0, center - value), center + value) if bound is None else (-value, value)
    else:
        if len(value) != 2 or not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in value):
            raise TypeError(f"For 'RandomColorAdjust', '{name}' must be a sequence of two floats, but got {value}.")
        low, high = float(value[0]), float(value[1])
        if low > high or (bound is None and low < 0):
            raise ValueError(
                f"For 'RandomColorAdjust', '{name}' must be [min, max] with 0 <= min <= max, but got {value}."
            )
    if bound is not None and not (-bound <= low <= high <= bound):
        raise ValueError(f"For 'RandomColorAdjust', '{name}' must lie in [-{bound}, {bound}], but got {value}.")
    return float(low), float(high)


class RandomColorAdjust:
    """Adjust the brightness, contrast, saturation and hue of an RGB image (HWC uint8, or a PIL image) by
    factors drawn uniformly from their ranges, in that order, as Pillow's ``ImageEnhance`` does:
    ``out = degenerate + f * (img - degenerate)`` with the degenerate image black (brightness), the mean grey
    level (contrast) or the grey image (saturation); hue rotates the HSV hue by ``f`` turns. A float
    ``brightness``/``contrast``/``saturation`` b means the range [max(0, 1 - b), 1 + b]; a float ``hue`` h
    (0 <= h <= 0.5) means [-h, h]. Factors are drawn from the dataset seed (``dataset.config.set_seed``) when it
    is set. Returns a uint8 HWC array."""

    def __init__(self, brightness=(1, 1), contrast=(1, 1), saturation=(1, 1), hue=(0, 0)):
        self.brightness = _factor_range("brightness", brightness, 1.0)
        self.contrast = _factor_range("contrast", contrast, 1.0)
        self.saturation = _factor_range("saturation", saturation, 1.0)
        self.hue = _factor_range("hue", hue, 0.0, bound=0.5)

    def __call__(self, img):
        from PIL import Image, ImageEnhance  # Pillow: matplotlib's dependency, installed with the test extras

        array = np.asarray(img)
        if array.ndim != 3 or array.shape[2] != 3 or array.dtype != np.uint8:
            raise ValueError(
                "For 'RandomColorAdjust', the image must be RGB uint8 of shape <H, W, 3>, but got a "
                f"{array.dtype} array of shape {array.shape}."
            )
        rng = transform_rng()
        image = Image.fromarray(array)
        for (low, high), enhance in (
            (self.brightness, ImageEnhance.Brightness),
            (self.contrast, ImageEnhance.Contrast),
            (self.saturation, ImageEnhance.Color),
        ):
            if (low, high) != (1.0, 1.0):
                image = enhance(image).enhance(float(rng.uniform(low, high)))
        if self.hue != (0.0, 0.0):
            image = _shift_hue(image, float(rng.uniform(*self.hue)))
        return np.asarray(image)


def _shift_hue(image, turns: float):
    """Rotate the hue by ``turns`` of the colour circle (HSV, hue stored in 0..255)."""
    from PIL import Image

    h, s, v = image.convert("HSV").split()
    shifted = (np.asarray(h, np.int16) + int(round(turns * 255))) % 256
    return Image.merge("HSV", (Image.fromarray(shifted.astype(np.uint8), "L"), s, v)).convert("RGB")
