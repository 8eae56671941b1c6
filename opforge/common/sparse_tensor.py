"""MindSpore's ``mindspore.common.sparse_tensor`` path: ``RowTensor`` (opforge/sparse_tensor.py)."""

from opforge.sparse_tensor import RowTensor

__all__ = ["RowTensor"]
