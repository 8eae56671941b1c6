"""MindSpore 1.x's ``dataset.vision.py_transforms``: the Python image transforms built on Pillow. Most take and
return PIL images (``Decode`` and ``ToPIL`` make them; ``ToTensor`` turns one into a CHW float32 array in
[0, 1]); ``Normalize``, ``NormalizePad``, ``HWC2CHW``, ``ToType``, ``Cutout``, ``RandomErasing``,
``LinearTransformation``, ``MixUp`` and the colour-space conversions take numpy arrays. 28 files of 19 of the
model zoo's research networks build pipelines of them (ResidualAttentionNet, PaDiM, vanillanet, FCOS, HMR, JDE,
FaceNet, CTSDG, ...), composed with ``transforms.py_transforms.Compose``.

Arguments, defaults and errors are MindSpore's (its validators' exception types); the functions the classes
call are ``py_transforms_util``'s (opforge/dataset/vision/py_transforms_util.py, where the sharing with
opforge's array transforms is told). Random transforms draw from the dataset seed (``dataset.config.set_seed``)
when it is set. ``ComposeOp`` is MindSpore 0.x's composition (``ComposeOp(transforms)()`` gives the function),
which the zoo's ghostnet_quant still calls."""

from __future__ import annotations

import functools
import numbers

import numpy as np

from opforge.dataset.transforms.py_transforms import PyTensorOperation
from opforge.dataset.vision import py_transforms_util as util
from opforge.dataset.vision.erase import RandomErasing, erase, get_erase_params
from opforge.dataset.vision.grayscale import check_prob
from opforge.dataset.vision.random_crop import _MODES, Border, _borders
from opforge.dataset.vision.random_source import transform_rng
from opforge.dataset.vision.resize import Inter

__all__ = [
    "AdjustGamma", "AutoContrast", "CenterCrop", "Cutout", "Decode", "Equalize", "FiveCrop", "Grayscale",
    "HsvToRgb", "HWC2CHW", "Invert", "LinearTransformation", "MixUp", "Normalize", "NormalizePad", "Pad",
    "RandomAffine", "RandomColor", "RandomColorAdjust", "RandomCrop", "RandomErasing", "RandomGrayscale",
    "RandomHorizontalFlip", "RandomLighting", "RandomPerspective", "RandomResizedCrop", "RandomRotation",
    "RandomSharpness", "RandomVerticalFlip", "Resize", "RgbToBgr", "RgbToHsv", "TenCrop", "ToPIL", "ToTensor",
    "ToType", "UniformAugment", "ComposeOp", "not_random", "Inter", "Border",
]  # fmt: skip

_FLOAT_MAX_INTEGER = 2**24
_INT32_MAX = 2**31 - 1
_PY_INTER = (Inter.NEAREST, Inter.ANTIALIAS, Inter.BILINEAR, Inter.BICUBIC)
_ALL_INTER = _PY_INTER + (Inter.AREA, Inter.PILCUBIC)


def not_random(func):
    """MindSpore's ``not_random``: marks ``func`` deterministic (a cached ``map`` may run it)."""
    func.random = False
    return func


# -- argument checks (MindSpore's validators: TypeError for a type, ValueError for a value) ---------------


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_size(where: str, size):
    """An int or a sequence (h, w) of ints, each in [1, 2^24]."""
    values = (size,) if _is_int(size) else tuple(size) if isinstance(size, (list, tuple)) else None
    if values is None or len(values) not in (1, 2) or (len(values) == 1 and not _is_int(size)):
        raise TypeError(f"For '{where}', the 'size' must be an int or a list/tuple (h, w) of length 2, got {size!r}.")
    if not all(_is_int(v) for v in values):
        raise TypeError(f"For '{where}', the 'size' must hold ints, but got {size!r}.")
    if not all(1 <= v <= _FLOAT_MAX_INTEGER for v in values):
        raise ValueError(f"For '{where}', the 'size' must be positive, but got {size!r}.")
    return size if _is_int(size) else (int(values[0]), int(values[1]))


def _check_inter(where: str, name: str, value):
    if value not in _ALL_INTER:
        raise TypeError(f"For '{where}', the '{name}' must be an Inter mode, but got {value!r}.")
    if value not in _PY_INTER:
        raise ValueError(
            f"For '{where}', the '{name}' must be Inter.NEAREST, Inter.ANTIALIAS, Inter.BILINEAR or Inter.BICUBIC "
            f"(the Python transforms' modes), but got {value!r}."
        )
    return value


def _check_fill(where: str, fill_value):
    if not (_is_int(fill_value) or (isinstance(fill_value, tuple) and len(fill_value) == 3)):
        raise TypeError(f"For '{where}', the 'fill_value' must be an int or a 3-tuple, but got {fill_value!r}.")
    values = (fill_value,) if _is_int(fill_value) else fill_value
    if not all(_is_int(v) for v in values):
        raise TypeError(f"For '{where}', the 'fill_value' must hold ints, but got {fill_value!r}.")
    if not all(0 <= v <= 255 for v in values):
        raise ValueError(f"For '{where}', the 'fill_value' must be in [0, 255], but got {fill_value!r}.")
    return fill_value


