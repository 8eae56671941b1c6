"""GPU kernels of the second batch of elementwise operators (``csrc/kernels/cuda/elemwise.cu``, math
in ``opforge/functors/elemwise.h``): for every KernelAttr the CPU registers, the same functor in a
loop of ``elementwise.cuh`` (or of elemwise.cu: bool predicates, the three-input GeLUGrad)."""

from __future__ import annotations

import math

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu import loops
from opforge.kernels.gpu.cuda import CudaKernel, ctype, functor_arg
from opforge.kernels.gpu.elementwise import _broadcast, _same_shape, _unary, mirror_cpu_kernels
from opforge.kernels.gpu.support import device_launch, one_to_one, step_1d

__all__ = []

_SOURCE = "elemwise.cu"


def _predicate_loop(spec, function, kernel):
    """``UnaryPredicateKernel<T, Op>(x, y, n, op)``: y = op(x) as bool bytes."""
    return one_to_one(spec, function, functor_arg(kernel, spec.attrs))


def _predicate(functor: str):
    def make(attr):
        name = f"opforge::cuda::UnaryPredicateKernel<{ctype(attr.inputs[0])}, opforge::{functor}>"
        return CudaKernel(_SOURCE, name, _predicate_loop)

    return make


def _ternary_loop(spec, function, kernel):
    """``SameShapeTernaryKernel<T, Op>(a, b, c, out, n, op)``: out = op(a, b, c), all of one shape."""
    shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
    for s in spec.in_shapes[1:]:
        if tuple(s) != tuple(spec.in_shapes[0]):
            raise KernelError(
                f"For '{spec.op_name}', the inputs must have the same shape, but got "
                f"{list(spec.in_shapes[0])} and {list(s)}."
            )
    n = math.prod(shape)
    params = [("in", 0), ("in", 1), ("in", 2), ("out", 0), np.int64(n), functor_arg(kernel, spec.attrs)]
    return device_launch(spec, [(shape, np_dtype)], step_1d(spec.device.runtime, function, n, params))


def _ternary(functor: str):
    def make(attr):
        name = f"opforge::cuda::SameShapeTernaryKernel<{ctype(attr.inputs[0])}, opforge::{functor}>"
        return CudaKernel(_SOURCE, name, _ternary_loop)

    return make


def _abs(attr):
    """Abs: the real AbsOp, or |z| of a complex input as its real dtype (UnaryToKernel, arithmetic.cu)."""
    if "Complex" in str(attr.inputs[0]):
        t, out = ctype(attr.inputs[0]), ctype(attr.outputs[0])
        name = f"opforge::cuda::UnaryToKernel<{t}, {out}, opforge::ComplexAbsOp>"
        return CudaKernel("arithmetic.cu", name, loops.unary)
    return _unary(_SOURCE, "AbsOp")(attr)


mirror_cpu_kernels("Abs", _abs)
for _op in ("Erf", "Floor", "Ceil", "Round", "Sign", "LogicalNot", "GeLU", "Softplus", "HSigmoid", "HSwish", "ReLU6"):
    mirror_cpu_kernels(_op, _unary(_SOURCE, f"{_op}Op"))
for _op in ("IsNan", "IsFinite"):
    mirror_cpu_kernels(_op, _predicate(f"{_op}Op"))
for _op in ("AbsGrad", "SoftplusGrad", "HSigmoidGrad", "HSwishGrad", "ReLU6Grad"):
    mirror_cpu_kernels(_op, _same_shape(_SOURCE, f"{_op}Op"))
mirror_cpu_kernels("GeLUGrad", _ternary("GeLUGradOp"))
for _op, _functor in (
    ("Pow", "PowOp"),
    ("Atan2", "Atan2Op"),
    ("Div", "DivideOp"),
    ("FloorDiv", "FloorDivOp"),
    ("Mod", "ModOp"),
    ("FloorMod", "FloorModOp"),
    ("LogicalAnd", "LogicalAndOp"),
    ("LogicalOr", "LogicalOrOp"),
    ("NotEqual", "NotEqualOp"),
    ("Greater", "GreaterOp"),
    ("GreaterEqual", "GreaterEqualOp"),
    ("Less", "LessOp"),
    ("LessEqual", "LessEqualOp"),
):
    mirror_cpu_kernels(_op, _broadcast(_SOURCE, _functor))
