"""Grad operators: the backward kernels of activations (used by their bprops)."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.primitives.primitive import PrimitiveWithInfer, prim_attr_register
from opforge.primitives.validator import Validator as validator

__all__ = ["ReluGrad", "EluGrad", "SigmoidGrad", "TanhGrad"]


class _ActivationGrad(PrimitiveWithInfer):
    """Two same-shape, same-dtype float inputs; the output has their shape and dtype."""

    arg_names = ("dy", "y")

    def infer_shape(self, a, b):
        if list(a) != list(b):
            raise ValueError(
                f"For '{self.name}', '{self.arg_names[0]}' and '{self.arg_names[1]}' must have the same shape, "
                f"but got {list(a)} and {list(b)}."
            )
        return a

    def infer_dtype(self, a, b):
        args = {self.arg_names[0]: a, self.arg_names[1]: b}
        return validator.check_tensors_dtypes_same_and_valid(args, mstype.float_type, self.name)


class ReluGrad(_ActivationGrad):
    r"""``ReluGrad()(dy, y)``: :math:`dx = dy` where :math:`y > 0`, else 0 (y is ReLU's output).
    dtypes: float16, bfloat16, float32, float64."""

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["y_backprop", "x"], outputs=["output"])


class EluGrad(_ActivationGrad):
    r"""``EluGrad(alpha)(dy, y)``: :math:`dx = dy` where :math:`y > 0`, else :math:`dy (y + \alpha)`
    (y is Elu's output). dtypes: float16, bfloat16, float32, float64."""

    @prim_attr_register
    def __init__(self, alpha=1.0):
        validator.check_value_type("alpha", alpha, [float], self.name)
        self.init_prim_io_names(inputs=["y_grad", "x"], outputs=["output"])


class SigmoidGrad(_ActivationGrad):
    r"""``SigmoidGrad()(y, dy)``: :math:`dx = dy \cdot y (1 - y)` (y is Sigmoid's output).
    dtypes: float16, bfloat16, float32, float64."""

    arg_names = ("y", "dy")

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["y", "dy"], outputs=["output"])


class TanhGrad(_ActivationGrad):
    r"""``TanhGrad()(y, dy)``: :math:`dx = dy (1 - y^2)` (y is Tanh's output).
    dtypes: float16, bfloat16, float32, float64."""

    arg_names = ("y", "dy")

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["y", "dy"], outputs=["output"])
