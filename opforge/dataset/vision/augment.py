"""MindSpore's augmentation transforms of ``dataset.vision`` that AutoAugment-style policies compose (the model
zoo's EfficientNet-B2 ImageNet pipeline): ``Invert``, ``Equalize``, ``AutoContrast``, ``RandomSolarize``,
``RandomPosterize``, ``RandomColor``, ``RandomSharpness``, ``RandomRotation``, ``RandomAffine``,
``RandomSelectSubpolicy``, and ``Pad``. They work on NumPy HWC (or HW) images as MindSpore's C++ transforms
do, following their OpenCV steps: histograms and lookup tables per channel, gray by OpenCV's RGB weights,
blends rounded to the nearest integer and saturated to [0, 255], and the geometric transforms by inverse
mapping with nearest or bilinear sampling (OpenCV computes bilinear weights in 1/32 pixel steps, so a
bilinear result may differ from it by 1), out-of-image pixels taking ``fill_value``. Random parameters are
drawn from the dataset seed (``dataset.config.set_seed``) when it is set."""

from __future__ import annotations

import math
import numbers

import numpy as np

from opforge.dataset.vision.random_crop import _MODES, Border, _borders, _fill, _pad
from opforge.dataset.vision.random_source import transform_rng as _rng
from opforge.dataset.vision.resize import Inter

__all__ = [
    "Invert", "Equalize", "AutoContrast", "RandomSolarize", "RandomPosterize", "RandomColor", "RandomSharpness",
    "RandomRotation", "RandomAffine", "RandomSelectSubpolicy", "Pad",
]  # fmt: skip


# -- argument checks -------------------------------------------------------------------------------------


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _range(op: str, name: str, value, single_low=None, low=None, high=None) -> tuple:
    """A (min, max) range: a sequence of two numbers, or a number v meaning (-v, v) (``single_low`` None) or
    (single_low, v); min <= max, both in [low, high] when given."""
    if _is_number(value):
        if value < 0 and single_low is None:
            raise ValueError(f"For '{op}', the '{name}' must not be negative when a single number, but got {value}.")
        pair = (-float(value), float(value)) if single_low is None else (float(single_low), float(value))
    elif isinstance(value, (list, tuple)) and len(value) == 2 and all(_is_number(v) for v in value):
        pair = (float(value[0]), float(value[1]))
    else:
        raise TypeError(f"For '{op}', the '{name}' must be a number or a sequence of two numbers, but got {value!r}.")
    if pair[0] > pair[1]:
        raise ValueError(f"For '{op}', the '{name}' must be (min, max) with min <= max, but got {value!r}.")
    if (low is not None and pair[0] < low) or (high is not None and pair[1] > high):
        raise ValueError(f"For '{op}', the '{name}' must lie in [{low}, {high}], but got {value!r}.")
    return pair


def _uint8_image(op: str, img, channels=(1, 3)) -> np.ndarray:
    img = np.asarray(img)
    if img.dtype != np.uint8 or img.ndim not in (2, 3) or (img.ndim == 3 and img.shape[2] not in channels):
        raise ValueError(
            f"For '{op}', the image must be uint8 <H, W> or <H, W, C> with C in {channels}, but got a {img.dtype} "
            f"array of shape {img.shape}."
        )
    return img


def _image(op: str, img) -> np.ndarray:
    img = np.asarray(img)
    if img.ndim not in (2, 3):
        raise ValueError(f"For '{op}', the image must be <H, W> or <H, W, C>, but got shape {img.shape}.")
    return img


def _per_channel(img: np.ndarray, fn) -> np.ndarray:
    """``fn`` (a uint8 plane -> uint8 plane) on each channel of an HW or HWC image."""
    if img.ndim == 2:
        return fn(img)
    return np.stack([fn(img[..., c]) for c in range(img.shape[2])], -1)


def _saturate(values: np.ndarray, dtype) -> np.ndarray:
    """Float results as ``dtype``: for integers rounded to the nearest (halves to even, as cvRound) and
    clipped to the dtype's range (OpenCV's saturate_cast)."""
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return np.clip(np.rint(values), info.min, info.max).astype(dtype)
    return values.astype(dtype)


