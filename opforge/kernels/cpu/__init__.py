"""The CPU backend: C++ kernels in opforge._C, with BLAS from the scipy-openblas32 package."""

from __future__ import annotations

import glob
import os

from opforge import _C

__all__ = ["load_blas"]


def load_blas() -> str:
    """Load the packaged OpenBLAS into the kernel library (MatMul needs it); returns its path."""
    import scipy_openblas32

    libs = sorted(glob.glob(os.path.join(scipy_openblas32.get_lib_dir(), "libscipy_openblas*.so*")))
    if not libs:
        raise ImportError(f"scipy-openblas32 has no shared library in {scipy_openblas32.get_lib_dir()}")
    _C.load_blas(libs[0], "scipy_")
    return libs[0]


if not _C.blas_loaded():
    load_blas()
