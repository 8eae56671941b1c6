"""Utilities: ``opforge.utils.cpp_extension`` compiles kernel libraries for operator authors;
``opforge.utils.protobuf_schema`` builds the message classes of MindSpore's file formats; ``ExitByRequest``
is MindSpore's graceful-exit step (``opforge/utils/exit_by_request.py``)."""

from opforge.utils.exit_by_request import ExitByRequest

__all__ = ["ExitByRequest"]
