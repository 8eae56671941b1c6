"""The GPU backend's kernels: CUDA sources of ``csrc/kernels/cuda/``, compiled by NVRTC through
CuPy on first use and launched on CuPy's current stream (``cuda.py``), registered by KernelAttr
like the CPU's. Importing this needs no CuPy: registrations are data; only a launch needs a GPU.
"""

from opforge.device.gpu import GpuDevice
from opforge.kernels.gpu import (
    argmax,
    array,
    assign,
    bias_add,
    broadcast_to,
    cast,
    comm,
    conv,
    cuda,
    cumsum,
    elementwise,
    elemwise,
    fill,
    gather,
    loops,
    loss,
    loss_norm,
    matmul,
    minmax,
    normalization,
    one_hot,
    optimizer,
    range,
    reduce,
    reshape,
    softmax,
    sort,
    transpose,
)

GpuDevice.provide_kernels(cast=cast.cast, fill=fill.fill)

__all__ = [
    "argmax",
    "array",
    "assign",
    "bias_add",
    "broadcast_to",
    "cast",
    "comm",
    "conv",
    "cuda",
    "cumsum",
    "elementwise",
    "elemwise",
    "fill",
    "gather",
    "loops",
    "loss",
    "loss_norm",
    "matmul",
    "minmax",
    "normalization",
    "one_hot",
    "optimizer",
    "range",
    "reduce",
    "reshape",
    "softmax",
    "sort",
    "transpose",
]
