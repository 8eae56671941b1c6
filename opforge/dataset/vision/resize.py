"""``Resize`` and the interpolation modes ``Inter`` (MindSpore's ``mindspore.dataset.vision``), with Pillow."""

from __future__ import annotations

import numpy as np

__all__ = ["Inter", "Resize"]


class Inter:
    """Interpolation modes (MindSpore's names)."""

    NEAREST, BILINEAR, BICUBIC = "nearest", "bilinear", "bicubic"
    LINEAR, CUBIC = BILINEAR, BICUBIC  # MindSpore's other names of the same modes (LeNet's Inter.LINEAR)
    # AREA averages the input pixels under each output pixel (Pillow's box filter: OpenCV's INTER_AREA when
    # shrinking); PILCUBIC is Pillow's bicubic (BICUBIC here); ANTIALIAS Pillow's Lanczos filter (its old name).
    AREA, PILCUBIC, ANTIALIAS = "area", "pilcubic", "antialias"


def _size(size) -> tuple:
    return (int(size), int(size)) if isinstance(size, (int, np.integer)) else (int(size[0]), int(size[1]))


class Resize:
    """Resize to ``size`` (h, w), or the shorter side to ``size`` keeping the aspect, with Pillow."""

    def __init__(self, size, interpolation=Inter.BILINEAR):
        self.size, self.interpolation = size, interpolation

    def __call__(self, img):
        from PIL import Image  # Pillow: matplotlib's dependency, installed with the demo and test extras

        img = np.asarray(img)
        h, w = img.shape[:2]
        if isinstance(self.size, (int, np.integer)):
            scale = self.size / min(h, w)
            out_h, out_w = round(h * scale), round(w * scale)
        else:
            out_h, out_w = _size(self.size)
        resample = {
            "nearest": Image.NEAREST, "bilinear": Image.BILINEAR, "bicubic": Image.BICUBIC, "area": Image.BOX,
            "pilcubic": Image.BICUBIC, "antialias": Image.LANCZOS,
        }[self.interpolation]  # fmt: skip
        if img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 1:  # Pillow has no HxWx1 images
            return self(img[:, :, 0])[:, :, None]
        if img.dtype == np.uint8:
            return np.asarray(Image.fromarray(img).resize((out_w, out_h), resample))
        channels = [img] if img.ndim == 2 else [img[..., c] for c in range(img.shape[2])]
        resized = [
            np.asarray(Image.fromarray(c.astype(np.float32), mode="F").resize((out_w, out_h), resample))
            for c in channels
        ]
        return (resized[0] if img.ndim == 2 else np.stack(resized, -1)).astype(img.dtype)
