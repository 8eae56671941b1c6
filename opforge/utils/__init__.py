"""Utilities for operator authors: ``opforge.utils.cpp_extension`` compiles kernel libraries."""