def _check_padding(where: str, padding):
    """An int for every border, or 2 / 4 ints; as (left, top, right, bottom)."""
    if _is_int(padding):
        values = (padding,)
    elif isinstance(padding, (list, tuple)):
        if len(padding) not in (2, 4):
            raise ValueError("The size of the padding list or tuple should be 2 or 4.")
        if not all(_is_int(v) for v in padding):
            raise TypeError(f"For '{where}', the 'padding' must hold ints, but got {padding!r}.")
        values = tuple(padding)
    else:
        raise TypeError(f"For '{where}', the 'padding' must be an int or a sequence of ints, but got {padding!r}.")
    if not all(0 <= v <= _INT32_MAX for v in values):
        raise ValueError(f"For '{where}', the 'padding' must not be negative, but got {padding!r}.")
    return _borders(padding if _is_int(padding) else values)


def _check_mode(where: str, padding_mode):
    if padding_mode not in _MODES:
        raise TypeError(f"For '{where}', the 'padding_mode' must be a Border mode, but got {padding_mode!r}.")
    return padding_mode


def _check_degrees(where: str, degrees) -> tuple:
    """A non-negative number d ((-d, d)) or a sequence (min, max)."""
    if _is_number(degrees):
        if degrees < 0:
            raise ValueError(f"For '{where}', the 'degrees' must not be negative, but got {degrees}.")
        return (-float(degrees), float(degrees))
    if not isinstance(degrees, (list, tuple)):
        raise TypeError(f"For '{where}', the 'degrees' must be a number or a sequence, but got {degrees!r}.")
    if len(degrees) != 2:
        raise TypeError(f"For '{where}', a sequence 'degrees' must have length 2, but got {degrees!r}.")
    if not all(_is_number(v) for v in degrees):
        raise TypeError(f"For '{where}', the 'degrees' must hold numbers, but got {degrees!r}.")
    if degrees[0] > degrees[1]:
        raise ValueError(f"For '{where}', the 'degrees' must be in (min, max) order, but got {degrees!r}.")
    return float(degrees[0]), float(degrees[1])


def _check_range(where: str, name: str, value, positive: bool = False) -> tuple:
    """A sequence (min, max) of non-negative numbers (positive with ``positive``)."""
    if not isinstance(value, (list, tuple)) or not all(_is_number(v) for v in value):
        raise TypeError(f"For '{where}', the '{name}' must be a sequence of two numbers, but got {value!r}.")
    if len(value) != 2:
        raise TypeError(f"For '{where}', the '{name}' must be a list/tuple of length 2, but got {value!r}.")
    if value[0] > value[1]:
        raise ValueError(f"For '{where}', the '{name}' must be in (min, max) order, but got {value!r}.")
    if value[0] < 0 or (positive and value[0] <= 0) or value[1] <= 0:
        raise ValueError(f"For '{where}', the '{name}' must be positive, but got {value!r}.")
    return float(value[0]), float(value[1])


def _check_bool(where: str, name: str, value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"For '{where}', the '{name}' must be a bool, but got {type(value).__name__}.")
    return value


def _check_positive_int(where: str, name: str, value) -> int:
    if not _is_int(value):
        raise TypeError(f"For '{where}', the '{name}' must be an int, but got {type(value).__name__}.")
    if not 1 <= value <= _FLOAT_MAX_INTEGER:
        raise ValueError(f"For '{where}', the '{name}' must be positive, but got {value}.")
    return value


def _check_normalize(where: str, mean, std) -> tuple:
    """mean in [0, 1] and std in (0, 1], one value or one per channel, of equal lengths."""
    mean = [mean] if _is_number(mean) else mean
    std = [std] if _is_number(std) else std
    for name, values in (("mean", mean), ("std", std)):
        if not isinstance(values, (list, tuple)) or not all(_is_number(v) for v in values):
            raise TypeError(f"For '{where}', the '{name}' must be a number or a sequence of numbers, got {values!r}.")
    if len(mean) != len(std):
        raise ValueError("Length of mean and std must be equal.")
    if not all(0 <= v <= 1 for v in mean):
        raise ValueError(f"For '{where}', the 'mean' must be in [0.0, 1.0], but got {mean!r}.")
    if not all(0 < v <= 1 for v in std):
        raise ValueError(f"For '{where}', the 'std' must be in (0.0, 1.0], but got {std!r}.")
    return list(mean), list(std)


