"""Spatial-transformer sampling from primitives: MindSpore's ``ops.grid_sample`` (``GridSampler2D``,
``GridSampler3D``) and ``ops.affine_grid`` (``AffineGrid``), with PyTorch's semantics, as MindSpore has them.

``affine_grid`` maps a regular grid of normalised output coordinates in [-1, 1] through a batch of affine
matrices (BatchMatMul against a host-computed base grid). ``grid_sample`` un-normalises each grid point to a
pixel position of the input, applies the padding mode to it, and interpolates the input there (nearest: one
corner; bilinear/trilinear: 2 corners per dim, gathered with GatherNd by opforge/ops/sampling.py). Everything
is element-wise math and gathers, so the gradient reaches the input and (bilinear) the grid, and ``jit``
and both backends come with the primitives (``vmap`` through GatherNd's per-example fallback).
"""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge.ops import functional as F
from opforge.ops.sampling import Corner, clamp_index, interpolate, linear_corners
from opforge.primitives.validator import Validator as validator
from opforge.tensor import Tensor

__all__ = ["grid_sample", "affine_grid", "GridSampler2D", "GridSampler3D", "AffineGrid"]

_FLOATS = (mstype.float16, mstype.float32, mstype.float64)
_MODES = ("bilinear", "nearest")
_PADDINGS = ("zeros", "border", "reflection")


def _tensor(op: str, arg: str, x) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{op}', the '{arg}' must be a Tensor, but got {type(x).__name__}.")
    return x


def _choice(op: str, arg: str, value, choices: tuple) -> str:
    validator.check_value_type(arg, value, [str], op)
    if value not in choices:
        raise ValueError(f"For '{op}', the '{arg}' must be one of {choices}, but got {value!r}.")
    return value


# ---------------------------------------------------------------------------------------------
# Coordinates


def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    """[-1, 1] to pixels: corner pixel centres (``align_corners``) or corner pixel edges."""
    if align_corners:
        return (coord + 1.0) * (0.5 * (size - 1))
    return ((coord + 1.0) * float(size) - 1.0) * 0.5


