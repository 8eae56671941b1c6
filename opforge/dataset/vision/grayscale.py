"""``Grayscale`` and ``RandomGrayscale``: MindSpore's grey conversions (``vision.Grayscale`` /
``vision.RandomGrayscale``, Python transforms in MindSpore built on Pillow; the zoo's SimCLR, AVA, DDAG, MVD and
SSC pipelines run ``RandomGrayscale(prob=0.2)``). The grey level is Pillow's ``convert("L")``:
``(19595 R + 38470 G + 7471 B + 2^15) >> 16``. A PIL image gives a PIL image, as MindSpore's; opforge also takes a
decoded uint8 array (HWC with 1 or 3 channels, or HW), as its other vision transforms, and then returns an
array. ``py_transforms`` has the PIL-only forms (opforge/dataset/vision/py_transforms.py)."""

from __future__ import annotations

import numbers

import numpy as np

from opforge.dataset.vision.random_source import transform_rng

__all__ = ["Grayscale", "RandomGrayscale", "grayscale", "check_prob"]


def check_prob(where: str, prob) -> float:
    """MindSpore's probability check: a number (TypeError) in [0, 1] (ValueError)."""
    if isinstance(prob, bool) or not isinstance(prob, numbers.Real):
        raise TypeError(f"For '{where}', the 'prob' must be a float, but got {type(prob).__name__}.")
    if not 0 <= prob <= 1:
        raise ValueError(f"For '{where}', the 'prob' must be in [0, 1], but got {prob}.")
    return float(prob)


def _check_image(where: str, img) -> int:
    """The number of channels of a PIL image (1 for mode "L", else 3) or of a uint8 HW / HWC (1 or 3 channels)
    array; TypeError for anything else."""
    from PIL import Image  # Pillow: matplotlib's dependency, installed with the demo and test extras

    if isinstance(img, Image.Image):
        return 1 if img.mode == "L" else 3
    if (
        isinstance(img, np.ndarray)
        and img.dtype == np.uint8
        and (img.ndim == 2 or (img.ndim == 3 and img.shape[2] in (1, 3)))
    ):
        return 1 if img.ndim == 2 or img.shape[2] == 1 else 3
    described = f"a {img.dtype} array of shape {img.shape}" if isinstance(img, np.ndarray) else str(type(img))
    raise TypeError(
        f"For '{where}', the image must be a PIL image or a uint8 array <H, W> or <H, W, C> with 1 or 3 "
        f"channels, but got {described}."
    )


def grayscale(where: str, img, num_output_channels: int):
    """``img`` (a PIL image, or a uint8 HW / HWC array) in grey with 1 or 3 identical channels, of the input's
    kind (an HW array stays HW with 1 channel)."""
    from PIL import Image

    channels = _check_image(where, img)
    if isinstance(img, Image.Image):
        gray = img.convert("L")
        if num_output_channels == 1:
            return gray
        return Image.fromarray(np.ascontiguousarray(np.stack([np.asarray(gray)] * 3, -1)))
    plane = np.asarray(Image.fromarray(np.ascontiguousarray(img)).convert("L")) if channels == 3 else img
    plane = plane.reshape(img.shape[:2])
    if num_output_channels == 3:
        return np.stack([plane] * 3, -1)
    return plane.copy() if img.ndim == 2 else plane[:, :, None].copy()


class Grayscale:
    """MindSpore's ``Grayscale(num_output_channels=1)``: the image in grey (module docstring), with 1 channel
    or 3 identical ones (``num_output_channels`` 1 or 3)."""

    random = False

    def __init__(self, num_output_channels=1):
        if isinstance(num_output_channels, bool) or not isinstance(num_output_channels, int):
            raise TypeError(
                "For 'Grayscale', the 'num_output_channels' must be an int, but got "
                f"{type(num_output_channels).__name__}."
            )
        if num_output_channels not in (1, 3):
            raise ValueError(
                f"For 'Grayscale', the 'num_output_channels' must be 1 or 3, but got {num_output_channels}."
            )
        self.num_output_channels = num_output_channels

    def __call__(self, img):
        return grayscale("Grayscale", img, self.num_output_channels)


class RandomGrayscale:
    """MindSpore's ``RandomGrayscale(prob=0.1)``: with probability ``prob`` the image in grey, keeping its
    number of channels (a one-channel image: 1; else 3 identical channels); else the image unchanged."""

    random = True

    def __init__(self, prob=0.1):
        self.prob = check_prob("RandomGrayscale", prob)

    def __call__(self, img):
        channels = _check_image("RandomGrayscale", img)
        if self.prob > transform_rng().random():
            return grayscale("RandomGrayscale", img, channels)
        return img