def _gray(img: np.ndarray) -> np.ndarray:
    """OpenCV's RGB2GRAY of a uint8 RGB image: (4899 R + 9617 G + 1868 B + 2^13) >> 14."""
    rgb = img.astype(np.int64)
    return ((rgb[..., 0] * 4899 + rgb[..., 1] * 9617 + rgb[..., 2] * 1868 + 8192) >> 14).astype(np.uint8)


def _blend(img: np.ndarray, other: np.ndarray, factor: float) -> np.ndarray:
    """cv::addWeighted(img, factor, other, 1 - factor): the float blend rounded and saturated."""
    f = np.float32(factor)
    return _saturate(img.astype(np.float32) * f + other.astype(np.float32) * (np.float32(1) - f), img.dtype)


# -- point operations ----------------------------------------------------------------------------------------


class Invert:
    """``Invert()``: each value of a uint8 RGB (or gray) image replaced by 255 minus it."""

    def __call__(self, img):
        return 255 - _uint8_image("Invert", img)


def _equalize_plane(plane: np.ndarray) -> np.ndarray:
    """OpenCV's equalizeHist: the lookup table maps the first occupied level to 0 and level j above it to
    round(255 * (count of pixels in (first, j]) / (pixels above the first level))."""
    hist = np.bincount(plane.ravel(), minlength=256)
    first = int(np.flatnonzero(hist)[0])
    total = plane.size
    if hist[first] == total:
        return np.full_like(plane, first)
    scale = np.float32(255.0) / np.float32(total - hist[first])
    cumulative = np.cumsum(hist) - hist[: first + 1].sum()
    lut = _saturate(np.maximum(cumulative, 0).astype(np.float32) * scale, np.uint8)
    lut[: first + 1] = 0
    return lut[plane]


class Equalize:
    """``Equalize()``: histogram equalisation of each channel of a uint8 image (OpenCV's ``equalizeHist``)."""

    def __call__(self, img):
        return _per_channel(_uint8_image("Equalize", img), _equalize_plane)


class AutoContrast:
    """``AutoContrast(cutoff=0.0, ignore=None)``: each channel of a uint8 image stretched so that its lowest
    level becomes 0 and its highest 255, after dropping ``cutoff`` percent of the pixels from each end of its
    histogram (MindSpore's kernel takes the whole-percent part of ``cutoff``) and not counting the levels in
    ``ignore`` (an int or a sequence of them): the lookup table ``int(i * 255 / (hi - lo) - lo * 255 / (hi - lo))``
    clipped to [0, 255], the identity when hi <= lo."""

    def __init__(self, cutoff=0.0, ignore=None):
        if not _is_number(cutoff) or not 0 <= cutoff < 50:
            raise ValueError(f"For 'AutoContrast', the 'cutoff' must be a number in [0, 50), but got {cutoff!r}.")
        ignore = [] if ignore is None else [ignore] if isinstance(ignore, (int, np.integer)) else list(ignore)
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and 0 <= v <= 255 for v in ignore):
            raise ValueError(f"For 'AutoContrast', the 'ignore' must be ints in [0, 255], but got {ignore!r}.")
        self.cutoff, self.ignore = float(cutoff), [int(v) for v in ignore]

    def _plane(self, plane: np.ndarray) -> np.ndarray:
        hist = np.bincount(plane.ravel(), minlength=256).astype(np.int64)
        hist[self.ignore] = 0
        percent, total = int(self.cutoff), int(hist.sum())
        for order in (range(256), range(255, -1, -1)):  # drop the low end, then the high end
            cut = int(percent / 100.0 * total)
            for level in order:
                if cut <= 0:
                    break
                taken = min(cut, int(hist[level]))
                hist[level] -= taken
                cut -= taken
        occupied = np.flatnonzero(hist)
        lo, hi = (int(occupied[0]), int(occupied[-1])) if occupied.size else (255, 0)
        if hi <= lo:
            return plane.copy()
        scale = np.float32(255.0) / np.float32(hi - lo)
        offset = -np.float32(lo) * scale
        lut = np.clip(np.trunc(np.arange(256, dtype=np.float32) * scale + offset), 0, 255).astype(np.uint8)
        return lut[plane]

    def __call__(self, img):
        return _per_channel(_uint8_image("AutoContrast", img), self._plane)


def _solarize(img: np.ndarray, low: float, high: float) -> np.ndarray:
    """MindSpore's Solarize: the values in [low, high] (>= low when low == high) replaced by 255 minus them."""
    inside = img >= low if low == high else (img >= low) & (img <= high)
    return np.where(inside, 255 - img, img).astype(img.dtype)


