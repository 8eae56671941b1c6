"""MindSpore's ``RowTensor`` (``mindspore.RowTensor``, ``mindspore.common.RowTensor``): a set of slices of a
dense tensor along its first dim, ``dense[indices[i], ...] = values[i, ...]``, the other rows 0. MindSpore's
embedding gradients take this form; opforge's gradients are dense, so a RowTensor is what a program builds
itself, and what the ``"RowTensor"`` overloads of a ``MultitypeFuncGraph`` receive (the model zoo's gradient
scaling and overflow checks register them)."""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge.tensor import Tensor

__all__ = ["RowTensor"]


class RowTensor:
    """``RowTensor(indices=None, values=None, shape=None, row_tensor=None)``: ``indices`` a 1-D int Tensor of
    :math:`d_0` row numbers, ``values`` a Tensor of shape :math:`(d_0, d_1, ..., d_n)`, ``shape`` the dense
    shape :math:`(l_0, d_1, ..., d_n)` (a tuple of ints); or a copy of ``row_tensor``'s parts."""

    def __init__(self, indices=None, values=None, shape=None, row_tensor=None):
        if row_tensor is not None:
            if not isinstance(row_tensor, RowTensor):
                raise TypeError(
                    f"For 'RowTensor', the 'row_tensor' must be a RowTensor, but got {type(row_tensor).__name__}."
                )
            indices, values, shape = row_tensor.indices, row_tensor.values, row_tensor.dense_shape
        for name, value in (("indices", indices), ("values", values)):
            if not isinstance(value, Tensor):
                raise TypeError(f"For 'RowTensor', the '{name}' must be a Tensor, but got {type(value).__name__}.")
        if indices.ndim != 1 or indices.dtype not in mstype.int_type + mstype.uint_type:
            raise ValueError(
                f"For 'RowTensor', the 'indices' must be a 1-D int Tensor, but got shape {list(indices.shape)} "
                f"and dtype {indices.dtype}."
            )
        if values.ndim < 1 or values.shape[0] != indices.shape[0]:
            raise ValueError(
                f"For 'RowTensor', the 'values' must have one row per index ({indices.shape[0]}), but got shape "
                f"{list(values.shape)}."
            )
        if not isinstance(shape, (tuple, list)) or not all(
            isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in shape
        ):
            raise TypeError(f"For 'RowTensor', the 'shape' must be a tuple of ints, but got {shape!r}.")
        shape = tuple(int(d) for d in shape)
        if len(shape) != values.ndim or shape[1:] != tuple(values.shape[1:]):
            raise ValueError(
                f"For 'RowTensor', the 'shape' {shape} must be the 'values' shape {list(values.shape)} with its "
                "first dim replaced by the dense tensor's."
            )
        self._indices, self._values, self._shape = indices, values, shape

    @property
    def indices(self) -> Tensor:
        """The row numbers (1-D)."""
        return self._indices

    @property
    def values(self) -> Tensor:
        """The rows, one per index."""
        return self._values

    @property
    def dense_shape(self) -> tuple:
        """The shape of the dense tensor the rows belong to."""
        return self._shape

    def __repr__(self) -> str:
        return f"RowTensor(indices={self._indices!r}, values={self._values!r}, dense_shape={self._shape})"
