"""Utilities for operator authors: ``cpp_extension`` compiles kernel libraries on the fly."""

from opforge.utils import cpp_extension

__all__ = ["cpp_extension"]