class RandomSolarize:
    """``RandomSolarize(threshold=(0, 255))``: two integers drawn uniformly from the ``threshold`` range (ints in
    [0, 255]), ordered as (min, max); the image's values in [min, max] (>= min when they are equal) are
    replaced by 255 minus them."""

    def __init__(self, threshold=(0, 255)):
        if not isinstance(threshold, (list, tuple)) or not all(isinstance(v, (int, np.integer)) for v in threshold):
            raise TypeError(
                f"For 'RandomSolarize', the 'threshold' must be a sequence of two ints, but got {threshold!r}."
            )
        self.threshold = tuple(int(v) for v in _range("RandomSolarize", "threshold", threshold, 0, 0, 255))

    def __call__(self, img):
        img = _uint8_image("RandomSolarize", img)
        rng = _rng()
        a, b = (int(rng.integers(self.threshold[0], self.threshold[1] + 1)) for _ in range(2))
        return _solarize(img, min(a, b), max(a, b))


class RandomPosterize:
    """``RandomPosterize(bits=(8, 8))``: a number of bits b drawn uniformly from the ``bits`` range (ints in
    [1, 8]; an int means (int, int)), and each value of the uint8 image keeps its b high bits
    (``value & ~(2 ** (8 - b) - 1)``)."""

    def __init__(self, bits=(8, 8)):
        pair = (bits, bits) if isinstance(bits, (int, np.integer)) and not isinstance(bits, bool) else bits
        if (
            not isinstance(pair, (list, tuple))
            or len(pair) != 2
            or not all(isinstance(v, (int, np.integer)) for v in pair)
        ):
            raise TypeError(
                f"For 'RandomPosterize', the 'bits' must be an int or a sequence of two ints, but got {bits!r}."
            )
        if not 1 <= pair[0] <= pair[1] <= 8:
            raise ValueError(f"For 'RandomPosterize', the 'bits' must be (min, max) in [1, 8], but got {bits!r}.")
        self.bits = (int(pair[0]), int(pair[1]))

    def __call__(self, img):
        img = _uint8_image("RandomPosterize", img)
        bits = int(_rng().integers(self.bits[0], self.bits[1] + 1))
        return img & np.uint8(~((1 << (8 - bits)) - 1) & 0xFF)


class RandomColor:
    """``RandomColor(degrees=(0.1, 1.9))``: a factor t drawn uniformly from ``degrees`` (non-negative), and
    the RGB uint8 image blended with its gray version (OpenCV's RGB2GRAY): ``t * img + (1 - t) * gray``,
    rounded and saturated (t = 0 gives the gray image, t = 1 the image)."""

    def __init__(self, degrees=(0.1, 1.9)):
        self.degrees = _range("RandomColor", "degrees", degrees, 0.0, 0.0)

    def __call__(self, img):
        img = _uint8_image("RandomColor", img, channels=(3,))
        if img.ndim != 3:
            raise ValueError(f"For 'RandomColor', the image must be RGB <H, W, 3>, but got shape {img.shape}.")
        t = float(_rng().uniform(*self.degrees))
        if abs(t - 1.0) < 0.00195:  # within half a level of the image itself: MindSpore returns it
            return img
        gray = np.repeat(_gray(img)[..., None], 3, -1)
        if abs(t) < 0.00195:
            return gray
        return _blend(img, gray, t)


def _smooth(img: np.ndarray) -> np.ndarray:
    """The image under the 3x3 smoothing filter [[1, 1, 1], [1, 5, 1], [1, 1, 1]] / 13 (rounded for
    integers), its border rows and columns unchanged."""
    values = img.astype(np.float32)
    padded = np.pad(values, [(1, 1), (1, 1)] + [(0, 0)] * (img.ndim - 2), mode="reflect")
    h, w = img.shape[:2]
    total = sum(padded[dy : dy + h, dx : dx + w] for dy in range(3) for dx in range(3)) + 4 * values
    out = _saturate(total / np.float32(13.0), img.dtype)
    out[0], out[-1], out[:, 0], out[:, -1] = img[0], img[-1], img[:, 0], img[:, -1]
    return out


