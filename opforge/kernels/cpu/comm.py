"""The collectives on the CPU: MPI through mpi4py (``opforge/communication/mpi.py``), one "comm" kernel
per (operator, dtype) (``opforge/kernels/comm.py``)."""

from opforge.kernels.comm import register_comm_kernels

__all__ = []

register_comm_kernels("CPU", "python:opforge.kernels.cpu.comm")
