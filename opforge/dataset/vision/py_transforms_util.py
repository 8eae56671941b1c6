"""MindSpore 1.x's ``dataset.vision.py_transforms_util``: the functions the Python (Pillow) transforms of
``vision.py_transforms`` are made of, with MindSpore's names and arguments. The zoo's AutoAugment program
builds its own operations on them (``is_pil``, ``augment_error_message``, ``random_crop``, ``rotate``,
``adjust_brightness``, ...).

Images are PIL images unless a function says numpy: ``to_tensor`` turns one into a CHW float array in [0, 1]
and the array functions (``normalize``, ``erase``, ``linear_transform``, the colour-space conversions) work on
CHW (or HWC with ``is_hwc``) arrays. Random draws come from opforge's transform generator: the dataset seed
(``dataset.config.set_seed``) when it is set (MindSpore's draw from Python's ``random``). Geometry that opforge
already has on arrays is shared: ``random_crop`` and ``pad`` pad as ``vision.RandomCrop`` / ``vision.Pad``
(opforge/dataset/vision/random_crop.py), ``random_resize_crop`` draws its box as ``vision.RandomResizedCrop``
(resized_crop.py: MindSpore's C++ rounding, a box side at least 1), the erasing steps are erase.py's. Pillow
does the resampling, colour enhancement, rotation and affine warps, as in MindSpore.

Pillow is imported on use (as by opforge's other vision modules: matplotlib's dependency, installed with the
demo and test extras), so that ``opforge.dataset.vision`` imports without it."""

from __future__ import annotations

import colorsys
import io
import math
import numbers

import numpy as np

from opforge.dataset.vision.erase import erase, get_erase_params
from opforge.dataset.vision.random_crop import RandomCrop, _borders, _fill, _pad
from opforge.dataset.vision.random_source import transform_rng
from opforge.dataset.vision.resize import Inter
from opforge.dataset.vision.resized_crop import crop_box

__all__ = [
    "augment_error_message", "is_pil", "is_numpy", "normalize", "decode", "hwc_to_chw", "to_tensor", "to_pil",
    "to_type", "horizontal_flip", "vertical_flip", "random_horizontal_flip", "random_vertical_flip", "crop",
    "resize", "center_crop", "random_resize_crop", "random_crop", "adjust_brightness", "adjust_contrast",
    "adjust_saturation", "adjust_hue", "adjust_gamma", "rotate", "random_color_adjust", "random_lighting",
    "random_rotation", "five_crop", "ten_crop", "grayscale", "pad", "get_perspective_params", "perspective",
    "get_erase_params", "erase", "linear_transform", "random_affine", "mix_up_single", "mix_up_muti",
    "rgb_to_bgrs", "rgb_to_hsvs", "hsv_to_rgbs", "random_color", "random_sharpness", "auto_contrast",
    "invert_color", "equalize", "uniform_augment", "pil_resample",
]  # fmt: skip

augment_error_message = "img should be PIL image. Got {}. Use Decode() for encoded data or ToPIL() for decoded data."


def _pil():
    """Pillow's modules (Image, ImageEnhance, ImageOps), imported on use (module docstring)."""
    from PIL import Image, ImageEnhance, ImageOps

    return Image, ImageEnhance, ImageOps


def is_pil(img) -> bool:
    """Whether ``img`` is a PIL image."""
    return isinstance(img, _pil()[0].Image)


def is_numpy(img) -> bool:
    """Whether ``img`` is a numpy array."""
    return isinstance(img, np.ndarray)


def _require_pil(img):
    if not is_pil(img):
        raise TypeError(augment_error_message.format(type(img)))
    return img


def pil_resample(interpolation):
    """The Pillow filter of an ``Inter`` mode, as MindSpore's Python transforms map them: NEAREST, ANTIALIAS
    (Lanczos), BILINEAR (LINEAR), BICUBIC (CUBIC). Other modes (AREA, PILCUBIC) have none there."""
    image = _pil()[0]
    filters = {
        Inter.NEAREST: image.Resampling.NEAREST, Inter.ANTIALIAS: image.Resampling.LANCZOS,
        Inter.BILINEAR: image.Resampling.BILINEAR, Inter.BICUBIC: image.Resampling.BICUBIC,
    }  # fmt: skip
    if interpolation not in filters:
        raise ValueError(
            "The Python transforms take Inter.NEAREST, Inter.ANTIALIAS, Inter.BILINEAR or Inter.BICUBIC, but got "
            f"{interpolation!r}."
        )
    return filters[interpolation]


