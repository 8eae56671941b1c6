"""``opforge.dataset.vision``: the image transforms model-zoo scripts use, on NumPy arrays (HWC uint8 or float
images, as MindSpore's): ``Decode`` and ``Resize`` (Pillow), ``Rescale``, ``Normalize``, ``HWC2CHW``,
``CenterCrop``, ``RandomCrop`` (with ``Border`` padding modes), ``CutOut``, ``RandomHorizontalFlip``,
``RandomColorAdjust``, ``RandomResizedCrop``, ``RandomCropDecodeResize``, and ``ToPIL`` / ``ToTensor`` for
Pillow augmentations; the AutoAugment-style transforms of opforge/dataset/vision/augment.py (``Invert``,
``Equalize``, ``AutoContrast``, ``RandomSolarize``, ``RandomPosterize``, ``RandomColor``, ``RandomSharpness``,
``RandomRotation``, ``RandomAffine``, ``RandomSelectSubpolicy``) and ``Pad``; ``MixUpBatch`` (MixUp of a batch:
mixup.py); ``Crop``, ``HorizontalFlip``, ``VerticalFlip``, ``RandomVerticalFlip``, ``RandomResize``
(crop_flip.py), ``RandomErasing`` (erase.py), ``Grayscale`` and ``RandomGrayscale`` (grayscale.py),
``SlicePatches`` (slice_patches.py); ``utils``
holds ``Inter`` and ``Border``. The modules ``c_transforms`` and ``transforms`` (MindSpore 1.x's and 2.x's paths)
hold the same transforms; ``py_transforms`` (with ``py_transforms_util``) MindSpore 1.x's Pillow transforms, and
``ComposeOp`` (MindSpore 0.x) comes from there. Random transforms draw from the dataset seed
(``opforge.dataset.config.set_seed``) when it is set."""

from __future__ import annotations

import numpy as np

from opforge.dataset.transforms import not_random
from opforge.dataset.vision import utils
from opforge.dataset.vision.augment import (
    AutoContrast,
    Equalize,
    Invert,
    Pad,
    RandomAffine,
    RandomColor,
    RandomPosterize,
    RandomRotation,
    RandomSelectSubpolicy,
    RandomSharpness,
    RandomSolarize,
)
from opforge.dataset.vision.color_adjust import RandomColorAdjust
from opforge.dataset.vision.crop_flip import Crop, HorizontalFlip, RandomResize, RandomVerticalFlip, VerticalFlip
from opforge.dataset.vision.cut_out import CutOut
from opforge.dataset.vision.decode import Decode
from opforge.dataset.vision.erase import RandomErasing
from opforge.dataset.vision.grayscale import Grayscale, RandomGrayscale
from opforge.dataset.vision.mixup import MixUpBatch
from opforge.dataset.vision.pil_convert import ToPIL, ToTensor
from opforge.dataset.vision.random_crop import Border, RandomCrop
from opforge.dataset.vision.random_source import transform_rng as _rng
from opforge.dataset.vision.resize import Inter, Resize, _size
from opforge.dataset.vision.resized_crop import RandomCropDecodeResize, RandomResizedCrop
from opforge.dataset.vision.slice_patches import SliceMode, SlicePatches

__all__ = [
    "Decode",
    "Resize",
    "Rescale",
    "Normalize",
    "NormalizePad",
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
    "Border",
    "CutOut",
    "not_random",
    "utils",
    "Invert",
    "Equalize",
    "AutoContrast",
    "RandomSolarize",
    "RandomPosterize",
    "RandomColor",
    "RandomSharpness",
    "RandomRotation",
    "RandomAffine",
    "RandomSelectSubpolicy",
    "Pad",
    "MixUpBatch",
    "Crop",
    "HorizontalFlip",
    "VerticalFlip",
    "RandomVerticalFlip",
    "RandomResize",
    "RandomErasing",
    "Grayscale",
    "RandomGrayscale",
    "ComposeOp",
    "SliceMode",
    "SlicePatches",
]


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


class NormalizePad:
    """``NormalizePad(mean, std, dtype="float32", is_hwc=True)``: ``Normalize`` (per channel, last with
    ``is_hwc``, else first), then a channel of zeros appended after the others, as ``dtype`` ("float32" or
    "float16")."""

    def __init__(self, mean, std, dtype="float32", is_hwc: bool = True):
        if dtype not in ("float32", "float16"):
            raise ValueError(f"For 'NormalizePad', the 'dtype' must be 'float32' or 'float16', but got {dtype!r}.")
        self.normalize, self.dtype, self.is_hwc = Normalize(mean, std, is_hwc), np.dtype(dtype), is_hwc

    def __call__(self, img):
        out = self.normalize(img)
        axis = -1 if self.is_hwc else 0
        if out.ndim == 2:
            out = out[..., None] if self.is_hwc else out[None]
        return np.concatenate([out, np.zeros_like(np.take(out, [0], axis=axis))], axis=axis).astype(self.dtype)


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


class RandomHorizontalFlip:
    def __init__(self, prob: float = 0.5):
        self.prob = float(prob)

    def __call__(self, img):
        img = np.asarray(img)
        return np.ascontiguousarray(img[:, ::-1]) if _rng().random() < self.prob else img


# MindSpore's package imports its modules (``vision.py_transforms.ToTensor`` resolves after ``import vision``).
from opforge.dataset.vision import py_transforms, py_transforms_util  # noqa: E402, F401

ComposeOp = py_transforms.ComposeOp  # MindSpore 0.x's composition (the zoo's ghostnet_quant calls vision.ComposeOp)

# after ComposeOp: they import this module's __all__
from opforge.dataset.vision import c_transforms, transforms  # noqa: E402, F401
