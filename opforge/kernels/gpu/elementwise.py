"""GPU kernels of the elementwise operators: for every KernelAttr the CPU registers, the same
functor of ``opforge/functors/`` in a loop of ``csrc/kernels/cuda/elementwise.cuh``.

The dtypes are the CPU kernels' (one source of truth): the GPU has a kernel for each of them.
"""

from __future__ import annotations

from opforge.kernels import registry
from opforge.kernels.gpu import loops
from opforge.kernels.gpu.cuda import CudaKernel, ctype, register_cuda_kernels

__all__ = ["mirror_cpu_kernels"]


def mirror_cpu_kernels(op_name: str, make) -> None:
    """Register ``make(attr)`` (a CudaKernel) on the GPU for every KernelAttr ``op_name`` has on the CPU."""
    attrs = [e.attr for e in registry.kernels_for(op_name, "CPU", include_disabled=True) if e.source == "builtin"]
    if not attrs:
        raise RuntimeError(f"'{op_name}' has no built-in CPU kernels to mirror on the GPU.")
    register_cuda_kernels(op_name, {attr: make(attr) for attr in attrs})


def _unary(source: str, functor: str, fields: tuple = ()):
    def make(attr):
        t = ctype(attr.inputs[0])
        name = f"opforge::cuda::UnaryKernel<{t}, opforge::{functor}>"
        return CudaKernel(source, name, loops.unary, fields, functor_type=f"opforge::{functor}", arity=1)

    return make


def _same_shape(source: str, functor: str, fields: tuple = ()):
    def make(attr):
        t = ctype(attr.inputs[0])
        name = f"opforge::cuda::SameShapeBinaryKernel<{t}, opforge::{functor}>"
        return CudaKernel(source, name, loops.same_shape_binary, fields, functor_type=f"opforge::{functor}", arity=2)

    return make


def _broadcast(source: str, functor: str):
    def make(attr):
        t, out = ctype(attr.inputs[0]), ctype(attr.outputs[0])
        name = f"opforge::cuda::BroadcastBinaryKernel<{t}, {out}, opforge::{functor}>"
        return CudaKernel(source, name, loops.broadcast_binary, functor_type=f"opforge::{functor}", arity=2)

    return make


_ALPHA = (("alpha", "float64", 1.0),)  # EluOp / EluGradOp: double alpha

# activation.cu: opforge/functors/activation.h
for _op, _functor, _fields in (
    ("ReLU", "ReluOp", ()),
    ("Elu", "EluOp", _ALPHA),
    ("Sigmoid", "SigmoidOp", ()),
    ("Tanh", "TanhOp", ()),
    ("Neg", "NegOp", ()),
    ("Exp", "ExpOp", ()),
    ("Log", "LogOp", ()),
):
    mirror_cpu_kernels(_op, _unary("activation.cu", _functor, _fields))
for _op, _functor, _fields in (
    ("ReluGrad", "ReluGradOp", ()),
    ("EluGrad", "EluGradOp", _ALPHA),
    ("SigmoidGrad", "SigmoidGradOp", ()),
    ("TanhGrad", "TanhGradOp", ()),
):
    mirror_cpu_kernels(_op, _same_shape("activation.cu", _functor, _fields))

# arithmetic.cu: opforge/functors/arithmetic.h
for _op, _functor in (
    ("Add", "AddOp"),
    ("Sub", "SubOp"),
    ("Mul", "MulOp"),
    ("RealDiv", "DivOp"),
    ("Maximum", "MaximumOp"),
    ("Minimum", "MinimumOp"),
    ("Equal", "EqualOp"),
):
    mirror_cpu_kernels(_op, _broadcast("arithmetic.cu", _functor))
for _op, _functor in (
    ("Square", "SquareOp"),
    ("Sqrt", "SqrtOp"),
    ("Sin", "SinOp"),
    ("Cos", "CosOp"),
    ("Log1p", "Log1pOp"),
    ("Expm1", "Expm1Op"),
    ("Reciprocal", "ReciprocalOp"),
    ("Rsqrt", "RsqrtOp"),
    ("Conj", "ConjOp"),
):
    mirror_cpu_kernels(_op, _unary("arithmetic.cu", _functor))
mirror_cpu_kernels("SqrtGrad", _same_shape("arithmetic.cu", "SqrtGradOp"))
