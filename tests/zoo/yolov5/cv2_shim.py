"""The OpenCV calls src/transforms.py makes (``cv2.setNumThreads``, ``cv2.cvtColor`` between RGB and the full-range
8-bit HSV), on Pillow: OpenCV is not installed in opforge's test environment (this is not part of the zoo, nor of
opforge). Pillow's "HSV" mode is OpenCV's ``*_HSV_FULL`` layout: hue over 0..255 for the full circle, saturation
and value over 0..255."""

import numpy as np
from PIL import Image

COLOR_RGB2HSV_FULL = 67
COLOR_HSV2RGB_FULL = 71


def setNumThreads(n):  # noqa: N802  (OpenCV's name)
    del n


def cvtColor(src, code):  # noqa: N802  (OpenCV's name)
    """uint8 (H, W, 3) RGB <-> HSV (full-range hue)."""
    src = np.ascontiguousarray(src, dtype=np.uint8)
    if code == COLOR_RGB2HSV_FULL:
        return np.asarray(Image.fromarray(src, "RGB").convert("HSV"))
    if code == COLOR_HSV2RGB_FULL:
        return np.asarray(Image.fromarray(src, "HSV").convert("RGB"))
    raise ValueError(f"cvtColor code {code} is not one transforms.py uses")