def _like(array: np.ndarray, img):
    """A PIL image of ``array`` in ``img``'s mode (its palette kept for a "P" image)."""
    out = _pil()[0].fromarray(np.ascontiguousarray(array))
    if img.mode == "P":
        out.putpalette(img.getpalette())
    return out


# -- conversions ---------------------------------------------------------------------------------------------


def normalize(img, mean, std, pad_channel=False, dtype="float32"):
    """``(img - mean[c]) / std[c]`` per channel of a CHW float array (mean and std of one value or one per
    channel, cast to the image's dtype); with ``pad_channel`` a channel of zeros after the others (float16
    with ``dtype`` "float16")."""
    if not is_numpy(img):
        raise TypeError(f"img should be NumPy image. Got {type(img)}.")
    if img.ndim != 3:
        raise TypeError(f"img dimension should be 3. Got {img.ndim}.")
    if np.issubdtype(img.dtype, np.integer):
        raise NotImplementedError(
            f"Unsupported image datatype: [{img.dtype}], pls execute [ToTensor] before [Normalize]."
        )
    channels = img.shape[0]
    mean, std = list(mean), list(std)
    if len(mean) != len(std):
        raise ValueError("Length of mean and std must be equal.")
    if len(mean) == 1:
        mean, std = mean * channels, std * channels
    elif len(mean) != channels:
        raise ValueError(f"Length of mean and std must both be 1 or equal to the number of channels({channels}).")
    mean, std = np.array(mean, dtype=img.dtype), np.array(std, dtype=img.dtype)
    image = (img - mean[:, None, None]) / std[:, None, None]
    if pad_channel:
        image = np.concatenate((image, np.zeros((1,) + image.shape[1:], np.float32)), axis=0)
        if dtype == "float16":
            image = image.astype(np.float16)
    return image


def decode(img):
    """An encoded image (bytes, or a 1-D uint8 array of a file's bytes) decoded to an RGB PIL image."""
    image = _pil()[0]
    if is_pil(img):
        raise ValueError("Failed to decode, Image might already be decoded.")
    try:
        data = img if isinstance(img, bytes) else np.asarray(img).tobytes()
        return image.open(io.BytesIO(data)).convert("RGB")
    except OSError as e:  # Pillow's UnidentifiedImageError and truncated files are OSErrors
        raise ValueError(f"{e}\n: Failed to decode given image.") from e


def hwc_to_chw(img):
    """An HWC array as CHW (a copy); an HW array as it is."""
    if not is_numpy(img):
        raise TypeError(f"img should be NumPy array. Got {type(img)}.")
    if img.ndim not in (2, 3):
        raise TypeError(f"img dimension should be 2 or 3. Got {img.ndim}.")
    return img if img.ndim == 2 else img.transpose(2, 0, 1).copy()


def to_type(img, output_type):
    """The array as ``output_type``."""
    if not is_numpy(img):
        raise TypeError(f"img should be NumPy image. Got {type(img)}.")
    try:
        return img.astype(output_type)
    except Exception as e:
        raise RuntimeError(f"output_type: {output_type} is not a valid datatype.") from e


def to_tensor(img, output_type):
    """A PIL image or an HWC / HW array as a CHW array divided by 255, of ``output_type``."""
    if not (is_pil(img) or is_numpy(img)):
        raise TypeError(f"The input image should be of type numpy.ndarray or PIL.Image.Image. Got {type(img)}.")
    img = np.asarray(img)
    if img.ndim not in (2, 3):
        raise TypeError(f"The dimension of input image should be 2 or 3. Got {img.ndim}.")
    if img.ndim == 2:
        img = img[:, :, None]
    return to_type(hwc_to_chw(img) / 255.0, output_type)