def _check_colour_range(where: str, name: str, value, center: float, bound: tuple):
    if not (_is_number(value) or isinstance(value, (list, tuple))):
        raise TypeError(f"For '{where}', the '{name}' must be a number or a sequence, but got {value!r}.")
    if _is_number(value):
        if value < 0:
            raise ValueError(f"The input value of {name} cannot be negative.")
        if center == 0 and value > bound[1]:
            raise ValueError(f"For '{where}', the '{name}' must be in [0, {bound[1]}], but got {value}.")
        return value
    if len(value) != 2:
        raise TypeError(f"If {name} is a sequence, the length must be 2.")
    if value[0] > value[1]:
        raise ValueError(f"{name} value should be in (min,max) format. Got ({value[0]}, {value[1]}).")
    if not bound[0] <= value[0] <= value[1] <= bound[1]:
        raise ValueError(f"For '{where}', the '{name}' must lie in {list(bound)}, but got {value!r}.")
    return value


def _check_positive_degrees(where: str, degrees) -> tuple:
    if not isinstance(degrees, (list, tuple)):
        raise TypeError("degrees must be either a tuple or a list.")
    if not all(_is_number(v) for v in degrees):
        raise TypeError(f"For '{where}', the 'degrees' must hold numbers, but got {degrees!r}.")
    if len(degrees) != 2:
        raise ValueError("degrees must be a sequence with length 2.")
    if not all(v >= 0 for v in degrees):
        raise ValueError(f"For '{where}', the 'degrees' must not be negative, but got {degrees!r}.")
    if degrees[0] > degrees[1]:
        raise ValueError("degrees should be in (min,max) format. Got (max,min).")
    return float(degrees[0]), float(degrees[1])


def _check_is_hwc(where: str, is_hwc) -> bool:
    return _check_bool(where, "is_hwc", is_hwc)


# -- conversions ---------------------------------------------------------------------------------------------


class Decode(PyTensorOperation):
    """``Decode()``: encoded image bytes (bytes or a 1-D uint8 array) as an RGB PIL image."""

    random = False

    def __call__(self, img):
        return util.decode(img)


class ToPIL(PyTensorOperation):
    """``ToPIL()``: a decoded array (HW, or HWC with up to 4 channels) as a PIL image; a PIL image unchanged."""

    random = False

    def __call__(self, img):
        return util.to_pil(img)


class ToTensor(PyTensorOperation):
    """``ToTensor(output_type=np.float32)``: a PIL image or HWC / HW array as a CHW array divided by 255, of
    ``output_type`` (``vision.ToTensor``'s arithmetic; a bad ``output_type`` is a RuntimeError on the call)."""

    random = False

    def __init__(self, output_type=np.float32):
        self.output_type = output_type

    def __call__(self, img):
        return util.to_tensor(img, self.output_type)


class ToType(PyTensorOperation):
    """``ToType(output_type)``: the numpy image as ``output_type``."""

    random = False

    def __init__(self, output_type):
        self.output_type = output_type

    def __call__(self, img):
        return util.to_type(img, self.output_type)


class HWC2CHW(PyTensorOperation):
    """``HWC2CHW()``: an HWC numpy image as CHW; an HW image unchanged."""

    random = False

    def __call__(self, img):
        return util.hwc_to_chw(img)


class Normalize(PyTensorOperation):
    """``Normalize(mean, std)``: ``(img - mean[c]) / std[c]`` per channel of a CHW float image (after
    ``ToTensor``): mean in [0, 1] and std in (0, 1], one value or one per channel. An integer image is a
    NotImplementedError."""

    random = False

    def __init__(self, mean, std):
        self.mean, self.std = _check_normalize("Normalize", mean, std)

    def __call__(self, img):
        return util.normalize(img, self.mean, self.std)


class NormalizePad(PyTensorOperation):
    """``NormalizePad(mean, std, dtype="float32")``: ``Normalize``, then a channel of zeros after the others,
    as ``dtype`` ("float32" or "float16")."""

    random = False

    def __init__(self, mean, std, dtype="float32"):
        self.mean, self.std = _check_normalize("NormalizePad", mean, std)
        if not isinstance(dtype, str):
            raise TypeError(f"For 'NormalizePad', the 'dtype' must be a str, but got {type(dtype).__name__}.")
        if dtype not in ("float32", "float16"):
            raise ValueError(f"For 'NormalizePad', the 'dtype' must be 'float32' or 'float16', but got {dtype!r}.")
        self.dtype = dtype

    def __call__(self, img):
        return util.normalize(img, self.mean, self.std, pad_channel=True, dtype=self.dtype)


class Grayscale(PyTensorOperation):
    """``Grayscale(num_output_channels=1)``: the PIL image in grey (Pillow's ``convert("L")``), with 1 channel
    or 3 identical ones."""

    random = False

    def __init__(self, num_output_channels=1):
        if not _is_int(num_output_channels):
            raise TypeError(
                f"For 'Grayscale', the 'num_output_channels' must be an int, got {type(num_output_channels).__name__}."
            )
        if num_output_channels not in (1, 3):
            raise ValueError(f"For 'Grayscale', the 'num_output_channels' must be 1 or 3, got {num_output_channels}.")
        self.num_output_channels = num_output_channels

    def __call__(self, img):
        return util.grayscale(img, self.num_output_channels)