class RandomSharpness:
    """``RandomSharpness(degrees=(0.1, 1.9))``: a factor t drawn uniformly from ``degrees`` (non-negative), and
    the image blended with its smoothed version (the 3x3 filter [[1, 1, 1], [1, 5, 1], [1, 1, 1]] / 13 inside
    the border): ``t * img + (1 - t) * smoothed`` (t < 1 blurs, t > 1 sharpens), rounded and saturated for
    integer images."""

    def __init__(self, degrees=(0.1, 1.9)):
        self.degrees = _range("RandomSharpness", "degrees", degrees, 0.0, 0.0)

    def __call__(self, img):
        img = _image("RandomSharpness", img)
        t = float(_rng().uniform(*self.degrees))
        return _blend(img, _smooth(img), t)


# -- geometric transforms ------------------------------------------------------------------------------------


def _check_resample(op: str, resample) -> str:
    if resample not in (Inter.NEAREST, Inter.BILINEAR):
        raise ValueError(f"For '{op}', opforge's 'resample' is Inter.NEAREST or Inter.BILINEAR, but got {resample!r}.")
    return resample


def _warp(img: np.ndarray, matrix: np.ndarray, out_size: tuple, resample: str, fill: tuple) -> np.ndarray:
    """cv::warpAffine: the output pixel (x, y) takes the input at M^-1 (x, y) (``matrix`` M maps input
    coordinates to output ones), sampled by ``resample``; outside the input, ``fill`` (per channel)."""
    h_out, w_out = out_size
    forward = np.vstack([np.asarray(matrix, np.float64).reshape(2, 3), [0.0, 0.0, 1.0]])
    inverse = np.linalg.inv(forward)
    ys, xs = np.mgrid[0:h_out, 0:w_out].astype(np.float64)
    src_x = inverse[0, 0] * xs + inverse[0, 1] * ys + inverse[0, 2]
    src_y = inverse[1, 0] * xs + inverse[1, 1] * ys + inverse[1, 2]
    h, w = img.shape[:2]
    channels = 1 if img.ndim == 2 else img.shape[2]
    fill_values = np.asarray(fill[:channels] if channels <= len(fill) else [fill[0]] * channels, np.float64)
    planes = img.reshape(h, w, channels).astype(np.float64)

    def sample(iy, ix):
        inside = (iy >= 0) & (iy < h) & (ix >= 0) & (ix < w)
        values = planes[np.clip(iy, 0, h - 1), np.clip(ix, 0, w - 1)]
        return np.where(inside[..., None], values, fill_values)

    if resample == Inter.NEAREST:
        out = sample(np.floor(src_y + 0.5).astype(np.int64), np.floor(src_x + 0.5).astype(np.int64))
    else:
        x0, y0 = np.floor(src_x), np.floor(src_y)
        fx, fy = (src_x - x0)[..., None], (src_y - y0)[..., None]
        x0, y0 = x0.astype(np.int64), y0.astype(np.int64)
        top = sample(y0, x0) * (1 - fx) + sample(y0, x0 + 1) * fx
        bottom = sample(y0 + 1, x0) * (1 - fx) + sample(y0 + 1, x0 + 1) * fx
        out = top * (1 - fy) + bottom * fy
    out = _saturate(out, img.dtype)
    return out[..., 0] if img.ndim == 2 else out


def _rotation_matrix(cx: float, cy: float, degrees: float) -> np.ndarray:
    """cv::getRotationMatrix2D(center, degrees, 1): a counter-clockwise rotation (on screen) about the center."""
    a, b = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    return np.array([[a, b, (1 - a) * cx - b * cy], [-b, a, b * cx + (1 - a) * cy]])


def _rotate(img, degrees, resample, expand, center, fill):
    h, w = img.shape[:2]
    cx, cy = ((w - 1) / 2.0, (h - 1) / 2.0) if center is None else (float(center[0]), float(center[1]))
    matrix = _rotation_matrix(cx, cy, degrees)
    size = (h, w)
    if expand:  # the output holds the whole rotated image (cv::RotatedRect's bounding box)
        corners = np.array([[-w / 2.0, -h / 2.0], [w / 2.0, -h / 2.0], [w / 2.0, h / 2.0], [-w / 2.0, h / 2.0]])
        rotated = corners @ matrix[:, :2].T
        box_w = rotated[:, 0].max() - rotated[:, 0].min()
        box_h = rotated[:, 1].max() - rotated[:, 1].min()
        matrix[0, 2] += box_w / 2.0 - w / 2.0
        matrix[1, 2] += box_h / 2.0 - h / 2.0
        size = (int(round(box_h)), int(round(box_w)))
    return _warp(img, matrix, size, resample, fill)


