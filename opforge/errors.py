"""Exceptions opforge raises beyond Python's built-in ones."""

from opforge._C import KernelError

__all__ = ["KernelError", "KernelNotFoundError"]


class KernelNotFoundError(TypeError):
    """No registered kernel accepts the inputs' dtypes on the chosen backend."""
