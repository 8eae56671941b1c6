"""The GPU backend's kernels: CUDA sources of ``csrc/kernels/cuda/``, compiled by NVRTC through
CuPy on first use and launched on CuPy's current stream (``cuda.py``), registered by KernelAttr
like the CPU's. Importing this needs no CuPy: registrations are data; only a launch needs a GPU.
"""

from opforge.device.gpu import GpuDevice
from opforge.kernels.gpu import cuda, elementwise, fill, loops, loss, matmul, reduce, softmax

GpuDevice.provide_kernels(fill=fill.fill)

__all__ = ["cuda", "elementwise", "fill", "loops", "loss", "matmul", "reduce", "softmax"]
