"""Grad operators: the backward kernels of activations and math ops (used by their bprops)."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.primitives._utils import _Operator
from opforge.primitives.primitive import prim_attr_register
from opforge.primitives.validator import Validator as validator

__all__ = [
    "ReluGrad",
    "EluGrad",
    "SigmoidGrad",
    "TanhGrad",
    "SqrtGrad",
    "MaximumGrad",
    "MinimumGrad",
    "AbsGrad",
    "GeLUGrad",
    "SoftplusGrad",
    "HSigmoidGrad",
    "HSwishGrad",
]


class _ActivationGrad(_Operator):
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


class SqrtGrad(_ActivationGrad):
    r"""``SqrtGrad()(y, dy)``: :math:`dx = \frac{dy}{2 y}` (y is Sqrt's output, so :math:`y = \sqrt{x}`).
    dtypes: float16, bfloat16, float32, float64."""

    arg_names = ("y", "dy")

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["y", "dy"], outputs=["output"])


class _MinMaxGrad(_Operator):
    """(x, y, dout) -> (dx, dy): x and y broadcast to dout's shape; dx and dy have dout's shape."""

    valid_dtypes = mstype.int_type + mstype.uint_type + mstype.float_type

    @prim_attr_register
    def __init__(self, grad_x=True, grad_y=True):
        validator.check_value_type("grad_x", grad_x, [bool], self.name)
        validator.check_value_type("grad_y", grad_y, [bool], self.name)
        self.init_prim_io_names(inputs=["x", "y", "dout"], outputs=["dx", "dy"])

    def infer_shape(self, x_shape, y_shape, dout_shape):
        for name, shape in (("x", x_shape), ("y", y_shape)):
            lead = len(dout_shape) - len(shape)
            if lead < 0 or any(d not in (1, dout_shape[lead + i]) for i, d in enumerate(shape)):
                raise ValueError(
                    f"For '{self.name}', the '{name}' of shape {list(shape)} must broadcast to the shape of 'dout' "
                    f"{list(dout_shape)}, but it does not."
                )
        return list(dout_shape), list(dout_shape)

    def infer_dtype(self, x_dtype, y_dtype, dout_dtype):
        args = {"x": x_dtype, "y": y_dtype, "dout": dout_dtype}
        dtype = validator.check_tensors_dtypes_same_and_valid(args, self.valid_dtypes, self.name)
        return dtype, dtype


class MaximumGrad(_MinMaxGrad):
    r"""The gradient of Maximum: ``MaximumGrad(grad_x=True, grad_y=True)(x, y, dout) -> (dx, dy)``.

    :math:`dx = dout` where :math:`x \ge y`, else 0; :math:`dy = dout` where :math:`x < y`, else 0: ties go
    to x. Where x or y is NaN, dout goes to the input Maximum took its NaN from (x when both are NaN), so
    :math:`dx + dy = dout` always. x and y must broadcast to dout's shape; dx and dy have dout's shape (the
    bprop sums them back to the input shapes). ``grad_x=False`` (``grad_y=False``) makes dx (dy) zeros.
    dtypes: x, y and dout of one dtype: integers and floats.
    """


class MinimumGrad(_MinMaxGrad):
    r"""The gradient of Minimum: ``MinimumGrad(grad_x=True, grad_y=True)(x, y, dout) -> (dx, dy)``.

    :math:`dx = dout` where :math:`x \le y`, else 0; :math:`dy = dout` where :math:`x > y`, else 0: ties go
    to x. NaN, shapes, ``grad_x``/``grad_y`` and dtypes: as for MaximumGrad.
    """


class GeLUGrad(_Operator):
    r"""``GeLUGrad()(dy, x, y)``: GeLU's gradient (y is GeLU's output, kept for MindSpore's signature):

    .. math::
        dx = dy \left(\tfrac12 (1 + t) + \tfrac12 x (1 - t^2) \sqrt{2/\pi} (1 + 3 \cdot 0.044715 x^2)\right),
        \quad t = \tanh\left(\sqrt{2/\pi} (x + 0.044715 x^3)\right)

    dtypes: float16, bfloat16, float32, float64.
    """

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["dy", "x", "y"], outputs=["z"])

    def infer_shape(self, dy, x, y):
        for name, shape in (("x", x), ("y", y)):
            if list(shape) != list(dy):
                raise ValueError(
                    f"For '{self.name}', 'dy' and '{name}' must have the same shape, "
                    f"but got {list(dy)} and {list(shape)}."
                )
        return dy

    def infer_dtype(self, dy, x, y):
        return validator.check_tensors_dtypes_same_and_valid({"dy": dy, "x": x, "y": y}, mstype.float_type, self.name)


class SoftplusGrad(_ActivationGrad):
    r"""``SoftplusGrad()(gradients, features)``: :math:`dx = gradients \cdot \sigma(features)`
    (features is Softplus's input). dtypes: float16, bfloat16, float32, float64."""

    arg_names = ("gradients", "features")

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["gradients", "features"], outputs=["backprops"])


class HSigmoidGrad(_ActivationGrad):
    r"""``HSigmoidGrad()(grads, input_x)``: :math:`dx = grads / 6` for :math:`-3 < x < 3`, else 0.
    dtypes: float16, bfloat16, float32, float64."""

    arg_names = ("grads", "input_x")

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["grads", "input_x"], outputs=["output"])


class HSwishGrad(_ActivationGrad):
    r"""``HSwishGrad()(y_grad, x)``: :math:`dx = 0` for :math:`x \le -3`, ``y_grad`` for :math:`x \ge 3`,
    else :math:`y\_grad \cdot (2x + 3) / 6`. dtypes: float16, bfloat16, float32, float64."""

    arg_names = ("y_grad", "x")

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["y_grad", "x"], outputs=["output"])


class AbsGrad(_ActivationGrad):
    r"""``AbsGrad()(x, dy)``: :math:`dx = dy \cdot \operatorname{sign}(x)` (0 at x = 0), Abs's gradient.
    dtypes: float16, bfloat16, float32, float64."""

    arg_names = ("x", "dy")

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["input_x", "input_dy"], outputs=["output"])
