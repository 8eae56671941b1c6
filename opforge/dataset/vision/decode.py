"""``Decode`` (MindSpore's ``mindspore.dataset.vision``): an encoded image to RGB pixels, with Pillow."""

from __future__ import annotations

import io

import numpy as np

__all__ = ["Decode"]


class Decode:
    """An encoded image (JPEG, PNG, BMP, ...: a file's bytes, as ``bytes`` or a 1-D uint8 array such as
    ``ImageFolderDataset`` gives) decoded by Pillow to an RGB image, uint8 HWC (a PIL image with
    ``to_pil``), as MindSpore's decodes every image to three channels."""

    def __init__(self, to_pil: bool = False):
        self.to_pil = bool(to_pil)

    def __call__(self, img):
        from PIL import Image  # Pillow: matplotlib's dependency, installed with the demo and test extras

        if not isinstance(img, bytes):
            array = np.asarray(img)
            if array.dtype != np.uint8 or array.ndim != 1:
                raise TypeError(
                    "For 'Decode', the input must be an encoded image: bytes or a 1-D uint8 array, but got a "
                    f"{array.ndim}-D {array.dtype} array of shape {array.shape}."
                )
            img = array.tobytes()
        try:
            image = Image.open(io.BytesIO(img)).convert("RGB")
        except OSError as e:  # Pillow's UnidentifiedImageError and truncated files are OSErrors
            raise ValueError(f"For 'Decode', the {len(img)} bytes are not an image Pillow can decode: {e}") from e
        return image if self.to_pil else np.array(image)
