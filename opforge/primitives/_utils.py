"""Shape helpers shared by operator definitions."""

from __future__ import annotations

__all__ = ["broadcast_shape"]


def broadcast_shape(prim_name: str, x_shape, y_shape, x_name: str = "x", y_name: str = "y") -> list:
    """NumPy broadcasting of two shapes; a clear error when they do not broadcast."""
    ndim = max(len(x_shape), len(y_shape))
    x = [1] * (ndim - len(x_shape)) + list(x_shape)
    y = [1] * (ndim - len(y_shape)) + list(y_shape)
    out = []
    for a, b in zip(x, y):
        if a != b and a != 1 and b != 1:
            raise ValueError(
                f"For '{prim_name}', the shapes of '{x_name}' {list(x_shape)} and '{y_name}' {list(y_shape)} "
                f"cannot broadcast."
            )
        out.append(b if a == 1 else a)
    return out
