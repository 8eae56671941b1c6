"""``opforge.ops``: every operator class (``ops.Elu``), signature helpers and the functional ops."""

from opforge.bprop.grad_operation import GradOperation
from opforge.dispatch import signature as sig
from opforge.op_info import CpuRegOp, CustomRegOp, DataType, GpuRegOp, op_info_register
from opforge.ops import composite, functional, operations, signature, tensor_methods
from opforge.ops.custom import Custom
from opforge.ops.functional import (  # noqa: F401 - MindSpore's functional names
    abs,
    argmax,
    atan2,
    ceil,
    clamp,
    clip_by_value,
    divide,
    erf,
    expand_dims,
    floor,
    floor_div,
    floor_divide,
    floor_mod,
    fmod,
    ge,
    gelu,
    greater,
    greater_equal,
    gt,
    hardsigmoid,
    hardswish,
    isfinite,
    isnan,
    le,
    leaky_relu,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    lt,
    mse_loss,
    ne,
    not_equal,
    ones_like,
    pow,
    relu,
    remainder,
    round,
    sigmoid,
    sign,
    softplus,
    squeeze,
    tanh,
    zeros_like,
)
from opforge.ops.functional import divide as div
from opforge.ops.operations import Argmax
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
