"""MindSpore's module path ``mindspore.common.tensor``,
which model-zoo scripts import from: the same objects as ``opforge.tensor``."""

from opforge.tensor import Tensor

__all__ = ["Tensor"]