class RandomGrayscale(PyTensorOperation):
    """``RandomGrayscale(prob=0.1)``: with probability ``prob`` the PIL image in grey with as many channels
    as it has (mode "L": 1, else 3 identical ones), else unchanged."""

    random = True

    def __init__(self, prob=0.1):
        self.prob = check_prob("RandomGrayscale", prob)

    def __call__(self, img):
        if not util.is_pil(img):
            raise TypeError(util.augment_error_message.format(type(img)))
        channels = 1 if img.mode == "L" else 3
        return util.grayscale(img, channels) if self.prob > transform_rng().random() else img


class RgbToBgr(PyTensorOperation):
    """``RgbToBgr(is_hwc=False)``: RGB numpy images (CHW / NCHW, or HWC / NHWC with ``is_hwc``) as BGR."""

    random = False

    def __init__(self, is_hwc=False):
        self.is_hwc = _check_is_hwc("RgbToBgr", is_hwc)

    def __call__(self, rgb_imgs):
        return util.rgb_to_bgrs(rgb_imgs, self.is_hwc)


class RgbToHsv(PyTensorOperation):
    """``RgbToHsv(is_hwc=False)``: RGB numpy images (values in [0, 1]) as HSV, per pixel as Python's
    ``colorsys``."""

    random = False

    def __init__(self, is_hwc=False):
        self.is_hwc = _check_is_hwc("RgbToHsv", is_hwc)

    def __call__(self, rgb_imgs):
        return util.rgb_to_hsvs(rgb_imgs, self.is_hwc)


class HsvToRgb(PyTensorOperation):
    """``HsvToRgb(is_hwc=False)``: HSV numpy images as RGB, per pixel as Python's ``colorsys``."""

    random = False

    def __init__(self, is_hwc=False):
        self.is_hwc = _check_is_hwc("HsvToRgb", is_hwc)

    def __call__(self, hsv_imgs):
        return util.hsv_to_rgbs(hsv_imgs, self.is_hwc)


# -- geometry ------------------------------------------------------------------------------------------------


class Resize(PyTensorOperation):
    """``Resize(size, interpolation=Inter.BILINEAR)``: the PIL image resized to ``size`` (h, w), or its
    shorter side to an int ``size`` keeping the aspect (the other side truncated)."""

    random = False

    def __init__(self, size, interpolation=Inter.BILINEAR):
        if _is_int(size):
            if not 1 <= size <= _FLOAT_MAX_INTEGER:
                raise ValueError(f"For 'Resize', the 'size' must be positive, but got {size}.")
        else:
            _check_size("Resize", size)
        self.size = size if _is_int(size) else (int(size[0]), int(size[1]))
        self.interpolation = _check_inter("Resize", "interpolation", interpolation)

    def __call__(self, img):
        return util.resize(img, self.size, self.interpolation)


class CenterCrop(PyTensorOperation):
    """``CenterCrop(size)``: the central ``size`` box of the PIL image (an int: a square; (h, w)), zeros where
    the box passes the border."""

    random = False

    def __init__(self, size):
        self.size = _check_size("CenterCrop", size)

    def __call__(self, img):
        return util.center_crop(img, self.size)


class FiveCrop(PyTensorOperation):
    """``FiveCrop(size)``: the four corner crops and the central crop of ``size``, a tuple of five PIL images
    (top left, top right, bottom left, bottom right, centre)."""

    random = False

    def __init__(self, size):
        self.size = _check_size("FiveCrop", size)

    def __call__(self, img):
        return util.five_crop(img, self.size)


class TenCrop(PyTensorOperation):
    """``TenCrop(size, use_vertical_flip=False)``: ``FiveCrop`` of the image and of its mirror image (flipped
    left to right, or top to bottom with ``use_vertical_flip``), ten PIL images."""

    random = False

    def __init__(self, size, use_vertical_flip=False):
        size = _check_size("TenCrop", size)
        self.size = (size, size) if _is_int(size) else size
        self.use_vertical_flip = _check_bool("TenCrop", "use_vertical_flip", use_vertical_flip)

    def __call__(self, img):
        return util.ten_crop(img, self.size, self.use_vertical_flip)


class Pad(PyTensorOperation):
    """``Pad(padding, fill_value=0, padding_mode=Border.CONSTANT)``: the PIL image padded by ``padding`` (an
    int for all borders; 2 values: left and right, top and bottom; 4: left, top, right, bottom) with
    ``padding_mode``, ``fill_value`` (an int or R, G, B) for ``Border.CONSTANT`` (``vision.Pad``'s padding)."""

    random = False

    def __init__(self, padding, fill_value=0, padding_mode=Border.CONSTANT):
        self.padding = _check_padding("Pad", padding)
        self.fill_value = _check_fill("Pad", fill_value)
        self.padding_mode = _check_mode("Pad", padding_mode)

    def __call__(self, img):
        return util.pad(img, self.padding, self.fill_value, self.padding_mode)


