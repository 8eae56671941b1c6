"""User kernel libraries: where the public headers are, to compile kernels against them."""

from __future__ import annotations

import pathlib

from opforge import _C

__all__ = ["include_dir"]


def include_dir() -> pathlib.Path:
    """The folder holding ``opforge/kernel.h`` and the other public headers: the source tree's in an
    editable install or a checkout (the installed copy would go stale as the headers change), else
    the copy installed next to ``opforge._C``."""
    source = pathlib.Path(__file__).resolve().parents[3] / "csrc" / "include"
    if (source / "opforge" / "kernel.h").exists():
        return source
    installed = pathlib.Path(_C.__file__).resolve().parent / "include"
    if (installed / "opforge" / "kernel.h").exists():
        return installed
    raise FileNotFoundError("opforge's public C++ headers were not found next to opforge._C or in the source tree.")
