"""MindSpore's ``mindspore.parallel._auto_parallel_context``: ``auto_parallel_context()`` (an object with a
``get_<option>()`` per option) and ``_get_auto_parallel_context`` / ``_set_auto_parallel_context`` /
``_reset_auto_parallel_context``, over opforge's context (opforge/parallel_context.py)."""

from __future__ import annotations

from opforge import parallel_context
from opforge.communication import management

__all__ = [
    "auto_parallel_context",
    "_get_auto_parallel_context",
    "_set_auto_parallel_context",
    "_reset_auto_parallel_context",
]


class _AutoParallelContext:
    """``get_device_num()``, ``get_parallel_mode()``, ... for each option of ``set_auto_parallel_context``;
    ``get_device_num`` and ``get_global_rank`` give the communication world's when they were not set."""

    def __getattr__(self, name: str):
        if not name.startswith("get_"):
            raise AttributeError(f"'auto_parallel_context' has no attribute {name!r}")
        key = name[len("get_") :]
        return lambda: _get_auto_parallel_context(key)

    def get_device_num_is_set(self) -> bool:
        """Whether ``device_num`` was set (the zoo's SSD and YOLO wrappers fall back to the group size)."""
        return parallel_context._is_set("device_num")

    def get_global_rank_is_set(self) -> bool:
        return parallel_context._is_set("global_rank")

    def set_device_num(self, device_num) -> None:
        parallel_context.set_auto_parallel_context(device_num=device_num)

    def reset(self) -> None:
        parallel_context.reset_auto_parallel_context()


_CONTEXT = _AutoParallelContext()


def auto_parallel_context() -> _AutoParallelContext:
    return _CONTEXT


def _world(key: str):
    """The communication world's size or this process's rank (1 and 0 before ``init``)."""
    if not management.GlobalComm.INITED:
        return 1 if key == "device_num" else 0
    return management.get_group_size() if key == "device_num" else management.get_rank()


def _get_auto_parallel_context(attr_key: str):
    if attr_key in ("device_num", "global_rank") and not parallel_context._is_set(attr_key):
        return _world(attr_key)
    return parallel_context.get_auto_parallel_context(attr_key)


def _set_auto_parallel_context(**kwargs) -> None:
    parallel_context.set_auto_parallel_context(**kwargs)


def _reset_auto_parallel_context() -> None:
    parallel_context.reset_auto_parallel_context()