class RandomCrop(PyTensorOperation):
    """``RandomCrop(size, padding=None, pad_if_needed=False, fill_value=0, padding_mode=Border.CONSTANT)``: a
    ``size`` crop at a random place of the PIL image after padding it as ``Pad`` (and, with ``pad_if_needed``,
    by the shortfall on both sides of a side shorter than the crop); the crop larger than the padded image is
    a ValueError."""

    random = True

    def __init__(self, size, padding=None, pad_if_needed=False, fill_value=0, padding_mode=Border.CONSTANT):
        self.size = _check_size("RandomCrop", size)
        self.padding = (0, 0, 0, 0) if padding is None else _check_padding("RandomCrop", padding)
        self.pad_if_needed = _check_bool("RandomCrop", "pad_if_needed", pad_if_needed)
        self.fill_value = _check_fill("RandomCrop", fill_value)
        self.padding_mode = _check_mode("RandomCrop", padding_mode)

    def __call__(self, img):
        return util.random_crop(img, self.size, self.padding, self.pad_if_needed, self.fill_value, self.padding_mode)


class RandomResizedCrop(PyTensorOperation):
    """``RandomResizedCrop(size, scale=(0.08, 1.0), ratio=(3/4, 4/3), interpolation=Inter.BILINEAR,
    max_attempts=10)``: a random box of area fraction in ``scale`` and aspect in ``ratio`` (log-uniform), the
    centre box of the clamped aspect when ``max_attempts`` draws do not fit, resized to ``size``."""

    random = True

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=Inter.BILINEAR,
                 max_attempts=10):  # fmt: skip
        self.size = _check_size("RandomResizedCrop", size)
        self.scale = _check_range("RandomResizedCrop", "scale", scale)
        self.ratio = _check_range("RandomResizedCrop", "ratio", ratio, positive=True)
        self.interpolation = _check_inter("RandomResizedCrop", "interpolation", interpolation)
        self.max_attempts = _check_positive_int("RandomResizedCrop", "max_attempts", max_attempts)

    def __call__(self, img):
        return util.random_resize_crop(img, self.size, self.scale, self.ratio, self.interpolation, self.max_attempts)


class RandomHorizontalFlip(PyTensorOperation):
    """``RandomHorizontalFlip(prob=0.5)``: the PIL image flipped left to right with probability ``prob``."""

    random = True

    def __init__(self, prob=0.5):
        self.prob = check_prob("RandomHorizontalFlip", prob)

    def __call__(self, img):
        return util.random_horizontal_flip(img, self.prob)


class RandomVerticalFlip(PyTensorOperation):
    """``RandomVerticalFlip(prob=0.5)``: the PIL image flipped top to bottom with probability ``prob``."""

    random = True

    def __init__(self, prob=0.5):
        self.prob = check_prob("RandomVerticalFlip", prob)

    def __call__(self, img):
        return util.random_vertical_flip(img, self.prob)


class RandomRotation(PyTensorOperation):
    """``RandomRotation(degrees, resample=Inter.NEAREST, expand=False, center=None, fill_value=0)``: the PIL
    image rotated counter-clockwise by an angle drawn from ``degrees`` (d: [-d, d]; or (min, max)) about
    ``center`` (x, y; None: the centre), Pillow's ``rotate``."""

    random = True

    def __init__(self, degrees, resample=Inter.NEAREST, expand=False, center=None, fill_value=0):
        self.degrees = _check_degrees("RandomRotation", degrees)
        self.resample = _check_inter("RandomRotation", "resample", resample)
        self.expand = _check_bool("RandomRotation", "expand", expand)
        if center is not None and not (
            isinstance(center, (list, tuple)) and len(center) == 2 and all(_is_number(v) for v in center)
        ):
            raise TypeError(f"For 'RandomRotation', the 'center' must be a sequence (x, y), but got {center!r}.")
        self.center = None if center is None else tuple(center)
        self.fill_value = _check_fill("RandomRotation", fill_value)

    def __call__(self, img):
        return util.random_rotation(img, self.degrees, self.resample, self.expand, self.center, self.fill_value)


