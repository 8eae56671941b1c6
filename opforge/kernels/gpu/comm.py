"""The collectives on the GPU: NCCL through CuPy on the current stream
(``opforge/communication/nccl.py``), one "comm" kernel per (operator, dtype), the builders the CPU's use
(``opforge/kernels/comm.py``).

They need a real GPU and NCCL: the tests' host emulation has no NCCL, so the sweep skips them (their
source is not "python:opforge.", see tests/test_op_sweep.py) and nothing here has run on a GPU yet."""

from opforge.kernels.comm import register_comm_kernels

__all__ = []

register_comm_kernels("GPU", "nccl:opforge.kernels.gpu.comm")
