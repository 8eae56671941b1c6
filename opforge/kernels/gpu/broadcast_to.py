"""BroadcastTo on the GPU: ``BroadcastToKernel`` of ``csrc/kernels/cuda/broadcast_to.cu``, indexed by
the CPU kernels' broadcast plan of (x, out) onto out; elements moved as bytes of their size."""

from __future__ import annotations

from opforge.kernels.gpu.cuda import CudaKernel
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.loops import broadcast_index
from opforge.kernels.gpu.support import bytes_ctype, one_to_one

__all__ = []


def _broadcast_to_loop(spec, function, kernel):
    """``BroadcastToKernel<E>(x, y, n, index)``."""
    shape = spec.out_shapes[0]
    index = broadcast_index(spec.op_name, spec.in_shapes[0], shape, shape)  # checks x broadcasts to shape
    return one_to_one(spec, function, index)


mirror_cpu_kernels(
    "BroadcastTo",
    lambda attr: CudaKernel(
        "broadcast_to.cu", f"opforge::cuda::BroadcastToKernel<{bytes_ctype(attr.inputs[0])}>", _broadcast_to_loop
    ),
)
