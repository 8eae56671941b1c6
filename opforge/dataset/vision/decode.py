"""``Decode`` (MindSpore's ``mindspore.dataset.vision``): an encoded image to RGB pixels, with Pillow."""

from __future__ import annotations

import io

import numpy as np

__all__ = ["Decode"]


class Decode:
    """An encoded image (JPEG, PNG, BMP, ...: a file's bytes, as ``bytes`` or a 1-D uint8 array such as
    ``ImageFolderDataset`` gives, or another 1-D numeric array holding them, as ``np.fromfile(path, 'int8')``)
    decoded by Pillow to an RGB image, uint8 HWC (a PIL image with ``to_pil``), as MindSpore's decodes every image
    to three channels."""

    def __init__(self, to_pil: bool = False):
        self.to_pil = bool(to_pil)

    def __call__(self, img):
        from PIL import Image  # Pillow: matplotlib's dependency, installed with the demo and test extras

        if not isinstance(img, bytes):
            # as MindSpore, the array's bytes whatever its dtype: the model zoo reads files with
            # np.fromfile(path, dtype='int8') (YOLOv5); only strings and objects are refused
            array = np.asarray(img)
            if array.ndim != 1 or array.dtype.kind in "OSUV":
                raise TypeError(
                    "For 'Decode', the input must be an encoded image: bytes or a 1-D uint8 array (or another "
                    f"1-D numeric array of the file's bytes), but got a {array.ndim}-D {array.dtype} array of shape "
                    f"{array.shape}."
                )
            img = array.tobytes()
        try:
            image = Image.open(io.BytesIO(img)).convert("RGB")
        except OSError as e:  # Pillow's UnidentifiedImageError and truncated files are OSErrors
            raise ValueError(f"For 'Decode', the {len(img)} bytes are not an image Pillow can decode: {e}") from e
        return image if self.to_pil else np.array(image)
