"""MindSpore's ``ops.composite`` (imported as ``C``): operations built from primitives."""

from opforge.bprop.grad_operation import GradOperation, grad, stop_gradient, value_and_grad
from opforge.ops.composite.base import add_flags
from opforge.ops.composite.math_ops import matmul  # MindSpore 1.x: C.matmul(x1, x2, dtype=None)
from opforge.ops.composite.multitype_ops import HyperMap, Map, MultitypeFuncGraph, partial
from opforge.ops.frontend_legacy import batch_dot, tensor_dot  # MindSpore 1.x: C.tensor_dot, C.batch_dot
from opforge.ops.frontend_rearrange import repeat_elements
from opforge.ops.functional import clip_by_global_norm, clip_by_value, ones_like, zeros_like

__all__ = [
    "GradOperation",
    "grad",
    "value_and_grad",
    "stop_gradient",
    "MultitypeFuncGraph",
    "HyperMap",
    "Map",
    "partial",
    "clip_by_value",
    "clip_by_global_norm",
    "add_flags",
    "ones_like",
    "zeros_like",
    "repeat_elements",
    "tensor_dot",
    "batch_dot",
    "matmul",
]
