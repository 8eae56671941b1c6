"""Image-quality cells (MindSpore's ``nn.ImageGradients``, ``nn.SSIM``, ``nn.MSSSIM`` and ``nn.PSNR``), composed of
primitives (Slice, Concat, Conv2D with a fixed Gaussian window, AvgPool, ReduceMean, Pow, ...), so they
differentiate (``1 - SSIM`` is a common loss), run under ``jit`` and on both backends.

As MindSpore's, SSIM, MS-SSIM and PSNR compute in float32: integer images are first scaled by
``1 / dtype_max`` (255 for uint8) and ``max_val`` is cast to the image dtype and scaled likewise; float images
are only cast. The SSIM of each channel is the mean of the SSIM map of its "valid" Gaussian-filtered windows
(``H - filter_size + 1`` by ``W - filter_size + 1``), and a batch element's value the mean over the channels.
MindSpore has no functional forms of these cells."""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge.nn.cell import Cell
from opforge.ops import functional as F
from opforge.primitives import array_ops, conv_ops, math_ops
from opforge.tensor import Tensor

__all__ = ["ImageGradients", "SSIM", "MSSSIM", "PSNR"]

_SSIM_DTYPES = (mstype.float16, mstype.float32)
_MSSSIM_DTYPES = (mstype.float64, mstype.float32, mstype.float16, mstype.uint8)
_MSSSIM_POWERS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)  # Wang et al.'s weights of the 5 scales

_concat2, _concat3 = array_ops.Concat(2), array_ops.Concat(3)
_slice = array_ops.Slice()
_mean = math_ops.ReduceMean()
_prod = math_ops.ReduceProd()
_pow = math_ops.Pow()


# ---------------------------------------------------------------------------------------------
# Argument checks (MindSpore's: ints and floats by their Python type)


def _max_val(cell: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"For '{cell}', the 'max_val' must be an int or a float, but got {type(value).__name__}.")
    if value <= 0:
        raise ValueError(f"For '{cell}', the 'max_val' must be greater than 0, but got {value}.")
    return value


def _float(cell: str, name: str, value, positive: bool = False) -> float:
    if not isinstance(value, float):
        raise TypeError(f"For '{cell}', the '{name}' must be a float, but got {type(value).__name__}.")
    if positive and not value > 0:
        raise ValueError(f"For '{cell}', the '{name}' must be greater than 0, but got {value}.")
    return value


def _filter_size(cell: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"For '{cell}', the 'filter_size' must be an int, but got {type(value).__name__}.")
    if value < 1:
        raise ValueError(f"For '{cell}', the 'filter_size' must be >= 1, but got {value}.")
    return value


def _images(cell: str, img1, img2, dtypes=None) -> None:
    """Two 4-D (NCHW) Tensors of one shape and dtype, the dtype one of ``dtypes`` (any real one when None)."""
    for name, img in (("img1", img1), ("img2", img2)):
        if not isinstance(img, Tensor):
            raise TypeError(f"For '{cell}', the '{name}' must be a Tensor, but got {type(img).__name__}.")
    if dtypes is not None and img1.dtype not in dtypes:
        names = ", ".join(str(d) for d in dtypes)
        raise TypeError(f"For '{cell}', the 'img1' must be a Tensor of dtype {names}, but got {img1.dtype}.")
    if img1.dtype.kind == "c":
        raise TypeError(f"For '{cell}', the 'img1' must be a Tensor of a real dtype, but got {img1.dtype}.")
    for name, img in (("img1", img1), ("img2", img2)):
        if img.ndim != 4:
            raise ValueError(f"For '{cell}', the '{name}' must be 4-D (N, C, H, W), but got shape {list(img.shape)}.")
    if img2.dtype != img1.dtype:
        raise TypeError(f"For '{cell}', the 'img2' must have the dtype of 'img1' ({img1.dtype}), but got {img2.dtype}.")
    if tuple(img2.shape) != tuple(img1.shape):
        raise ValueError(
            f"For '{cell}', the 'img2' must have the shape of 'img1' {list(img1.shape)}, but got {list(img2.shape)}."
        )


def _dtype_max(dtype) -> float:
    """MindSpore's ``_get_dtype_max``: the largest value of an integer dtype, 1.0 for the others."""
    np_dtype = np.dtype(dtype.np_dtype)
    return float(np.iinfo(np_dtype).max) if np_dtype.kind in "iu" else 1.0


def _effective_max(max_val, dtype) -> float:
    """``max_val`` cast to the image dtype (an int dtype truncates it), then scaled as the images are."""
    value = np.asarray(max_val).astype(dtype.np_dtype).astype(np.float64).item()
    scale = _dtype_max(dtype)
    return float(np.float32(value / scale if scale > 1.0 else value))