class RandomRotation:
    """``RandomRotation(degrees, resample=Inter.NEAREST, expand=False, center=None, fill_value=0)``: the image
    rotated counter-clockwise by an angle drawn uniformly from ``degrees`` (a number d: [-d, d]; or (min,
    max)) about ``center`` (x, y; None: the image's center ((W - 1) / 2, (H - 1) / 2)); ``expand`` enlarges
    the output to hold the whole rotated image; uncovered pixels take ``fill_value`` (an int or R, G, B)."""

    def __init__(self, degrees, resample=Inter.NEAREST, expand=False, center=None, fill_value=0):
        self.degrees = _range("RandomRotation", "degrees", degrees)
        self.resample = _check_resample("RandomRotation", resample)
        if not isinstance(expand, bool):
            raise TypeError(f"For 'RandomRotation', the 'expand' must be a bool, but got {expand!r}.")
        if center is not None and not (
            isinstance(center, (list, tuple)) and len(center) == 2 and all(_is_number(v) for v in center)
        ):
            raise TypeError(f"For 'RandomRotation', the 'center' must be None or (x, y), but got {center!r}.")
        self.expand, self.center, self.fill_value = expand, center, _fill(fill_value)

    def __call__(self, img):
        img = _image("RandomRotation", img)
        angle = float(_rng().uniform(*self.degrees))
        return _rotate(img, angle, self.resample, self.expand, self.center, self.fill_value)


def _affine_matrix(h: int, w: int, degrees, translation, scale, shear) -> np.ndarray:
    """MindSpore's affine matrix (input to output coordinates): T * C * R S SHy SHx * C^-1 about the center
    ((W - 1) / 2, (H - 1) / 2); ``degrees`` and the shears (x, y) in degrees, ``translation`` (x, y) in pixels."""
    angle = math.radians(degrees)
    sx, sy = math.radians(shear[0]), math.radians(-shear[1])
    cx, cy = (w - 1) / 2.0, (h - 1) / 2.0
    a = scale * math.cos(angle + sy) / math.cos(sy)
    b = scale * (-math.cos(angle + sy) * math.tan(sx) / math.cos(sy) - math.sin(angle))
    c = scale * math.sin(angle + sy) / math.cos(sy)
    d = scale * (-math.sin(angle + sy) * math.tan(sx) / math.cos(sy) + math.cos(angle))
    m = np.array([[a, b, 0.0], [c, d, 0.0]], np.float32).astype(np.float64)  # MindSpore keeps float32 entries
    m[0, 2] = (1 - m[0, 0]) * cx - m[0, 1] * cy + translation[0]
    m[1, 2] = (1 - m[1, 1]) * cy - m[1, 0] * cx + translation[1]
    return m