def to_pil(img):
    """A decoded array (HW, or HWC with up to 4 channels) as a PIL image; a PIL image as it is. One channel
    may be bool, int8/16/32, uint8/16/32, float32 or float64; 2 to 4 channels uint8 (Pillow's modes)."""
    if is_pil(img):
        return img
    if not is_numpy(img):
        raise TypeError(f"The input image should be of type numpy.ndarray or PIL.Image.Image. Got {type(img)}.")
    if img.ndim not in (2, 3):
        raise ValueError(f"The dimension of input image should be 2 or 3. Got {img.ndim}.")
    if img.ndim == 2:
        img = img[:, :, None]
    if img.shape[-1] > 4:
        raise ValueError(f"The channel of input image should not exceed 4. Got {img.shape[-1]}.")
    if img.shape[-1] == 1:
        allowed = (np.bool_, np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32, np.float32, np.float64)
        if img.dtype.type not in allowed:
            raise TypeError(
                f"The input image type {img.dtype} is not supported when image shape is [H, W] or [H, W, 1]."
            )
        img = img[:, :, 0]
    elif img.dtype != np.uint8:
        raise TypeError(
            f"The input image type {img.dtype} is not supported when image shape is [H, W, 2], [H, W, 3] or [H, W, 4]."
        )
    return _pil()[0].fromarray(np.ascontiguousarray(img))


# -- geometry ------------------------------------------------------------------------------------------------


def horizontal_flip(img):
    return _require_pil(img).transpose(_pil()[0].Transpose.FLIP_LEFT_RIGHT)


def vertical_flip(img):
    return _require_pil(img).transpose(_pil()[0].Transpose.FLIP_TOP_BOTTOM)


def random_horizontal_flip(img, prob):
    """The image flipped left to right with probability ``prob``."""
    _require_pil(img)
    return horizontal_flip(img) if prob > transform_rng().random() else img


def random_vertical_flip(img, prob):
    """The image flipped top to bottom with probability ``prob``."""
    _require_pil(img)
    return vertical_flip(img) if prob > transform_rng().random() else img


def crop(img, top, left, height, width):
    """The box of ``height`` x ``width`` at (``top``, ``left``) (Pillow fills what lies outside with 0)."""
    return _require_pil(img).crop((left, top, left + width, top + height))


def _hw(size) -> tuple:
    if isinstance(size, int) and not isinstance(size, bool):
        return size, size
    if isinstance(size, (tuple, list)) and len(size) == 2:
        return int(size[0]), int(size[1])
    raise TypeError("Size should be a single integer or a list/tuple (h, w) of length 2.")


def resize(img, size, interpolation=Inter.BILINEAR):
    """Resized to ``size`` (height, width), or with an int the shorter side to ``size`` and the other to
    ``int(size * aspect)`` (truncated; the image itself when the shorter side already is ``size``). The
    interpolation: an ``Inter`` mode or a Pillow filter."""
    _require_pil(img)
    if not (isinstance(size, int) or (isinstance(size, (list, tuple)) and len(size) == 2)):
        raise TypeError(f"Size should be a single number or a list/tuple (h, w) of length 2.Got {size}.")
    resample = interpolation if isinstance(interpolation, int) else pil_resample(interpolation)
    width, height = img.size
    if isinstance(size, int):
        if (width <= height and width == size) or (height <= width and height == size):
            return img
        aspect = width / height
        out = (size, int(size / aspect)) if width < height else (int(size * aspect), size)
        return img.resize(out, resample)
    return img.resize((int(size[1]), int(size[0])), resample)


def center_crop(img, size):
    """The central ``size`` box ((height, width), or an int for a square), its corner at
    ``round((H - h) / 2)``, ``round((W - w) / 2)`` (Python's rounding)."""
    _require_pil(img)
    crop_h, crop_w = _hw(size)
    width, height = img.size
    return crop(img, int(round((height - crop_h) / 2.0)), int(round((width - crop_w) / 2.0)), crop_h, crop_w)


