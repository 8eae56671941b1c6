"""Interpolated sampling from primitives: the corner gathers behind ``ops.grid_sample``, ``ops.CropAndResize``
and ``DeformableOffsets`` (opforge/ops/grid_sample.py, opforge/ops/detection.py, opforge/ops/deformable_conv.py).

A sample at a fractional position interpolates linearly along each spatial dim between two integer positions,
a "low" and a "high" one, with weights that sum to 1 (or less, where a position falls outside the input and
contributes 0). Each operator computes, per spatial dim, its corner indices (int32, clamped into the input so
every gather is in bounds) and their weights (zero for a corner that must not contribute), all broadcastable to
the sample grid; ``interpolate`` gathers every combination of corners from a channels-last source with GatherNd
and sums them, weighted. The data moves through GatherNd, Mul and Add, so the gradient reaches the source
(GatherNd's bprop scatters each corner's share back) and, through the weights, the sample positions; ``jit``
and both backends come with those primitives (``vmap`` too, through GatherNd's per-example fallback). The
indices are computed by Floor and Cast, whose gradients are zero, as the derivative of the interpolant away
from the integer positions says.
"""

from __future__ import annotations

import itertools

from opforge import dtype as mstype
from opforge.ops import functional as F
from opforge.tensor import Tensor

__all__ = ["Corner", "interpolate", "linear_corners", "clamp_index"]


class Corner:
    """One corner along one dim: ``index`` (an int32 Tensor) and ``weight`` (a float Tensor), broadcastable to
    the sample grid."""

    __slots__ = ("index", "weight")

    def __init__(self, index: Tensor, weight: Tensor):
        self.index, self.weight = index, weight


def clamp_index(position: Tensor, size: int) -> Tensor:
    """``position`` (an integer-valued float Tensor) clamped into [0, size - 1], as int32."""
    return F.cast(F.minimum(F.maximum(position, 0.0), float(size - 1)), mstype.int32)


def linear_corners(coord: Tensor, size: int, valid: Tensor = None) -> tuple:
    """The two corners of linear interpolation at ``coord`` along a dim of ``size``: ``floor(coord)`` with
    weight ``1 - frac`` and ``floor(coord) + 1`` with weight ``frac``, ``frac = coord - floor(coord)``. A corner
    outside [0, size - 1] gets weight 0 (zero padding); ``valid`` (a bool Tensor), where given, zeroes both."""
    low = F.floor(coord)
    frac = coord - low
    corners = []
    for position, weight in ((low, 1.0 - frac), (low + 1.0, frac)):
        inside = F.logical_and(F.greater_equal(position, 0.0), F.less_equal(position, float(size - 1)))
        if valid is not None:
            inside = F.logical_and(inside, valid)
        corners.append(Corner(clamp_index(position, size), weight * F.cast(inside, coord.dtype)))
    return tuple(corners)


def _broadcast(t: Tensor, shape: tuple) -> Tensor:
    return t if tuple(t.shape) == shape else F.broadcast_to(t, shape)


def interpolate(source: Tensor, batch: Tensor, dims: list, grid_shape: tuple) -> Tensor:
    r"""Gathered interpolation from ``source`` [B, S_1, ..., S_k, C] (channels last):

    .. math:: out[p, c] = \sum_{corners} \Big(\prod_d w_d(p)\Big) \, source[batch(p), i_1(p), ..., i_k(p), c]

    over every choice of one corner per dim, where ``dims`` holds for each of the k spatial dims a sequence of
    ``Corner`` s (two for linear interpolation, one for nearest), and ``batch`` the int32 batch index; all
    broadcastable to ``grid_shape`` (the sample grid P). Returns [*P, C] in ``source``'s dtype."""
    index_shape = tuple(grid_shape)
    batch = _broadcast(batch, index_shape)
    out = None
    for combo in itertools.product(*dims):
        idx = F.stack([batch] + [_broadcast(c.index, index_shape) for c in combo], -1)
        weight = combo[0].weight
        for c in combo[1:]:
            weight = weight * c.weight
        term = F.gather_nd(source, idx) * F.expand_dims(_broadcast(weight, index_shape), -1)
        out = term if out is None else out + term
    return out
