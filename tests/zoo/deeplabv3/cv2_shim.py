"""The OpenCV calls the zoo's DeepLabV3 makes (src/data/dataset.py, eval.py), on Pillow and NumPy: OpenCV is not
installed in opforge's test environment (this is not part of the zoo, nor of opforge). Images are BGR, as
OpenCV's."""

import io

import numpy as np
from PIL import Image

IMREAD_COLOR = 1
IMREAD_GRAYSCALE = 0
INTER_NEAREST = 0
INTER_LINEAR = 1
INTER_CUBIC = 2
BORDER_CONSTANT = 0
_PIL = {INTER_NEAREST: Image.NEAREST, INTER_LINEAR: Image.BILINEAR, INTER_CUBIC: Image.BICUBIC}


def setNumThreads(n):  # noqa: N802  (OpenCV's name)
    del n


def _decode(image, flags):
    if flags == IMREAD_GRAYSCALE:
        return np.asarray(image.convert("L"))
    return np.ascontiguousarray(np.asarray(image.convert("RGB"))[:, :, ::-1])


def imdecode(buf, flags):
    return _decode(Image.open(io.BytesIO(buf.tobytes())), flags)


def imread(path, flags=IMREAD_COLOR):
    return _decode(Image.open(path), flags)


def resize(image, dsize, interpolation=INTER_LINEAR):
    """``dsize`` is (width, height); each channel resized in float32 (Pillow's mode "F")."""
    w, h = int(dsize[0]), int(dsize[1])
    dtype = image.dtype
    channels = image[..., None] if image.ndim == 2 else image
    out = np.stack(
        [
            np.asarray(Image.fromarray(np.float32(channels[..., c])).resize((w, h), _PIL[interpolation]))
            for c in range(channels.shape[-1])
        ],
        -1,
    )
    out = out[..., 0] if image.ndim == 2 else out
    if np.issubdtype(dtype, np.integer):
        out = np.clip(np.rint(out), np.iinfo(dtype).min, np.iinfo(dtype).max)
    return out.astype(dtype)


def copyMakeBorder(image, top, bottom, left, right, border_type, value=0):  # noqa: N802
    assert border_type == BORDER_CONSTANT
    pad = [(top, bottom), (left, right)] + [(0, 0)] * (image.ndim - 2)
    return np.pad(image, pad, constant_values=value)
