"""MindSpore's ``mindspore.parallel`` paths that model-zoo scripts import: ``_utils`` (``_get_device_num``,
``_get_parallel_mode``, ``_get_gradients_mean``, ...) and ``_auto_parallel_context``
(``auto_parallel_context()``), both reading opforge's auto-parallel context (opforge/parallel_context.py) and
communication state. ``ParallelMode`` is re-exported here, as MindSpore's ``mindspore.parallel`` has it."""

from opforge.parallel_context import ParallelMode

__all__ = ["ParallelMode"]
