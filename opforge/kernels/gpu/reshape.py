"""Reshape, ExpandDims, Squeeze on the GPU: a device copy of the data with the inferred output shape
(``CopyKernel`` of ``csrc/kernels/cuda/reshape.cu``, elements moved as bytes of their size)."""

from __future__ import annotations

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import CudaKernel
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.support import bytes_ctype, numel, one_to_one

__all__ = []


def _copy_loop(spec, function, kernel):
    """``CopyKernel<E>(x, y, n)``: y = x, as the output's shape."""
    shape = spec.out_shapes[0]
    if numel(spec.in_shapes[0]) != numel(shape):
        raise KernelError(
            f"For '{spec.op_name}', the output must have as many elements as the input, but got input shape "
            f"{list(spec.in_shapes[0])} and output shape {list(shape)}."
        )
    return one_to_one(spec, function)


def _make(attr) -> CudaKernel:
    return CudaKernel("reshape.cu", f"opforge::cuda::CopyKernel<{bytes_ctype(attr.inputs[0])}>", _copy_loop)


for _op in ("Reshape", "ExpandDims", "Squeeze"):
    mirror_cpu_kernels(_op, _make)
