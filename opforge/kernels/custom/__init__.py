"""User kernel libraries: where the public headers are, to compile kernels against them."""

from __future__ import annotations

import pathlib

from opforge import sysconfig

__all__ = ["include_dir"]


def include_dir() -> pathlib.Path:
    """The folder holding ``opforge/kernel.h`` and the other public headers."""
    return sysconfig.get_include()