class RandomAffine(PyTensorOperation):
    """``RandomAffine(degrees, translate=None, scale=None, shear=None, resample=Inter.NEAREST, fill_value=0)``:
    a random affine warp of the PIL image about its centre (``py_transforms_util.random_affine``): angle from
    ``degrees``, shifts up to ``translate`` (tx, ty) of the width and height, scale from ``scale`` (min, max),
    shears in degrees from ``shear`` (s: (-s, s) along x; (min, max) along x; 4 values: x then y)."""

    random = True

    def __init__(self, degrees, translate=None, scale=None, shear=None, resample=Inter.NEAREST, fill_value=0):
        self.degrees = _check_degrees("RandomAffine", degrees)
        if translate is not None:
            if not isinstance(translate, (list, tuple)) or not all(_is_number(v) for v in translate):
                raise TypeError(
                    f"For 'RandomAffine', the 'translate' must be a sequence of numbers, got {translate!r}."
                )
            if len(translate) not in (2, 4):
                raise TypeError("translate should be a list or tuple of length 2 or 4.")
            if not all(-1 <= v <= 1 for v in translate):
                raise ValueError(f"For 'RandomAffine', the 'translate' must be in [-1.0, 1.0], but got {translate!r}.")
        self.translate = translate
        if scale is not None:
            if not isinstance(scale, (list, tuple)) or not all(_is_number(v) for v in scale) or len(scale) != 2:
                raise TypeError("scale should be a list or tuple of length 2.")
            if scale[0] > scale[1]:
                raise ValueError("Input scale[1] must be equal to or greater than scale[0].")
            if scale[0] < 0 or scale[1] <= 0:
                raise ValueError(f"For 'RandomAffine', the 'scale' must be positive, but got {scale!r}.")
        self.scale_ranges = scale
        if shear is not None:
            if _is_number(shear):
                if shear <= 0:
                    raise ValueError(f"For 'RandomAffine', a number 'shear' must be positive, but got {shear}.")
                shear = (-float(shear), float(shear))
            elif isinstance(shear, (list, tuple)) and all(_is_number(v) for v in shear):
                if len(shear) not in (2, 4):
                    raise TypeError("shear must be of length 2 or 4.")
                if shear[0] > shear[1] or (len(shear) == 4 and shear[2] > shear[3]):
                    raise ValueError("Input shear[1] must be equal to or greater than shear[0].")
                shear = tuple(float(v) for v in shear)
            else:
                raise TypeError(f"For 'RandomAffine', the 'shear' must be a number or a sequence, but got {shear!r}.")
        self.shear = shear
        self.resample = _check_inter("RandomAffine", "resample", resample)
        self.fill_value = _check_fill("RandomAffine", fill_value)

    def __call__(self, img):
        return util.random_affine(
            img, self.degrees, self.translate, self.scale_ranges, self.shear, self.resample, self.fill_value
        )


class RandomPerspective(PyTensorOperation):
    """``RandomPerspective(distortion_scale=0.5, prob=0.5, interpolation=Inter.BICUBIC)``: with probability
    ``prob`` a perspective warp moving each corner of the PIL image inward by up to ``distortion_scale`` of
    half its width and height."""

    random = True

    def __init__(self, distortion_scale=0.5, prob=0.5, interpolation=Inter.BICUBIC):
        for name, value in (("distortion_scale", distortion_scale), ("prob", prob)):
            if not isinstance(value, float):
                raise TypeError(f"For 'RandomPerspective', the '{name}' must be a float, but got {value!r}.")
            if not 0 <= value <= 1:
                raise ValueError(f"For 'RandomPerspective', the '{name}' must be in [0, 1], but got {value}.")
        self.distortion_scale, self.prob = distortion_scale, prob
        self.interpolation = _check_inter("RandomPerspective", "interpolation", interpolation)

    def __call__(self, img):
        if not util.is_pil(img):
            raise ValueError("Input image should be a Pillow image.")
        if self.prob > transform_rng().random():
            start, end = util.get_perspective_params(img, self.distortion_scale)
            return util.perspective(img, start, end, self.interpolation)
        return img


# -- colour ----------------------------------------------------------------------------------------------------


class RandomColorAdjust(PyTensorOperation):
    """``RandomColorAdjust(brightness=(1, 1), contrast=(1, 1), saturation=(1, 1), hue=(0, 0))``: brightness,
    contrast, saturation and hue factors drawn from their ranges (a number b: [max(0, 1 - b), 1 + b]; hue h
    in [0, 0.5]: [-h, h]; or (min, max)) and applied to the PIL image with Pillow in a random order."""

    random = True

    def __init__(self, brightness=(1, 1), contrast=(1, 1), saturation=(1, 1), hue=(0, 0)):
        big = (0, _FLOAT_MAX_INTEGER)
        self.brightness = _check_colour_range("RandomColorAdjust", "brightness", brightness, 1, big)
        self.contrast = _check_colour_range("RandomColorAdjust", "contrast", contrast, 1, big)
        self.saturation = _check_colour_range("RandomColorAdjust", "saturation", saturation, 1, big)
        self.hue = _check_colour_range("RandomColorAdjust", "hue", hue, 0, (-0.5, 0.5))

    def __call__(self, img):
        return util.random_color_adjust(img, self.brightness, self.contrast, self.saturation, self.hue)


