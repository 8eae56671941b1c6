"""``opforge.ops``: every operator class (``ops.Elu``), signature helpers and the functional ops."""

from opforge.dispatch import signature as sig
from opforge.op_info import CustomRegOp, DataType
from opforge.ops import functional, tensor_methods
from opforge.ops.custom import Custom
from opforge.primitives._grad_ops import *
from opforge.primitives.array_ops import *
from opforge.primitives.math_ops import *
from opforge.primitives.nn_ops import *
from opforge.primitives.primitive import (
    Primitive,
    PrimitiveWithCheck,
    PrimitiveWithInfer,
    prim_attr_register,
)
