"""``opforge.dataset.vision``: the image transforms model-zoo scripts use, on NumPy arrays (HWC uint8 or
float images, as MindSpore's): ``Decode`` and ``Resize`` (Pillow), ``Rescale``, ``Normalize``, ``HWC2CHW``,
``CenterCrop``, ``RandomCrop``, ``RandomHorizontalFlip``, ``RandomColorAdjust``, ``RandomResizedCrop``,
``RandomCropDecodeResize``, and ``ToPIL`` / ``ToTensor`` for Pillow augmentations. Random transforms draw
from the dataset seed (``opforge.dataset.config.set_seed``) when it is set."""

from __future__ import annotations

import io

import numpy as np

from opforge.dataset.vision.color_adjust import RandomColorAdjust
from opforge.dataset.vision.pil_convert import ToPIL, ToTensor
from opforge.dataset.vision.random_source import transform_rng as _rng
from opforge.dataset.vision.resized_crop import RandomCropDecodeResize, RandomResizedCrop

__all__ = [
    "Decode",
    "Resize",
    "Rescale",
    "Normalize",
    "HWC2CHW",
    "CenterCrop",
    "RandomCrop",
    "RandomHorizontalFlip",
    "RandomColorAdjust",
    "RandomResizedCrop",
    "RandomCropDecodeResize",
    "ToPIL",
    "ToTensor",
    "Inter",
]


class Inter:
    """Interpolation modes (MindSpore's names)."""

    NEAREST, BILINEAR, BICUBIC = "nearest", "bilinear", "bicubic"
    LINEAR, CUBIC = BILINEAR, BICUBIC  # MindSpore's other names of the same modes (LeNet's Inter.LINEAR)


def _size(size) -> tuple:
    return (int(size), int(size)) if isinstance(size, (int, np.integer)) else (int(size[0]), int(size[1]))


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
        resample = {"nearest": Image.NEAREST, "bilinear": Image.BILINEAR, "bicubic": Image.BICUBIC}[self.interpolation]
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


class Rescale:
    """``x * rescale + shift`` as float32."""

    def __init__(self, rescale: float, shift: float):
        self.rescale, self.shift = float(rescale), float(shift)

    def __call__(self, img):
        return np.asarray(img, np.float32) * self.rescale + self.shift


class Normalize:
    """``(x - mean) / std`` per channel (channels last with ``is_hwc``, else first), as float32."""

    def __init__(self, mean, std, is_hwc: bool = True):
        self.mean, self.std, self.is_hwc = np.asarray(mean, np.float32), np.asarray(std, np.float32), is_hwc

    def __call__(self, img):
        img = np.asarray(img, np.float32)
        shape = (1, 1, -1) if self.is_hwc else (-1, 1, 1)
        return (img - self.mean.reshape(shape)) / self.std.reshape(shape)


class HWC2CHW:
    """Channels last to channels first."""

    def __call__(self, img):
        return np.ascontiguousarray(np.transpose(np.asarray(img), (2, 0, 1)))


class CenterCrop:
    def __init__(self, size):
        self.size = _size(size)

    def __call__(self, img):
        img = np.asarray(img)
        h, w = img.shape[:2]
        ch, cw = self.size
        top, left = max((h - ch) // 2, 0), max((w - cw) // 2, 0)
        return img[top : top + ch, left : left + cw]


class RandomCrop:
    """A random ``size`` crop, after zero ``padding`` on each side."""

    def __init__(self, size, padding=None):
        self.size = _size(size)
        self.padding = 0 if padding is None else int(padding)

    def __call__(self, img):
        img = np.asarray(img)
        if self.padding:
            pad = [(self.padding, self.padding), (self.padding, self.padding)] + [(0, 0)] * (img.ndim - 2)
            img = np.pad(img, pad)
        h, w = img.shape[:2]
        ch, cw = self.size
        if ch > h or cw > w:
            raise ValueError(f"For 'RandomCrop', the crop {self.size} is larger than the image {(h, w)}.")
        rng = _rng()
        top, left = int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1))
        return img[top : top + ch, left : left + cw]


class RandomHorizontalFlip:
    def __init__(self, prob: float = 0.5):
        self.prob = float(prob)

    def __call__(self, img):
        img = np.asarray(img)
        return np.ascontiguousarray(img[:, ::-1]) if _rng().random() < self.prob else img