def random_resize_crop(img, size, scale, ratio, interpolation=Inter.BILINEAR, max_attempts=10):
    """A random box of area fraction in ``scale`` and aspect in ``ratio`` (``vision.RandomResizedCrop``'s
    draws), resized to ``size``."""
    _require_pil(img)
    out_h, out_w = _hw(size)
    if scale[0] > scale[1] or ratio[0] > ratio[1]:
        raise ValueError("Range should be in the order of (min, max).")
    width, height = img.size
    top, left, h, w = crop_box(height, width, tuple(scale), tuple(ratio), max_attempts, transform_rng())
    return resize(crop(img, top, left, h, w), (out_h, out_w), interpolation)


def random_crop(img, size, padding, pad_if_needed, fill_value, padding_mode):
    """``vision.RandomCrop(size, padding, pad_if_needed, fill_value, padding_mode)`` on the image's pixels:
    padded by ``padding`` (an int, 2 values: left and right, top and bottom, or 4: left, top, right, bottom),
    with ``pad_if_needed`` by the shortfall on both sides of a side shorter than the crop, then a ``size``
    crop at a uniform top, then left."""
    _require_pil(img)
    size = _hw(size)
    padding = None if padding is None else (padding if isinstance(padding, int) else tuple(padding))
    op = RandomCrop(size, padding, pad_if_needed, fill_value, padding_mode)
    return _like(op(np.asarray(img)), img)


def pad(img, padding, fill_value, padding_mode):
    """The image padded by ``padding`` (an int, 2 values: left and right, top and bottom, or 4: left, top,
    right, bottom) with ``padding_mode`` ('constant' with ``fill_value``: an int or R, G, B; 'edge', 'reflect',
    'symmetric')."""
    _require_pil(img)
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be 'constant', 'edge', 'reflect', or 'symmetric'.")
    borders = _borders(padding if isinstance(padding, int) else tuple(padding))
    return _like(_pad(np.asarray(img), *borders, padding_mode, _fill(fill_value)), img)


def five_crop(img, size):
    """The four corner crops and the central crop of ``size``: (top_left, top_right, bottom_left,
    bottom_right, center)."""
    _require_pil(img)
    crop_h, crop_w = _hw(size)
    width, height = img.size
    if crop_h > height or crop_w > width:
        raise ValueError(f"Crop size {(crop_h, crop_w)} is larger than input image size {(height, width)}.")
    return (
        img.crop((0, 0, crop_w, crop_h)),
        img.crop((width - crop_w, 0, width, crop_h)),
        img.crop((0, height - crop_h, crop_w, height)),
        img.crop((width - crop_w, height - crop_h, width, height)),
        center_crop(img, (crop_h, crop_w)),
    )


def ten_crop(img, size, use_vertical_flip=False):
    """``five_crop`` of the image, then of the image flipped (top to bottom with ``use_vertical_flip``, else
    left to right)."""
    _require_pil(img)
    flipped = vertical_flip(img) if use_vertical_flip else horizontal_flip(img)
    return five_crop(img, size) + five_crop(flipped, size)


def _fill_color(img, fill_value):
    """A fill colour for Pillow: an int for one-band images, else a tuple per band."""
    values = (fill_value,) * 3 if isinstance(fill_value, int) else tuple(fill_value)
    bands = len(img.getbands())
    return values[0] if bands == 1 else values + (255,) * (bands - len(values))


def rotate(img, angle, resample, expand, center, fill_value):
    """The image rotated counter-clockwise by ``angle`` degrees about ``center`` (x, y; None: the image's
    centre) with Pillow; ``expand`` grows the output to hold the whole rotated image; uncovered pixels take
    ``fill_value``. Inter.ANTIALIAS only for multiples of 90 degrees about the centre."""
    _require_pil(img)
    angle = angle % 360.0
    resample = pil_resample(resample) if isinstance(resample, str) else resample
    if resample == pil_resample(Inter.ANTIALIAS) and (angle not in (0, 90, 180, 270) or center):
        raise ValueError(
            "When using Inter.ANTIALIAS, center needs to be None and angle needs to be an integer multiple of 90."
        )
    return img.rotate(angle, resample, expand, center, fillcolor=_fill_color(img, fill_value))