def _reflect(coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """``coord`` reflected into [twice_low / 2, twice_high / 2] by its bounds, as often as needed (PyTorch's
    reflect_coordinates). Floor has a zero gradient, so the gradient is +-1 by the parity of the reflections."""
    if twice_low == twice_high:
        return F.zeros_like(coord)
    low, span = twice_low / 2.0, (twice_high - twice_low) / 2.0
    dist = F.abs(coord - low)
    flips = F.floor(dist / span)
    extra = dist - flips * span
    even = F.equal(flips - F.floor(flips * 0.5) * 2.0, 0.0)
    return F.where(even, extra + low, (span - extra) + low)


def _pad_coord(coord: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    """The pixel position after ``padding_mode``: "border" clamps into [0, size - 1]; "reflection" reflects by
    the corner pixel centres (``align_corners``) or edges, then clamps; "zeros" keeps it (corners outside the
    input then weigh 0)."""
    if padding_mode == "border":
        return F.clip_by_value(coord, 0.0, float(size - 1))
    if padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        return F.clip_by_value(coord, 0.0, float(size - 1))
    return coord


def _nearest_corner(coord: Tensor, size: int) -> tuple:
    """The nearest pixel (halves to even, PyTorch's nearbyint), weight 0 outside the input."""
    pos = F.rint(coord)
    inside = F.logical_and(F.greater_equal(pos, 0.0), F.less_equal(pos, float(size - 1)))
    return (Corner(clamp_index(pos, size), F.cast(inside, coord.dtype)),)


# ---------------------------------------------------------------------------------------------
# grid_sample


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=False):  # noqa: A002
    r"""Samples ``input`` at the positions of ``grid`` (MindSpore's ``ops.grid_sample``, PyTorch's): ``input``
    [N, C, H_in, W_in] with ``grid`` [N, H_out, W_out, 2] gives [N, C, H_out, W_out]; 5-D ``input`` [N, C, D_in,
    H_in, W_in] with ``grid`` [N, D_out, H_out, W_out, 3] gives [N, C, D_out, H_out, W_out]. ``grid[..., 0]`` is
    x (the width), ``[..., 1]`` y, ``[..., 2]`` z, normalised so -1 and 1 are the first and last pixels' centres
    (``align_corners``) or outer edges (otherwise): pixel :math:`x = \frac{(g + 1)(W - 1)}{2}` or
    :math:`\frac{(g + 1) W - 1}{2}`.

    ``mode`` "bilinear" (trilinear for 5-D) interpolates linearly between the neighbouring pixels, "nearest"
    takes the nearest (halves to even). ``padding_mode`` for positions outside the input: "zeros" (pixels
    outside are 0), "border" (the position clamped to the edge), "reflection" (reflected by the edges until
    inside). dtypes: float16, float32, float64 (float16 computed in float32), ``grid`` as ``input``.
    Differentiable with respect to ``input`` and, in "bilinear" mode, ``grid``."""
    name = "grid_sample"
    x, g = _tensor(name, "input", input), _tensor(name, "grid", grid)
    validator.check_tensors_dtypes_same_and_valid({"input": x.dtype, "grid": g.dtype}, _FLOATS, name)
    mode = _choice(name, "mode", mode, _MODES)
    padding_mode = _choice(name, "padding_mode", padding_mode, _PADDINGS)
    validator.check_value_type("align_corners", align_corners, [bool], name)
    if x.ndim not in (4, 5):
        raise ValueError(f"For '{name}', the 'input' must be 4-D or 5-D, but got shape {list(x.shape)}.")
    k = x.ndim - 2
    if g.ndim != x.ndim or g.shape[-1] != k or g.shape[0] != x.shape[0]:
        raise ValueError(
            f"For '{name}', the 'grid' must have shape [N={x.shape[0]}, *out, {k}] for a {x.ndim}-D 'input', but got "
            f"{list(g.shape)}."
        )
    dtype = x.dtype
    if dtype == mstype.float16:
        x, g = F.cast(x, mstype.float32), F.cast(g, mstype.float32)
    sizes = tuple(x.shape[2:])  # (D,) H, W
    source = F.transpose(x, (0, *range(2, x.ndim), 1))  # channels last
    coords = F.unstack(g, axis=-1)  # x, y(, z): the reverse of the dims
    dims = []
    for coord, size in zip(reversed(coords), sizes):
        pos = _pad_coord(_unnormalize(coord, size, align_corners), size, padding_mode, align_corners)
        dims.append(_nearest_corner(pos, size) if mode == "nearest" else linear_corners(pos, size))
    n = x.shape[0]
    batch = Tensor(np.arange(n, dtype=np.int32).reshape((n,) + (1,) * k), device=x.device)
    out = interpolate(source, batch, dims, tuple(g.shape[:-1]))  # [N, *out, C]
    out = F.transpose(out, (0, k + 1, *range(1, k + 1)))
    return out if out.dtype == dtype else F.cast(out, dtype)


class _GridSampler:
    _rank = 4

    def __init__(self, interpolation_mode="bilinear", padding_mode="zeros", align_corners=False):
        name = type(self).__name__
        self.interpolation_mode = _choice(name, "interpolation_mode", interpolation_mode, _MODES)
        self.padding_mode = _choice(name, "padding_mode", padding_mode, _PADDINGS)
        validator.check_value_type("align_corners", align_corners, [bool], name)
        self.align_corners = align_corners

    def __call__(self, input_x, grid):
        x = _tensor(type(self).__name__, "input_x", input_x)
        if x.ndim != self._rank:
            raise ValueError(
                f"For '{type(self).__name__}', the 'input_x' must be {self._rank}-D, but got shape {list(x.shape)}."
            )
        return grid_sample(x, grid, self.interpolation_mode, self.padding_mode, self.align_corners)


class GridSampler2D(_GridSampler):
    """MindSpore's ``ops.GridSampler2D(interpolation_mode, padding_mode, align_corners)(input_x, grid)``: 4-D
    ``ops.grid_sample``."""

    _rank = 4


class GridSampler3D(_GridSampler):
    """MindSpore's ``ops.GridSampler3D(interpolation_mode, padding_mode, align_corners)(input_x, grid)``: 5-D
    ``ops.grid_sample`` (trilinear or nearest)."""

    _rank = 5


# ---------------------------------------------------------------------------------------------
# affine_grid


def _base_coords(size: int, align_corners: bool) -> np.ndarray:
    """The normalised coordinates of ``size`` pixels' centres."""
    if size == 1:
        return np.zeros(1)
    steps = np.arange(size, dtype=np.float64)
    if align_corners:
        return steps * (2.0 / (size - 1)) - 1.0
    return (steps * 2.0 + 1.0) / size - 1.0


def affine_grid(theta, size, align_corners=False):
    r"""A sampling grid from a batch of affine matrices (MindSpore's ``ops.affine_grid``, PyTorch's): ``theta``
    [N, 2, 3] with ``size`` (N, C, H, W) gives [N, H, W, 2]; ``theta`` [N, 3, 4] with ``size`` (N, C, D, H, W)
    gives [N, D, H, W, 3]. Grid point (i, j) is :math:`\theta [x_j, y_i, 1]^T` with the normalised pixel
    centres :math:`x_j = -1 + \frac{2 j}{W - 1}` (``align_corners``) or :math:`\frac{2 j + 1}{W} - 1`, y and z
    likewise (0 for a dim of one pixel). BatchMatMul against the host-computed base grid, so it
    differentiates with respect to ``theta``. dtypes: float16, float32, float64."""
    name = "affine_grid"
    t = _tensor(name, "theta", theta)
    validator.check_tensor_dtype_valid("theta", t.dtype, _FLOATS, name)
    if not isinstance(size, tuple):
        raise TypeError(f"For '{name}', the 'size' must be a tuple, but got {type(size).__name__}.")
    validator.check_value_type("align_corners", align_corners, [bool], name)
    if len(size) not in (4, 5) or any(isinstance(v, bool) or not isinstance(v, int) or v <= 0 for v in size):
        raise ValueError(f"For '{name}', the 'size' must be 4 or 5 positive ints, but got {size!r}.")
    k = len(size) - 2
    if t.ndim != 3 or tuple(t.shape[1:]) not in ((2, 3), (3, 4)):
        raise ValueError(f"For '{name}', the 'theta' must have shape [N, 2, 3] or [N, 3, 4], but got {list(t.shape)}.")
    if tuple(t.shape[1:]) != (k, k + 1):
        raise ValueError(
            f"For '{name}', a 'theta' of shape {list(t.shape)} needs a 'size' of {t.shape[1] + 2} ints, but got "
            f"{size!r}."
        )
    if size[0] != t.shape[0]:
        raise ValueError(f"For '{name}', the 'size[0]' ({size[0]}) must equal the batch of 'theta' ({t.shape[0]}).")
    spatial = size[2:]
    axes = [_base_coords(s, align_corners) for s in reversed(spatial)]  # x, y(, z)
    mesh = np.meshgrid(*axes[::-1], indexing="ij")[::-1]  # each [(D,) H, W], x first
    base = np.stack([*mesh, np.ones(spatial)], -1).reshape(-1, k + 1)  # [P, k + 1]
    compute = mstype.float32 if t.dtype == mstype.float16 else t.dtype
    base_t = Tensor(np.broadcast_to(base, (t.shape[0],) + base.shape).astype(compute.np_dtype), device=t.device)
    tc = t if compute == t.dtype else F.cast(t, compute)
    grid = F.batch_matmul(base_t, tc, transpose_b=True)  # [N, P, k]
    grid = F.reshape(grid, (t.shape[0], *spatial, k))
    return grid if compute == t.dtype else F.cast(grid, t.dtype)


class AffineGrid:
    """MindSpore's ``ops.AffineGrid(align_corners=False)(theta, output_size)``: ``ops.affine_grid``."""

    def __init__(self, align_corners=False):
        validator.check_value_type("align_corners", align_corners, [bool], "AffineGrid")
        self.align_corners = align_corners

    def __call__(self, theta, output_size):
        return affine_grid(theta, output_size, self.align_corners)