class RandomAffine:
    """``RandomAffine(degrees, translate=None, scale=None, shear=None, resample=Inter.NEAREST, fill_value=0)``:
    an affine transform about the image's center with parameters drawn uniformly: a rotation from
    ``degrees`` (d: [-d, d], or (min, max); clockwise on screen for positive angles, as MindSpore's matrix
    turns, where RandomRotation's turn counter-clockwise); a translation of (tx * W, ty * H) pixels, tx from
    ``translate[0:2]`` and ty from ``translate[2:4]`` (fractions in [-1, 1]; 0 when not given); a scale from
    ``scale`` (min, max; 1 when None); shears in degrees, x from ``shear`` (s: [-s, s]; or (min, max); or the
    first two of four values) and y from its last two of four. Uncovered pixels take ``fill_value``."""

    def __init__(self, degrees, translate=None, scale=None, shear=None, resample=Inter.NEAREST, fill_value=0):
        self.degrees = _range("RandomAffine", "degrees", degrees)
        translate = (0.0, 0.0, 0.0, 0.0) if translate is None else translate
        if not isinstance(translate, (list, tuple)) or len(translate) not in (2, 4):
            raise TypeError(
                f"For 'RandomAffine', the 'translate' must be a sequence of 2 or 4 numbers, got {translate!r}."
            )
        translate = tuple(translate) + (0.0, 0.0) * (len(translate) == 2)
        if not all(_is_number(v) and -1 <= v <= 1 for v in translate):
            raise ValueError(f"For 'RandomAffine', the 'translate' values must be in [-1, 1], but got {translate!r}.")
        self.translate = tuple(float(v) for v in translate)
        self.scale = (1.0, 1.0) if scale is None else _range("RandomAffine", "scale", scale, low=0.0)
        if shear is None:
            shear = (0.0, 0.0, 0.0, 0.0)
        elif _is_number(shear):
            shear = _range("RandomAffine", "shear", shear) + (0.0, 0.0)
        elif isinstance(shear, (list, tuple)) and len(shear) in (2, 4) and all(_is_number(v) for v in shear):
            shear = tuple(float(v) for v in shear) + (0.0, 0.0) * (len(shear) == 2)
        else:
            raise TypeError(f"For 'RandomAffine', the 'shear' must be a number or 2 or 4 numbers, but got {shear!r}.")
        self.shear = tuple(float(v) for v in shear)
        self.resample = _check_resample("RandomAffine", resample)
        self.fill_value = _fill(fill_value)

    def __call__(self, img):
        img = _image("RandomAffine", img)
        h, w = img.shape[:2]
        rng = _rng()
        degrees = float(rng.uniform(*self.degrees))
        tx = float(rng.uniform(self.translate[0] * w, self.translate[1] * w))
        ty = float(rng.uniform(self.translate[2] * h, self.translate[3] * h))
        scale = float(rng.uniform(*self.scale))
        shear_x = float(rng.uniform(self.shear[0], self.shear[1]))
        shear_y = float(rng.uniform(self.shear[2], self.shear[3]))
        matrix = _affine_matrix(h, w, degrees, (tx, ty), scale, (shear_x, shear_y))
        return _warp(img, matrix, (h, w), self.resample, self.fill_value)


class RandomSelectSubpolicy:
    """``RandomSelectSubpolicy(policy)``: ``policy`` a list of sub-policies, each a list of (transform,
    probability) pairs; for each image one sub-policy is chosen uniformly and its transforms run in order,
    each with its probability (in [0, 1])."""

    def __init__(self, policy):
        if not isinstance(policy, list) or not policy:
            raise TypeError(f"For 'RandomSelectSubpolicy', the 'policy' must be a non-empty list, but got {policy!r}.")
        for sub in policy:
            if not isinstance(sub, list) or not sub:
                raise TypeError(f"For 'RandomSelectSubpolicy', each sub-policy must be a non-empty list, got {sub!r}.")
            for pair in sub:
                if not (isinstance(pair, tuple) and len(pair) == 2 and callable(pair[0]) and _is_number(pair[1])):
                    raise TypeError(
                        f"For 'RandomSelectSubpolicy', each entry must be (transform, probability), but got {pair!r}."
                    )
                if not 0 <= pair[1] <= 1:
                    raise ValueError(f"For 'RandomSelectSubpolicy', a probability must be in [0, 1], got {pair[1]}.")
        self.policy = policy

    def __call__(self, img):
        rng = _rng()
        for transform, prob in self.policy[int(rng.integers(0, len(self.policy)))]:
            if rng.random() < prob:
                img = transform(img)
        return img


class Pad:
    """``Pad(padding, fill_value=0, padding_mode=Border.CONSTANT)``: the image padded by ``padding`` (an int
    for every border; 2 values: left and right, top and bottom; 4 values: left, top, right, bottom) with
    ``padding_mode`` (``Border``), ``fill_value`` (an int or R, G, B) for ``Border.CONSTANT``."""

    def __init__(self, padding, fill_value=0, padding_mode=Border.CONSTANT):
        try:
            self.padding, self.fill_value = _borders(padding), _fill(fill_value)
        except (TypeError, ValueError) as e:
            raise type(e)(str(e).replace("'RandomCrop'", "'Pad'")) from None
        if padding_mode not in _MODES:
            raise TypeError(f"For 'Pad', the 'padding_mode' must be a Border mode {_MODES}, but got {padding_mode!r}.")
        self.padding_mode = padding_mode

    def __call__(self, img):
        return _pad(_image("Pad", img), *self.padding, self.padding_mode, self.fill_value)