def _as_float32(img: Tensor) -> Tensor:
    """The image in float32, an integer one scaled by ``1 / dtype_max`` (MindSpore's
    ``_convert_img_dtype_to_float32``)."""
    scale = _dtype_max(img.dtype)
    out = img if img.dtype == mstype.float32 else F.cast(img, mstype.float32)
    return out * float(np.float32(1.0 / scale)) if scale > 1.0 else out


# ---------------------------------------------------------------------------------------------
# SSIM of each channel


def gaussian_window(size: int, sigma: float) -> np.ndarray:
    """MindSpore's SSIM window, [1, 1, size, size] float32: ``exp(-(x^2 + y^2) / (2 sigma^2))`` normalised to sum
    1, over the offsets ``x, y`` in ``[-size // 2 + 1, size // 2]`` (centred for an odd size; an even size has
    one more offset after the centre than before it)."""
    offsets = np.arange(-size // 2 + 1, size // 2 + 1, dtype=np.float32) ** 2
    g = np.exp(-(offsets[:, None] + offsets[None, :]) / np.float32(2 * sigma**2)).astype(np.float32)
    return (g / g.sum())[None, None]


class _Window:
    """The Gaussian window as a constant Tensor on each device it is asked for, and the valid Conv2D with it."""

    def __init__(self, size: int, sigma: float):
        self.size, self.array = size, gaussian_window(size, sigma)
        self.conv = conv_ops.Conv2D(1, size)
        self._on: dict = {}

    def filter(self, planes: Tensor) -> Tensor:
        """The valid Gaussian filtering of ``planes`` [B, 1, H, W] (float32)."""
        weight = self._on.get(planes.device)
        if weight is None:
            weight = self._on[planes.device] = Tensor(self.array, device=planes.device)
        return self.conv(planes, weight)


def _ssim_and_cs(window: _Window, x: Tensor, y: Tensor, c1: float, c2: float) -> tuple:
    r"""Per (n, c), the means over the filtered windows of the SSIM map
    :math:`\frac{(2\mu_x\mu_y + C_1)(2\sigma_{xy} + C_2)}{(\mu_x^2 + \mu_y^2 + C_1)(\sigma_x^2 + \sigma_y^2 + C_2)}`
    and of the contrast-structure map :math:`\frac{2\sigma_{xy} + C_2}{\sigma_x^2 + \sigma_y^2 + C_2}`, both [N, C]
    float32 (``x``, ``y`` [N, C, H, W] float32). The five filterings (x, y, x², y², xy) are one Conv2D call on
    every channel plane of the five stacked along the batch."""
    n, c, h, w = x.shape
    planes = F.reshape(F.stack((x, y, x * x, y * y, x * y), 0), (5 * n * c, 1, h, w))
    filtered = window.filter(planes)
    ho, wo = filtered.shape[2], filtered.shape[3]
    mu1, mu2, xx, yy, xy = F.unstack(F.reshape(filtered, (5, n, c, ho, wo)), 0)
    mu1_mu2, mu1_sq, mu2_sq = mu1 * mu2, mu1 * mu1, mu2 * mu2
    v1 = 2.0 * (xy - mu1_mu2) + c2
    v2 = (xx - mu1_sq) + (yy - mu2_sq) + c2
    ssim = ((2.0 * mu1_mu2 + c1) * v1) / ((mu1_sq + mu2_sq + c1) * v2)
    return _mean(ssim, (2, 3)), _mean(v1 / v2, (2, 3))


def _check_window_fits(cell: str, shape, filter_size: int, level: int | None = None) -> None:
    h, w = shape[2], shape[3]
    if h < filter_size or w < filter_size:
        where = "" if level is None else f" at scale {level} (the image halved {level} times: {h}x{w})"
        raise ValueError(
            f"For '{cell}', the height and width of 'img1'{where} must be >= filter_size ({filter_size}), but got "
            f"shape {list(shape)}."
        )


# ---------------------------------------------------------------------------------------------
# Cells


class ImageGradients(Cell):
    r"""MindSpore's ``nn.ImageGradients()``: ``(dy, dx) = cell(images)`` for ``images`` [N, C, H, W] of any real
    dtype, each of the input's shape and dtype:

    .. math:: dy[..., i, :] = image[..., i + 1, :] - image[..., i, :]\ (i < H - 1), \quad dy[..., H - 1, :] = 0

    and ``dx`` likewise along W (its last column 0). Slice, Sub and Concat with zeros."""

    def construct(self, images):
        name = "ImageGradients"
        if not isinstance(images, Tensor):
            raise TypeError(f"For '{name}', the 'images' must be a Tensor, but got {type(images).__name__}.")
        if images.ndim != 4:
            raise ValueError(
                f"For '{name}', the 'images' must be 4-D (N, C, H, W), but got shape {list(images.shape)}."
            )
        return self._difference(images, 2), self._difference(images, 3)

    @staticmethod
    def _difference(x: Tensor, axis: int) -> Tensor:
        shape = tuple(x.shape)
        length = shape[axis]
        edge = list(shape)
        edge[axis] = 1
        zeros = F.zeros_like(_slice(x, (0, 0, 0, 0), tuple(edge)))
        if length == 1:
            return zeros
        body = list(shape)
        body[axis] = length - 1
        start = [0, 0, 0, 0]
        start[axis] = 1
        diff = _slice(x, tuple(start), tuple(body)) - _slice(x, (0, 0, 0, 0), tuple(body))
        return (_concat2 if axis == 2 else _concat3)((diff, zeros))


class SSIM(Cell):
    r"""MindSpore's ``nn.SSIM(max_val=1.0, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03)``: the structural
    similarity of two image batches (Wang et al., 2004), ``cell(img1, img2)`` -> [N]:

    .. math::
        SSIM(x, y) = \frac{(2\mu_x\mu_y + C_1)(2\sigma_{xy} + C_2)}{(\mu_x^2 + \mu_y^2 + C_1)(\sigma_x^2 +
        \sigma_y^2 + C_2)}, \quad C_1 = (k_1 L)^2, \quad C_2 = (k_2 L)^2

    with :math:`L` = ``max_val`` and the means, variances and covariance taken under a ``filter_size`` Gaussian
    window of deviation ``filter_sigma`` (``gaussian_window``) at every valid position; the map's mean over the
    positions, then over the channels, is each element's value (1 for identical images).

    ``img1`` and ``img2``: [N, C, H, W] of one shape and dtype, float16 or float32 (MindSpore's), H and W at least
    ``filter_size``. Computed in float32 (Conv2D of the five products with the window in one call); the result
    has ``img1``'s dtype, as MindSpore documents. ``max_val`` an int or float > 0; ``filter_size`` an int >= 1;
    ``filter_sigma``, ``k1`` and ``k2`` floats (``filter_sigma`` > 0): anything else is a TypeError or
    ValueError, as MindSpore's."""

    def __init__(self, max_val=1.0, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03):
        super().__init__()
        name = type(self).__name__
        self.max_val = _max_val(name, max_val)
        self.filter_size = _filter_size(name, filter_size)
        self.filter_sigma = _float(name, "filter_sigma", filter_sigma, positive=True)
        self.k1 = _float(name, "k1", k1)
        self.k2 = _float(name, "k2", k2)
        self._window = _Window(self.filter_size, self.filter_sigma)

    def construct(self, img1, img2):
        name = type(self).__name__
        _images(name, img1, img2, _SSIM_DTYPES)
        _check_window_fits(name, img1.shape, self.filter_size)
        max_val = _effective_max(self.max_val, img1.dtype)
        c1, c2 = (self.k1 * max_val) ** 2, (self.k2 * max_val) ** 2
        ssim, _ = _ssim_and_cs(self._window, _as_float32(img1), _as_float32(img2), c1, c2)
        out = _mean(ssim, -1)
        return out if img1.dtype == mstype.float32 else F.cast(out, img1.dtype)

    def extend_repr(self) -> str:
        return (
            f"max_val={self.max_val}, filter_size={self.filter_size}, filter_sigma={self.filter_sigma}, "
            f"k1={self.k1}, k2={self.k2}"
        )


class MSSSIM(Cell):
    r"""MindSpore's ``nn.MSSSIM(max_val=1.0, power_factors=(0.0448, 0.2856, 0.3001, 0.2363, 0.1333),
    filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03)``: multi-scale SSIM (Wang, Simoncelli and Bovik, 2004),
    ``cell(img1, img2)`` -> [N] float32. With M = ``len(power_factors)`` scales, the images halved by a 2x2
    average pooling (stride 2, "valid") between scales, :math:`cs_j` the mean contrast-structure term of scale
    :math:`j` and :math:`ssim_M` the mean SSIM of the last (``SSIM``'s maps, per channel):

    .. math:: MSSSIM = \mathrm{mean}_c \Big( \mathrm{relu}(ssim_M)^{p_M} \prod_{j < M} \mathrm{relu}(cs_j)^{p_j} \Big)

    (:math:`p_j` = ``power_factors[j]``). ``img1``, ``img2``: [N, C, H, W] of one shape and dtype, float64,
    float32, float16 or uint8 (MindSpore's; uint8 images and ``max_val`` are scaled by 1 / 255); every scale must
    be at least ``filter_size`` high and wide (else a ValueError naming the scale). Arguments checked as
    ``SSIM``'s, ``power_factors`` a tuple or list of floats."""

    def __init__(
        self, max_val=1.0, power_factors=_MSSSIM_POWERS, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03
    ):  # fmt: skip
        super().__init__()
        name = type(self).__name__
        self.max_val = _max_val(name, max_val)
        if not isinstance(power_factors, (tuple, list)):
            raise TypeError(
                f"For '{name}', the 'power_factors' must be a tuple or a list, but got {type(power_factors).__name__}."
            )
        if not power_factors or any(isinstance(p, bool) or not isinstance(p, (int, float)) for p in power_factors):
            raise ValueError(
                f"For '{name}', the 'power_factors' must hold one number per scale, but got {power_factors!r}."
            )
        self.power_factors = tuple(power_factors)
        self.filter_size = _filter_size(name, filter_size)
        self.filter_sigma = _float(name, "filter_sigma", filter_sigma, positive=True)
        self.k1 = _float(name, "k1", k1)
        self.k2 = _float(name, "k2", k2)
        self.level = len(self.power_factors)
        self._window = _Window(self.filter_size, self.filter_sigma)
        self._weights = np.asarray(self.power_factors, np.float32)
        self._pool = conv_ops.AvgPool(kernel_size=2, strides=2, pad_mode="valid")

    def construct(self, img1, img2):
        name = type(self).__name__
        _images(name, img1, img2, _MSSSIM_DTYPES)
        max_val = _effective_max(self.max_val, img1.dtype)
        c1, c2 = (self.k1 * max_val) ** 2, (self.k2 * max_val) ** 2
        x, y = _as_float32(img1), _as_float32(img2)
        terms = []
        for level in range(self.level):
            _check_window_fits(name, x.shape, self.filter_size, level if level else None)
            ssim, cs = _ssim_and_cs(self._window, x, y, c1, c2)
            terms.append(F.relu(ssim if level == self.level - 1 else cs))
            if level < self.level - 1:
                x, y = self._pool(x), self._pool(y)
        weights = Tensor(self._weights, device=x.device)
        stacked = _pow(F.stack(tuple(terms), -1), weights)  # [N, C, M]
        return _mean(_prod(stacked, -1), -1)

    def extend_repr(self) -> str:
        return (
            f"max_val={self.max_val}, power_factors={self.power_factors}, filter_size={self.filter_size}, "
            f"filter_sigma={self.filter_sigma}, k1={self.k1}, k2={self.k2}"
        )


class PSNR(Cell):
    r"""MindSpore's ``nn.PSNR(max_val=1.0)``: the peak signal-to-noise ratio of each image pair,
    ``cell(img1, img2)`` -> [N] float32:

    .. math:: MSE = \frac{1}{CHW} \sum_{c, i, j} (I_{cij} - K_{cij})^2, \quad PSNR = 10 \log_{10}
              \frac{MAX^2}{MSE}

    (MAX = ``max_val``; identical images give inf). ``img1``, ``img2``: [N, C, H, W] of one shape and any real
    dtype (bool, ints, floats), computed in float32. For an integer dtype ``max_val`` is first cast to it (1.5
    becomes 1), as MindSpore's; the ``1 / dtype_max`` scaling MindSpore applies to images and ``max_val`` cancels
    in the ratio, so opforge leaves it out (no float32 underflow for int64 images)."""

    def __init__(self, max_val=1.0):
        super().__init__()
        self.max_val = _max_val(type(self).__name__, max_val)

    def construct(self, img1, img2):
        _images(type(self).__name__, img1, img2)
        if img1.dtype.np_dtype == np.bool_:
            max_val = float(bool(self.max_val))
        else:
            max_val = np.asarray(self.max_val).astype(img1.dtype.np_dtype).astype(np.float64).item()
        x = F.cast(img1, mstype.float32) if img1.dtype != mstype.float32 else img1
        y = F.cast(img2, mstype.float32) if img2.dtype != mstype.float32 else img2
        mse = _mean(F.square(x - y), (-3, -2, -1))
        return F.log(float(np.float32(max_val) ** 2) / mse) * float(10.0 / np.log(10.0))

    def extend_repr(self) -> str:
        return f"max_val={self.max_val}"