def random_rotation(img, degrees, resample, expand, center, fill_value):
    """``rotate`` by an angle drawn uniformly from ``degrees`` ((min, max), or d: (-d, d))."""
    _require_pil(img)
    if isinstance(degrees, numbers.Number):
        if degrees < 0:
            raise ValueError("If degrees is a single number, it cannot be negative.")
        degrees = (-degrees, degrees)
    elif isinstance(degrees, (list, tuple)):
        if len(degrees) != 2:
            raise ValueError("If degrees is a sequence, the length must be 2.")
    else:
        raise TypeError("Degrees must be a single non-negative number or a sequence.")
    angle = transform_rng().uniform(degrees[0], degrees[1])
    return rotate(img, angle, resample, expand, center, fill_value)


def random_affine(img, angle, translations, scale, shear, resample, fill_value=0):
    """A random affine warp about the image's centre ((W + 1) / 2, (H + 1) / 2 in Pillow's pixel-corner
    coordinates), as MindSpore's: an angle from ``angle`` (min, max), a translation rounded from
    U(-tx W, tx W), U(-ty H, ty H) (``translations`` (tx, ty), or None), a scale from ``scale`` (min, max; or
    None), shears in degrees from ``shear`` ((min, max) along x; 4 values: x then y; a number s: (-s, s);
    None: none). Output pixel p takes the input at ``c + A^-1 (p - c - t)``, A the rotation-shear-scale
    matrix ``scale * [[cos(a + sy), -sin(a + sx)], [sin(a + sy), cos(a + sx)]]``."""
    if not is_pil(img):
        raise ValueError("Input image should be a Pillow image.")
    rng = transform_rng()
    rotation = math.radians(rng.uniform(angle[0], angle[1]))
    if translations is not None:
        max_dx, max_dy = translations[0] * img.size[0], translations[1] * img.size[1]
        shift = (float(np.round(rng.uniform(-max_dx, max_dx))), float(np.round(rng.uniform(-max_dy, max_dy))))
    else:
        shift = (0.0, 0.0)
    factor = rng.uniform(scale[0], scale[1]) if scale is not None else 1.0
    if shear is None:
        shears = (0.0, 0.0)
    elif isinstance(shear, numbers.Number):
        shears = (float(rng.uniform(-shear, shear)), 0.0)
    elif len(shear) == 2:
        shears = (float(rng.uniform(shear[0], shear[1])), 0.0)
    elif len(shear) == 4:
        shears = (float(rng.uniform(shear[0], shear[1])), float(rng.uniform(shear[2], shear[3])))
    else:
        raise ValueError(f"Shear should be a single value or a tuple/list containing two values. Got {shear}.")
    sx, sy = math.radians(shears[0]), math.radians(shears[1])
    forward = factor * np.array(
        [[math.cos(rotation + sy), -math.sin(rotation + sx)], [math.sin(rotation + sy), math.cos(rotation + sx)]]
    )
    inverse = np.linalg.inv(forward)
    cx, cy = img.size[0] * 0.5 + 0.5, img.size[1] * 0.5 + 0.5
    offset = np.array([cx, cy]) - inverse @ np.array([cx + shift[0], cy + shift[1]])
    coeffs = [inverse[0, 0], inverse[0, 1], offset[0], inverse[1, 0], inverse[1, 1], offset[1]]
    resample = pil_resample(resample) if isinstance(resample, str) else resample
    return img.transform(img.size, _pil()[0].Transform.AFFINE, coeffs, resample, fillcolor=_fill_color(img, fill_value))


def get_perspective_params(img, distortion_scale):
    """The four corners (top left, top right, bottom right, bottom left) and where each moves: inward by up
    to ``distortion_scale`` of half the width and height, drawn uniformly (integers)."""
    width, height = img.size
    half_w, half_h = int(width / 2 * distortion_scale), int(height / 2 * distortion_scale)
    rng = transform_rng()

    def draw(low, high):
        return int(rng.integers(low, high + 1))

    top_left = (draw(0, half_w), draw(0, half_h))
    top_right = (draw(width - half_w - 1, width - 1), draw(0, half_h))
    bottom_right = (draw(width - half_w - 1, width - 1), draw(height - half_h - 1, height - 1))
    bottom_left = (draw(0, half_w), draw(height - half_h - 1, height - 1))
    start = [(0, 0), (width - 1, 0), (width - 1, height - 1), (0, height - 1)]
    return start, [top_left, top_right, bottom_right, bottom_left]


