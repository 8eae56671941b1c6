"""``ToPIL`` and ``ToTensor``: MindSpore's conversions between images as NumPy arrays and Pillow images, for
Python augmentations written with Pillow (the model zoo's EfficientNet ``RandAugment`` turns each image into a
PIL image, augments it, and back with ``ToTensor``)."""

from __future__ import annotations

import numpy as np

__all__ = ["ToPIL", "ToTensor"]


class ToPIL:
    """MindSpore's ``ToPIL()``: a decoded image (a uint8 HWC or HW NumPy array) as a PIL image; a PIL image
    is returned as it is."""

    def __call__(self, img):
        from PIL import Image  # Pillow: matplotlib's dependency, installed with the demo and test extras

        if isinstance(img, Image.Image):
            return img
        array = np.asarray(img)
        if array.ndim == 3 and array.shape[2] == 1:
            array = array[:, :, 0]  # Pillow has no HxWx1 images
        if array.ndim not in (2, 3) or (array.ndim == 3 and array.shape[2] not in (3, 4)):
            raise ValueError(
                f"For 'ToPIL', the image must be HW or HWC with 1, 3 or 4 channels, but has shape {array.shape}."
            )
        if array.dtype != np.uint8:
            raise TypeError(f"For 'ToPIL', the image must be uint8 (a decoded image), but got {array.dtype}.")
        return Image.fromarray(array)


class ToTensor:
    """MindSpore's ``ToTensor(output_type=np.float32)``: a PIL image or an HWC (or HW) array, pixel values in
    [0, 255], as a CHW array in [0, 1]: ``x / 255`` transposed, of ``output_type``."""

    def __init__(self, output_type=np.float32):
        try:
            self.output_type = np.dtype(output_type)
        except TypeError as e:
            raise TypeError(f"For 'ToTensor', 'output_type' must be a NumPy dtype, but got {output_type!r}.") from e

    def __call__(self, img):
        array = np.asarray(img)
        if array.ndim == 2:
            array = array[:, :, None]
        if array.ndim != 3:
            raise ValueError(f"For 'ToTensor', the image must be HWC or HW, but has shape {array.shape}.")
        scaled = array.astype(np.float64) / 255.0
        return np.ascontiguousarray(scaled.transpose(2, 0, 1)).astype(self.output_type)
