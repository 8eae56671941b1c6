"""Transpose on the GPU: ``TransposeKernel`` of ``csrc/kernels/cuda/transpose.cu``, one output element
per index, with the output dims that stay neighbours in the input merged (as the CPU kernel's plan)."""

from __future__ import annotations

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import CudaKernel
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.support import bytes_ctype, one_to_one

__all__ = []

_MAX_DIMS = 8  # kMaxTransposeDims of transpose.cu
# align=True: CuPy places a struct argument by its dtype's alignment, which must be the C++ struct's.
_INDEX_DTYPE = np.dtype(
    [("ndim", np.int64), ("size", np.int64, (_MAX_DIMS,)), ("stride", np.int64, (_MAX_DIMS,))], align=True
)


def _merged_dims(op_name: str, in_shape, perm, out_shape) -> tuple:
    """The output's dims (size-1 dims dropped, neighbours that are neighbours in the input merged),
    each with the input stride it walks."""
    nd = len(in_shape)
    perm = [int(p) for p in perm]
    if len(perm) != nd or sorted(p + nd if p < 0 else p for p in perm) != list(range(nd)):
        raise KernelError(
            f"For '{op_name}', the 'perm' must be a permutation of the input's {nd} dims, but got {perm}."
        )
    perm = [p + nd if p < 0 else p for p in perm]
    want = [in_shape[p] for p in perm]
    if want != list(out_shape):
        raise KernelError(
            f"For '{op_name}', the output shape must be {want} for 'perm' {perm}, but got {list(out_shape)}."
        )
    in_strides = [int(np.prod(in_shape[d + 1 :], dtype=np.int64)) for d in range(nd)]
    sizes, strides = [], []
    for k in range(nd):
        size, stride = want[k], in_strides[perm[k]]
        if size == 1:
            continue
        if sizes and strides[-1] == stride * size:  # contiguous with the previous kept dim
            sizes[-1] *= size
            strides[-1] = stride
        else:
            sizes.append(size)
            strides.append(stride)
    return sizes, strides


def _transpose_loop(spec, function, kernel):
    """``TransposeKernel<E>(x, y, n, index)``."""
    shape = spec.out_shapes[0]
    sizes, strides = _merged_dims(spec.op_name, list(spec.in_shapes[0]), spec.attrs["perm"], shape)
    if len(sizes) > _MAX_DIMS:
        raise KernelError(
            f"For '{spec.op_name}', the GPU kernel moves at most {_MAX_DIMS} dims after merging, but the input "
            f"{list(spec.in_shapes[0])} with 'perm' {list(spec.attrs['perm'])} needs {len(sizes)}."
        )
    index = np.zeros((), _INDEX_DTYPE)
    index["ndim"] = len(sizes)
    index["size"][: len(sizes)] = sizes
    index["stride"][: len(sizes)] = strides
    return one_to_one(spec, function, index[()])


mirror_cpu_kernels(
    "Transpose",
    lambda attr: CudaKernel(
        "transpose.cu", f"opforge::cuda::TransposeKernel<{bytes_ctype(attr.inputs[0])}>", _transpose_loop
    ),
)
