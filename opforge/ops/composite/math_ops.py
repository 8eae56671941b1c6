"""MindSpore 1.x's ``ops.composite.math_ops`` functions the zoo still calls as ``C.<name>``."""

from __future__ import annotations

from opforge.ops import functional as F

__all__ = ["matmul"]


def matmul(x1, x2, dtype=None):
    """MindSpore 1.x's ``C.matmul(x1, x2, dtype=None)`` (``mindspore.numpy.matmul``): ``np.matmul``'s product,
    the batch dims broadcast, a 1-D ``x1`` a row and a 1-D ``x2`` a column whose dim is dropped; ``dtype``, when
    given, the result's dtype (the zoo's TB-Net multiplies its [batch, paths, dim, dim] relation matrices by
    [batch, 1, dim, 1] item vectors so)."""
    out = F.matmul(x1, x2)
    return out if dtype is None else F.cast(out, dtype)