class RandomColor(PyTensorOperation):
    """``RandomColor(degrees=(0.1, 1.9))``: Pillow's colour balance by a factor drawn from ``degrees``
    (0: grey, 1: the image)."""

    random = True

    def __init__(self, degrees=(0.1, 1.9)):
        self.degrees = _check_positive_degrees("RandomColor", degrees)

    def __call__(self, img):
        return util.random_color(img, self.degrees)


class RandomSharpness(PyTensorOperation):
    """``RandomSharpness(degrees=(0.1, 1.9))``: Pillow's sharpness by a factor drawn from ``degrees`` (0:
    blurred, 1: the image, 2: sharpened)."""

    random = True

    def __init__(self, degrees=(0.1, 1.9)):
        self.degrees = _check_positive_degrees("RandomSharpness", degrees)

    def __call__(self, img):
        return util.random_sharpness(img, self.degrees)


class RandomLighting(PyTensorOperation):
    """``RandomLighting(alpha=0.05)``: AlexNet's PCA colour noise of strength ``alpha`` on the RGB PIL image."""

    random = True

    def __init__(self, alpha=0.05):
        if not _is_number(alpha):
            raise TypeError(f"For 'RandomLighting', the 'alpha' must be a float, but got {type(alpha).__name__}.")
        if alpha < 0:
            raise ValueError(f"For 'RandomLighting', the 'alpha' must not be negative, but got {alpha}.")
        self.alpha = float(alpha)

    def __call__(self, img):
        return util.random_lighting(img, self.alpha)


class AdjustGamma(PyTensorOperation):
    """``AdjustGamma(gamma, gain=1.0)``: each value v of the PIL image as
    ``(256 - 1e-3) * gain * (v / 255) ** gamma`` (``gamma`` >= 0)."""

    random = False

    def __init__(self, gamma, gain=1.0):
        if not _is_number(gamma):
            raise TypeError(f"For 'AdjustGamma', the 'gamma' must be a float, but got {type(gamma).__name__}.")
        if not _is_number(gain):
            raise TypeError(f"For 'AdjustGamma', the 'gain' must be a float, but got {type(gain).__name__}.")
        if gamma < 0:
            raise ValueError(f"For 'AdjustGamma', the 'gamma' must not be negative, but got {gamma}.")
        self.gamma, self.gain = gamma, gain

    def __call__(self, img):
        return util.adjust_gamma(img, self.gamma, self.gain)


class AutoContrast(PyTensorOperation):
    """``AutoContrast(cutoff=0.0, ignore=None)``: Pillow's ``ImageOps.autocontrast`` (``cutoff`` percent in
    [0, 50) cut from each end of the histogram; ``ignore`` levels in [0, 255] not counted)."""

    random = False

    def __init__(self, cutoff=0.0, ignore=None):
        if not _is_number(cutoff):
            raise TypeError(f"For 'AutoContrast', the 'cutoff' must be a float, but got {type(cutoff).__name__}.")
        if not 0 <= cutoff < 50:
            raise ValueError(f"For 'AutoContrast', the 'cutoff' must be in [0, 50), but got {cutoff}.")
        if ignore is not None:
            values = [ignore] if _is_int(ignore) else ignore
            if not isinstance(values, (list, tuple)) or not all(_is_int(v) for v in values):
                raise TypeError(
                    f"For 'AutoContrast', the 'ignore' must be an int or a sequence of ints, got {ignore!r}."
                )
            if not all(0 <= v <= 255 for v in values):
                raise ValueError(f"For 'AutoContrast', the 'ignore' must be in [0, 255], but got {ignore!r}.")
        self.cutoff, self.ignore = cutoff, ignore

    def __call__(self, img):
        return util.auto_contrast(img, self.cutoff, self.ignore)


class Equalize(PyTensorOperation):
    """``Equalize()``: Pillow's ``ImageOps.equalize`` of the PIL image."""

    random = False

    def __call__(self, img):
        return util.equalize(img)


class Invert(PyTensorOperation):
    """``Invert()``: Pillow's ``ImageOps.invert`` (255 minus each value) of the PIL image."""

    random = False

    def __call__(self, img):
        return util.invert_color(img)


# -- numpy images ----------------------------------------------------------------------------------------------


class Cutout(PyTensorOperation):
    """``Cutout(length, num_patches=1)``: ``num_patches`` times, a ``length`` square centred at a uniform point
    of the CHW numpy image (x in [0, W], y in [0, H]), clipped to the image and of side ``2 * (length // 2)``,
    set to 0. A ``length`` not below both sides leaves the image unchanged; above either, a ValueError."""

    random = True

    def __init__(self, length, num_patches=1):
        self.length = _check_positive_int("Cutout", "length", length)
        self.num_patches = _check_positive_int("Cutout", "num_patches", num_patches)

    def __call__(self, np_img):
        if not isinstance(np_img, np.ndarray):
            raise TypeError(f"img should be NumPy array. Got {type(np_img)}.")
        if np_img.ndim != 3:
            raise TypeError(f"img dimension should be 3. Got {np_img.ndim}.")
        _, height, width = np_img.shape
        if self.length > height or self.length > width:
            raise ValueError(
                f"Patch length is too large, got patch length: {self.length} and image height: {height}, image "
                f"width: {width}"
            )
        scale = self.length * self.length / (height * width)
        for _ in range(self.num_patches):
            top, left, h, w, value = get_erase_params(np_img, (scale, scale), (1, 1), 0, False, 1)
            np_img = erase(np_img, top, left, h, w, value)
        return np_img