def perspective(img, start_points, end_points, interpolation=Inter.BICUBIC):
    """The perspective warp taking ``start_points`` to ``end_points`` (Pillow's 8 coefficients map each
    output point back to its input point, solved by least squares)."""
    _require_pil(img)
    rows, rhs = [], []
    for (x_out, y_out), (x_in, y_in) in zip(end_points, start_points):
        rows.append([x_out, y_out, 1, 0, 0, 0, -x_in * x_out, -x_in * y_out])
        rows.append([0, 0, 0, x_out, y_out, 1, -y_in * x_out, -y_in * y_out])
        rhs.extend([x_in, y_in])
    coeffs = np.linalg.lstsq(np.array(rows, np.float64), np.array(rhs, np.float64), rcond=None)[0]
    resample = pil_resample(interpolation) if isinstance(interpolation, str) else interpolation
    return img.transform(img.size, _pil()[0].Transform.PERSPECTIVE, coeffs.tolist(), resample)


# -- colour ----------------------------------------------------------------------------------------------------


def adjust_brightness(img, brightness_factor):
    """Pillow's ``ImageEnhance.Brightness``: 0 black, 1 the image."""
    return _pil()[1].Brightness(_require_pil(img)).enhance(brightness_factor)


def adjust_contrast(img, contrast_factor):
    """Pillow's ``ImageEnhance.Contrast``: 0 the mean grey, 1 the image."""
    return _pil()[1].Contrast(_require_pil(img)).enhance(contrast_factor)


def adjust_saturation(img, saturation_factor):
    """Pillow's ``ImageEnhance.Color``: 0 the grey image, 1 the image."""
    return _pil()[1].Color(_require_pil(img)).enhance(saturation_factor)


def adjust_hue(img, hue_factor):
    """The HSV hue (stored in 0..255) shifted by ``int(hue_factor * 255)`` modulo 256 (``hue_factor`` in
    [-0.5, 0.5]), back in the image's mode; grey and float modes (L, 1, I, F) unchanged."""
    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"image_hue_factor {hue_factor} is not in [-0.5, 0.5].")
    image = _pil()[0]
    _require_pil(img)
    if img.mode in {"L", "1", "I", "F"}:
        return img
    hue, saturation, value = img.convert("HSV").split()
    shifted = ((np.asarray(hue, np.int64) + int(hue_factor * 255)) % 256).astype(np.uint8)
    return image.merge("HSV", (image.fromarray(shifted), saturation, value)).convert(img.mode)


def adjust_gamma(img, gamma, gain):
    """Each value v replaced by ``(256 - 1e-3) * gain * (v / 255) ** gamma`` (Pillow's ``point``: rounded and
    saturated), on 1- or 3-band images."""
    if not is_pil(img):
        raise TypeError(f"img should be PIL image. Got {type(img)}.")
    table = [(255 + 1 - 1e-3) * gain * pow(x / 255.0, gamma) for x in range(256)]
    bands = len(img.split())
    if bands == 3:
        return img.point(table * 3)
    if bands == 1:
        return img.point(table)
    return img


def _factor(value, name, center=1.0, bound=(0.0, float("inf")), non_negative=True) -> float:
    rng = transform_rng()
    if isinstance(value, numbers.Number):
        if value < 0:
            raise ValueError(f"The input value of {name} cannot be negative.")
        low, high = center - value, center + value
        if non_negative:
            low = max(0.0, low)
    elif isinstance(value, (list, tuple)) and len(value) == 2:
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"Please check your value range of {name} is valid and within the bound {bound}.")
        low, high = value
    else:
        raise TypeError(f"Input of {name} should be either a single value, or a list/tuple of length 2.")
    return float(rng.uniform(low, high))


