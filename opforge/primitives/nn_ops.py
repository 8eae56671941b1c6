"""Neural-network operators: activations and BiasAdd."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.primitives.primitive import PrimitiveWithInfer, prim_attr_register
from opforge.primitives.validator import Rel
from opforge.primitives.validator import Validator as validator

__all__ = ["ReLU", "Elu", "Sigmoid", "Tanh", "BiasAdd"]


class _Activation(PrimitiveWithInfer):
    """An elementwise activation: same shape and dtype out; floats unless stated otherwise."""

    valid_dtypes = mstype.float_type

    def infer_shape(self, x_shape):
        return x_shape

    def infer_dtype(self, x_dtype):
        return validator.check_tensor_dtype_valid("input_x", x_dtype, self.valid_dtypes, self.name)


class ReLU(_Activation):
    r"""Rectified linear unit: :math:`y = \max(x, 0)`.

    Inputs: ``input_x`` of any number dtype (CPU kernels: float16, bfloat16, float32, float64,
    int32, int64; other integers are widened losslessly). Output: same shape and dtype.
    """

    valid_dtypes = mstype.number_type

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["input_x"], outputs=["output"])


class Elu(_Activation):
    r"""Exponential linear unit:
    :math:`y = x` if :math:`x > 0`, else :math:`\alpha (e^x - 1)`.

    Attr ``alpha`` (float, default 1.0). Inputs: ``input_x`` float16, bfloat16, float32 or float64.
    """

    @prim_attr_register
    def __init__(self, alpha=1.0):
        validator.check_value_type("alpha", alpha, [float], self.name)
        self.init_prim_io_names(inputs=["input_x"], outputs=["output"])


class Sigmoid(_Activation):
    r"""Logistic sigmoid: :math:`y = 1 / (1 + e^{-x})`. dtypes: float16, bfloat16, float32, float64."""

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["input_x"], outputs=["output"])


class Tanh(_Activation):
    r"""Hyperbolic tangent: :math:`y = \tanh(x)`. dtypes: float16, bfloat16, float32, float64."""

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["input_x"], outputs=["output"])


class BiasAdd(PrimitiveWithInfer):
    r"""Adds a 1-D bias along the channel axis: :math:`y[n, c, \ldots] = x[n, c, \ldots] + b[c]`.

    Attr ``data_format``: "NCHW" (channel axis 1, default) or "NHWC" (channel axis last).
    Inputs: ``input_x`` (ndim >= 2) and ``bias`` of the same dtype: float16, bfloat16, float32,
    float64, int32 or int64.
    """

    @prim_attr_register
    def __init__(self, data_format="NCHW"):
        validator.check_string("data_format", data_format, ["NCHW", "NHWC"], self.name)
        self.init_prim_io_names(inputs=["input_x", "bias"], outputs=["output"])

    def infer_shape(self, x_shape, b_shape):
        validator.check_int("input_x rank", len(x_shape), 2, Rel.GE, self.name)
        validator.check_equal_int("bias rank", len(b_shape), 1, self.name)
        channel = x_shape[1] if self.data_format == "NCHW" else x_shape[-1]
        if b_shape[0] != channel:
            raise ValueError(
                f"For '{self.name}', the 'bias' length must equal the channel dimension {channel} of "
                f"'input_x' {list(x_shape)} ({self.data_format}), but got {b_shape[0]}."
            )
        return x_shape

    def infer_dtype(self, x_dtype, b_dtype):
        args = {"input_x": x_dtype, "bias": b_dtype}
        return validator.check_tensors_dtypes_same_and_valid(args, mstype.number_type, self.name)