class LinearTransformation(PyTensorOperation):
    """``LinearTransformation(transformation_matrix, mean_vector)``: the flattened numpy image minus
    ``mean_vector`` (D,), times ``transformation_matrix`` (D, D), in the image's shape."""

    random = False

    def __init__(self, transformation_matrix, mean_vector):
        for name, value in (("transformation_matrix", transformation_matrix), ("mean_vector", mean_vector)):
            if not isinstance(value, np.ndarray):
                raise TypeError(f"For 'LinearTransformation', the '{name}' must be a numpy.ndarray, got {type(value)}.")
        if transformation_matrix.shape[0] != transformation_matrix.shape[1]:
            raise ValueError(
                f"transformation_matrix should be a square matrix. Got shape {transformation_matrix.shape} instead."
            )
        if mean_vector.shape[0] != transformation_matrix.shape[0]:
            raise ValueError(
                f"mean_vector length {mean_vector.shape[0]} should match either one dimension of the square "
                f"transformation_matrix {transformation_matrix.shape}."
            )
        self.transformation_matrix, self.mean_vector = transformation_matrix, mean_vector

    def __call__(self, np_img):
        return util.linear_transform(np_img, self.transformation_matrix, self.mean_vector)


class MixUp(PyTensorOperation):
    """``MixUp(batch_size, alpha, is_single=True)``: a batch of images (N, C, H, W) and one-hot labels mixed
    with weights l ~ Beta(alpha, alpha) per image: with the next image of the batch (``is_single``), else with
    the previous batch's mixed result (the first batch unchanged)."""

    random = True

    def __init__(self, batch_size, alpha, is_single=True):
        self.batch_size = _check_positive_int("MixUp", "batch_size", batch_size)
        if not _is_number(alpha):
            raise TypeError(f"For 'MixUp', the 'alpha' must be a float, but got {type(alpha).__name__}.")
        if alpha <= 0:
            raise ValueError(f"For 'MixUp', the 'alpha' must be positive, but got {alpha}.")
        self.alpha = float(alpha)
        self.is_single = _check_bool("MixUp", "is_single", is_single)
        self.image, self.label, self.is_first = 0, 0, True

    def __call__(self, image, label):
        if self.is_single:
            return util.mix_up_single(self.batch_size, image, label, self.alpha)
        return util.mix_up_muti(self, self.batch_size, image, label, self.alpha)


class UniformAugment(PyTensorOperation):
    """``UniformAugment(transforms, num_ops=2)``: ``num_ops`` of ``transforms`` (a list) chosen without
    replacement, each applied with a random probability (``py_transforms_util.uniform_augment``)."""

    random = True

    def __init__(self, transforms, num_ops=2):
        if not isinstance(transforms, list):
            raise TypeError(f"For 'UniformAugment', the 'transforms' must be a list, but got {type(transforms)}.")
        if not transforms:
            raise ValueError("transforms list is empty.")
        if not _is_int(num_ops):
            raise TypeError(f"For 'UniformAugment', the 'num_ops' must be an int, but got {type(num_ops).__name__}.")
        if num_ops <= 0:
            raise ValueError(f"For 'UniformAugment', the 'num_ops' must be positive, but got {num_ops}.")
        if num_ops > len(transforms):
            raise ValueError("num_ops cannot be greater than the length of transforms list.")
        self.transforms, self.num_ops = transforms, num_ops

    def __call__(self, img):
        return util.uniform_augment(img, list(self.transforms), self.num_ops)


def _compose_numpy(transforms, img):
    if not isinstance(img, np.ndarray):
        raise TypeError(f"img should be NumPy ndarray. Got {type(img)}.")
    for transform in transforms:
        img = transform(img)
    if not isinstance(img, np.ndarray):
        raise TypeError(f"img should be NumPy ndarray. Got {type(img)}. Append ToTensor() to transforms")
    return img


class ComposeOp:
    """MindSpore 0.x's ``ComposeOp(transforms)``: called with no argument, gives the function that runs
    ``transforms`` in order on a numpy image and returns a numpy array (a TypeError otherwise: end with
    ``ToTensor``)."""

    def __init__(self, transforms):
        if not isinstance(transforms, list) or not all(callable(t) for t in transforms):
            raise TypeError(f"For 'ComposeOp', the 'transforms' must be a list of callables, but got {transforms!r}.")
        self.transforms = transforms

    def __call__(self):
        return functools.partial(_compose_numpy, list(self.transforms))