def random_color_adjust(img, brightness, contrast, saturation, hue):
    """Brightness, contrast, saturation and hue factors drawn uniformly from their ranges (a number b: [max(0,
    1 - b), 1 + b], hue h: [-h, h]; or (min, max)), then the four adjustments applied in a random order (each
    one, also at factor 1 or hue 0, as MindSpore's)."""
    _require_pil(img)
    factors = (
        _factor(brightness, "brightness"),
        _factor(contrast, "contrast"),
        _factor(saturation, "saturation"),
        _factor(hue, "hue", center=0.0, bound=(-0.5, 0.5), non_negative=False),
    )
    adjust = (adjust_brightness, adjust_contrast, adjust_saturation, adjust_hue)
    for index in transform_rng().permutation(4):
        img = adjust[index](img, factors[index])
    return img


def random_lighting(img, alpha):
    """AlexNet's PCA lighting noise: RGB values plus the ImageNet eigenvectors weighted by their eigenvalues
    times N(0, alpha) draws, clipped to [0, 255]."""
    _require_pil(img)
    if img.mode != "RGB":
        img = img.convert("RGB")
    rng = transform_rng()
    weights = np.array([rng.normal(0.0, alpha) for _ in range(3)])
    eigvals = np.array([55.46, 4.794, 1.148])
    eigvecs = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140], [-0.5836, -0.6948, 0.4203]])
    shift = (eigvecs * eigvals) @ weights
    values = np.asarray(img).astype(np.float64) + shift
    return _pil()[0].fromarray(np.uint8(np.minimum(np.maximum(values, 0), 255)))


def grayscale(img, num_output_channels):
    """Pillow's grey (``convert("L")``), with 1 channel or 3 identical ones."""
    _require_pil(img)
    if num_output_channels not in (1, 3):
        raise ValueError(f"num_output_channels should be either 1 or 3. Got {num_output_channels}.")
    gray = img.convert("L")
    if num_output_channels == 1:
        return gray
    return _pil()[0].fromarray(np.ascontiguousarray(np.stack([np.asarray(gray)] * 3, -1)))


def random_color(img, degrees):
    """Pillow's ``ImageEnhance.Color`` by a factor drawn uniformly from ``degrees`` (min, max)."""
    _require_pil(img)
    factor = (degrees[1] - degrees[0]) * transform_rng().random() + degrees[0]
    return _pil()[1].Color(img).enhance(factor)


def random_sharpness(img, degrees):
    """Pillow's ``ImageEnhance.Sharpness`` by a factor drawn uniformly from ``degrees`` (min, max)."""
    _require_pil(img)
    factor = (degrees[1] - degrees[0]) * transform_rng().random() + degrees[0]
    return _pil()[1].Sharpness(img).enhance(factor)


def auto_contrast(img, cutoff, ignore):
    """Pillow's ``ImageOps.autocontrast``."""
    return _pil()[2].autocontrast(_require_pil(img), cutoff, ignore)


def invert_color(img):
    """Pillow's ``ImageOps.invert``."""
    return _pil()[2].invert(_require_pil(img))


def equalize(img):
    """Pillow's ``ImageOps.equalize``."""
    return _pil()[2].equalize(_require_pil(img))


# -- arrays ------------------------------------------------------------------------------------------------------


def linear_transform(np_img, transformation_matrix, mean_vector):
    """``(flatten(img) - mean_vector) @ transformation_matrix`` in the image's shape."""
    if not is_numpy(np_img):
        raise TypeError(f"img should be NumPy array. Got {type(np_img)}")
    if transformation_matrix.shape[0] != transformation_matrix.shape[1]:
        raise ValueError(f"transformation_matrix should be a square matrix. Got shape {transformation_matrix.shape}")
    if np_img.size != transformation_matrix.shape[0]:
        raise ValueError(
            f"transformation_matrix shape {transformation_matrix.shape} not compatible with Numpy image shape "
            f"{np_img.shape}."
        )
    if mean_vector.shape[0] != transformation_matrix.shape[0]:
        raise ValueError(
            f"mean_vector length {mean_vector.shape[0]} should match either one dimension of the square "
            f"transformation_matrix {transformation_matrix.shape}."
        )
    return np.dot(np_img.reshape(1, -1) - mean_vector, transformation_matrix).reshape(np_img.shape)


