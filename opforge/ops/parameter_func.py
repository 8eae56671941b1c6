"""MindSpore's ``ops.AssignAdd`` / ``ops.assign_add`` (mindspore/ops/function/parameter_func.py): the Parameter
updated in place by an addition, composed of ``Add`` and ``Assign`` (so eager calls, traced graphs and both
backends follow those two), and ``identity`` (``P.identity``, ``F.identity``): its argument itself.

This module imports primitives only, so ``ops.functional`` can re-export ``assign_add``."""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge.primitives.array_ops import Assign, Cast
from opforge.primitives.math_ops import Add
from opforge.tensor import Parameter, Tensor

_assign, _add, _cast = Assign(), Add(), Cast()


def _value_for(variable: Parameter, value) -> Tensor:
    """``value`` as a Tensor of ``variable``'s dtype: a Tensor of its shape cast losslessly, or a number."""
    dtype = variable.dtype
    category = mstype.weak_category(value)
    if isinstance(value, Tensor):
        if tuple(value.shape) != tuple(variable.shape):
            raise ValueError(
                f"For 'AssignAdd', the 'value' must have the shape of 'variable' {list(variable.shape)}, "
                f"but got {list(value.shape)}."
            )
        src = value.dtype
    elif category is not None:
        src = {0: mstype.bool_, 1: mstype.int8, 2: mstype.float16, 3: mstype.complex64}[category]
    else:
        raise TypeError(f"For 'AssignAdd', the 'value' must be a Number or a Tensor, but got {type(value).__name__}.")
    # a number only needs its kind to fit (as MindSpore converts it to the variable's dtype)
    fits = mstype.can_cast_losslessly(src, dtype) if isinstance(value, Tensor) else src.category <= dtype.category
    if not fits:
        shown = src if isinstance(value, Tensor) else type(value).__name__
        raise TypeError(
            f"For 'AssignAdd', the 'value' ({shown}) cannot be cast losslessly to {dtype}, the dtype of the "
            f"Parameter 'variable' it updates."
        )
    if isinstance(value, Tensor):
        return value if value.dtype is dtype else _cast(value, dtype)
    return Tensor(np.asarray(value, dtype.np_dtype), dtype)


def assign_add(variable, value):
    r"""In place: :math:`variable \leftarrow variable + value`; returns ``variable`` (MindSpore's
    ``ops.assign_add``).

    ``variable`` must be a Parameter of a number dtype (int8..int64, uint8..uint64, float16, bfloat16, float32,
    float64, complex64, complex128, as ``Add`` supports them); ``value`` a Tensor of its shape whose dtype casts
    losslessly to it, or a Python number (converted to ``variable``'s dtype). Composed of ``Add`` and ``Assign``.
    """
    if not isinstance(variable, Parameter):
        raise TypeError(
            f"For 'AssignAdd', the 'variable' is written in place, so it must be a Parameter, but got "
            f"{type(variable).__name__}."
        )
    if variable.dtype not in mstype.number_type:
        raise TypeError(f"For 'AssignAdd', the dtype of 'variable' must be a number type, but got {variable.dtype}.")
    return _assign(variable, _add(variable, _value_for(variable, value)))


class AssignAdd:
    r"""``AssignAdd()(variable, value)``: in place, :math:`variable \leftarrow variable + value`; returns
    ``variable``. See ``assign_add`` for the dtypes and checks."""

    def __call__(self, variable, value):
        return assign_add(variable, value)


class identity:  # noqa: N801  (MindSpore's lowercase class name)
    """``identity()(x)``: ``x`` itself, whatever it is (a Tensor, a tuple of gradients; MindSpore's
    ``P.identity``, which the model zoo uses as a no-op gradient reducer). ``Identity`` makes a copy."""

    def __call__(self, x):
        return x
