"""The two OpenCV calls src/dataset.py makes (``cv2.resize``, ``cv2.flip``), on Pillow and NumPy: OpenCV is
not installed in opforge's test environment (this is not part of the zoo, nor of opforge)."""

import numpy as np
from PIL import Image


def setNumThreads(n):  # noqa: N802  (OpenCV's name)
    del n


def resize(image, dsize):
    """``dsize`` is (width, height), bilinear, as cv2.resize's default."""
    w, h = dsize
    return np.asarray(Image.fromarray(np.ascontiguousarray(image)).resize((int(w), int(h)), Image.BILINEAR))


def flip(image, flip_code, dst=None):
    """flip_code 1: around the vertical axis (left-right), 0: up-down, -1: both."""
    del dst
    if flip_code > 0:
        return np.ascontiguousarray(image[:, ::-1])
    if flip_code == 0:
        return np.ascontiguousarray(image[::-1])
    return np.ascontiguousarray(image[::-1, ::-1])
