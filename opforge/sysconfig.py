"""Where opforge's C++ headers and CUDA sources are, for kernels compiled against them.

In a checkout or an editable install these are the source tree's (an installed copy would go stale
as they change); in a regular install, the copies installed inside the package.
"""

from __future__ import annotations

import pathlib

__all__ = ["get_include", "get_cuda_sources"]

_PACKAGE = pathlib.Path(__file__).resolve().parent
_SOURCE_TREE = _PACKAGE.parent / "csrc"


def _first_existing(what: str, marker: str, *candidates: pathlib.Path) -> pathlib.Path:
    for folder in candidates:
        if (folder / marker).exists():
            return folder
    raise FileNotFoundError(f"opforge's {what} were not found (looked in {', '.join(map(str, candidates))}).")


def get_include() -> pathlib.Path:
    """The folder holding ``opforge/kernel.h`` and the other public headers (pass it as ``-I``)."""
    return _first_existing("public C++ headers", "opforge/kernel.h", _SOURCE_TREE / "include", _PACKAGE / "include")


def get_cuda_sources() -> pathlib.Path:
    """The folder of opforge's CUDA kernel sources (``*.cu``), compiled at run time by NVRTC."""
    cuda = _SOURCE_TREE / "kernels" / "cuda"
    return _first_existing("CUDA kernel sources", "elementwise.cuh", cuda, _PACKAGE / "cuda")