def mix_up_single(batch_size, img, label, alpha=0.2):
    """Each image (and label) of the batch blended with the next one (the last with the first):
    ``l * x[i] + (1 - l) * x[i + 1]``, l ~ Beta(alpha, alpha) per image."""
    lam = transform_rng().beta(alpha, alpha, batch_size)
    order = list(range(1, batch_size)) + [0]
    lam_img = lam.reshape((batch_size, 1, 1, 1))
    lam_label = lam.reshape((batch_size, 1))
    return lam_img * img + (1 - lam_img) * img[order], lam_label * label + (1 - lam_label) * label[order]


def mix_up_muti(tmp, batch_size, img, label, alpha=0.2):
    """Each batch blended with the previous batch's result, kept on ``tmp`` (``image``, ``label``,
    ``is_first``): l ~ Beta(alpha, alpha) per image, l = 1 for the first batch."""
    lam = transform_rng().beta(alpha, alpha, batch_size)
    if tmp.is_first:
        lam = np.ones(batch_size)
        tmp.is_first = False
    lam_img = lam.reshape((batch_size, 1, 1, 1))
    lam_label = lam.reshape((batch_size, 1))
    tmp.image = lam_img * img + (1 - lam_img) * tmp.image
    tmp.label = lam_label * label + (1 - lam_label) * tmp.label
    return tmp.image, tmp.label


def _colour_batch(where: str, images, is_hwc):
    """(images as a list of single images, whether a batch was given); checks as MindSpore's."""
    if not is_numpy(images):
        raise TypeError(f"img should be NumPy image. Got {type(images)}")
    if not isinstance(is_hwc, bool):
        raise TypeError(f"is_hwc should be bool type. Got {type(is_hwc)}.")
    if images.ndim not in (3, 4):
        raise TypeError(f"img shape should be (H, W, C)/(N, H, W, C)/(C ,H, W)/(N, C, H, W). Got {images.shape}.")
    channels = images.shape[-1] if is_hwc else images.shape[-3]
    if channels != 3:
        raise TypeError(f"img should be 3 channels RGB img. Got {channels} channels.")
    return (list(images) if images.ndim == 4 else [images]), images.ndim == 4


def _convert(images, is_hwc, fn):
    converted = []
    for image in images:
        planes = [image[..., c] for c in range(3)] if is_hwc else [image[c] for c in range(3)]
        out = np.vectorize(fn)(*planes)
        converted.append(np.stack(out, axis=2 if is_hwc else 0))
    return converted


def rgb_to_bgrs(np_rgb_imgs, is_hwc):
    """The channels of RGB images (HWC / NHWC with ``is_hwc``, else CHW / NCHW) in reverse order."""
    images, batch = _colour_batch("RgbToBgr", np_rgb_imgs, is_hwc)
    out = [image[:, :, ::-1] if is_hwc else image[::-1] for image in images]
    return np.array(out) if batch else out[0]


def rgb_to_hsvs(np_rgb_imgs, is_hwc):
    """RGB images as HSV (Python's ``colorsys.rgb_to_hsv`` per pixel)."""
    images, batch = _colour_batch("RgbToHsv", np_rgb_imgs, is_hwc)
    out = _convert(images, is_hwc, colorsys.rgb_to_hsv)
    return np.array(out) if batch else out[0]


def hsv_to_rgbs(np_hsv_imgs, is_hwc):
    """HSV images as RGB (Python's ``colorsys.hsv_to_rgb`` per pixel)."""
    images, batch = _colour_batch("HsvToRgb", np_hsv_imgs, is_hwc)
    out = _convert(images, is_hwc, colorsys.hsv_to_rgb)
    return np.array(out) if batch else out[0]


def uniform_augment(img, transforms, num_ops):
    """``num_ops`` of ``transforms`` chosen without replacement, each run (on a copy of the image) when a
    uniform draw falls below another uniform draw, as MindSpore's."""
    rng = transform_rng()
    for index in rng.choice(len(transforms), size=num_ops, replace=False):
        chance = rng.random()
        if rng.random() < chance:
            img = transforms[int(index)](img.copy())
    return img
