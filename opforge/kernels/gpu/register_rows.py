"""Launch geometry of the register-row kernels (``csrc/kernels/cuda/register_row.cuh``): a contiguous row of
``n`` elements held in the registers of a group of threads, a warp (several rows to a block) or a whole
block, ``per`` elements a thread, so that a kernel needing several passes over a row (Softmax, LayerNorm)
reads it once. A table of ``(group, per)`` shapes, smallest first, gives each row length its kernel; a
shape whose registers would not fit its block for a dtype (they would spill to memory) is left out for it."""

from __future__ import annotations

import numpy as np

from opforge.kernels.gpu.cuda import function_for

__all__ = ["WARP_ROWS_BLOCK", "RegisterRows", "threads_per_sm"]

WARP_ROWS_BLOCK = 128  # threads per block of the warp-per-row kernels: 4 rows a block (register_row.cuh)
_MAX_GRID = 65535
# compute_t of opforge/half.h: the type a row's values are held in, in bytes
_COMPUTE_BYTES = {"Float16": 4, "BFloat16": 4, "Float32": 4, "Float64": 8}


def threads_per_sm(row_bytes: int) -> int:
    """The threads an SM holds of a kernel whose threads keep ``row_bytes`` of registers (register_row.cuh's
    kRegisterThreadsPerSm: the launch bounds that keep them from spilling)."""
    return 1024 if row_bytes <= 32 else 768 if row_bytes <= 64 else 512 if row_bytes <= 128 else 256


def _fits(group: int, row_bytes: int) -> bool:
    """Whether a block of ``group`` rows' threads fits the launch bounds of ``row_bytes`` a thread."""
    return (WARP_ROWS_BLOCK if group == 32 else group) <= threads_per_sm(row_bytes)


class RegisterRows:
    """The instantiations of ``template`` for each ``(group, per)`` of ``shapes`` a dtype fits, and their
    launches. ``extra_bytes``: the registers a kernel keeps besides the row (the ``+ N`` of its launch
    bounds)."""

    def __init__(self, template: str, shapes: tuple, extra_bytes: int = 0):
        self.template, self.shapes, self.extra_bytes = template, shapes, extra_bytes

    def usable(self, dtype: str) -> tuple:
        """The shapes whose rows of ``dtype`` (an mstype) fit their blocks."""
        size = _COMPUTE_BYTES[str(dtype)]
        return tuple((g, k) for g, k in self.shapes if _fits(g, k * size + self.extra_bytes))

    def names(self, type_args: str, dtype: str) -> tuple:
        """The kernel names of ``usable(dtype)``, in order (a CudaKernel's helpers from some index on)."""
        return tuple(f"{self.template}<{type_args}, {g}, {k}>" for g, k in self.usable(dtype))

    def shape(self, n: int, dtype: str):
        """The ``(group, per)`` a row of ``n`` elements takes: the first with ``n <= group * per``, or None."""
        return next(((g, k) for g, k in self.usable(dtype) if n <= g * k), None)

    def launch(self, runtime, kernel, first: int, rows: int, n: int, dtype: str) -> tuple:
        """(function, grid, block, tail args ``rows, n``) of the kernel that takes ``rows`` rows of ``n``;
        ``kernel.helpers[first:]`` are ``names(..., dtype)``."""
        group, per = self.shape(n, dtype)
        threads = WARP_ROWS_BLOCK if group == 32 else group
        per_block = threads // group
        function = function_for(runtime, kernel, kernel.helpers[first + self.usable(dtype).index((group, per))])
        grid = (max(1, min(-(-rows // per_block), _MAX_GRID)), 1, 1)
        return function, grid, (threads, 1, 1), (np.int64(rows), np.int64(n))
