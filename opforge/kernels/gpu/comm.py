"""The collectives on the GPU: NCCL through CuPy on the current stream
(``opforge/communication/nccl.py``), one "comm" kernel per (operator, dtype), the builders the CPU's use
(``opforge/kernels/comm.py``).

They need a real GPU and NCCL: the tests' host emulation has no NCCL, so the sweep skips them (their
source is not "python:opforge.", see tests/test_op_sweep.py); tests/test_gpu_nccl.py runs every one of
them for every dtype on a lent GPU (a 1-rank communicator)."""

from opforge.kernels.comm import register_comm_kernels

__all__ = []

register_comm_kernels("GPU", "nccl:opforge.kernels.gpu.comm")
