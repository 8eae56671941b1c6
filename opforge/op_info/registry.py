"""The op info registry: ``op_info_register`` and queries by (operator, backend)."""

from __future__ import annotations

from opforge.op_info.reg_op import OpInfo

__all__ = ["op_info_register", "get_op_info", "all_op_infos"]

_infos: dict = {}


def op_info_register(op_info: OpInfo):
    """Decorator registering ``op_info``; the decorated function is returned unchanged."""
    if not isinstance(op_info, OpInfo):
        raise TypeError(f"op_info_register expects the result of get_op_info(), but got {type(op_info).__name__}.")
    key = (op_info.op_name, op_info.backend)
    if key in _infos and _infos[key] != op_info:
        raise ValueError(f"op info for '{op_info.op_name}' on {op_info.backend} is registered twice, differently.")
    _infos[key] = op_info

    def register(fn):
        return fn

    return register


def get_op_info(op_name: str, backend: str) -> OpInfo | None:
    """The op info of ``op_name`` on ``backend``, or None."""
    return _infos.get((op_name, backend))


def snapshot() -> dict:
    """The registered op infos, to ``restore`` later."""
    return dict(_infos)


def restore(saved: dict) -> None:
    _infos.clear()
    _infos.update(saved)


def all_op_infos() -> list:
    return list(_infos.values())
