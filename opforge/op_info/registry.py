"""The op info registry: ``op_info_register`` and queries by (operator, backend).

An op info must declare (in a dtype_format row) every kernel registered for its operator and
backend; the kernel registry checks that through ``on_register`` here, and checks each kernel it
registers against the op info, so the order of the two registrations does not matter.
"""

from __future__ import annotations

from typing import Callable

from opforge.op_info.reg_op import OpInfo

__all__ = ["op_info_register", "get_op_info", "all_op_infos", "on_register", "OpInfoMismatchError"]

_infos: dict = {}
_checks: list = []  # called with each new op info before it is stored; they raise to refuse it


class OpInfoMismatchError(ValueError):
    """A kernel's KernelAttr is not declared by a dtype_format row of its operator's op info."""


def on_register(check: Callable[[OpInfo], None]) -> None:
    """Call ``check(op_info)`` before an op info is stored; an exception it raises refuses the op info."""
    _checks.append(check)


def op_info_register(op_info: OpInfo):
    """Decorator registering ``op_info``; the decorated function is returned unchanged."""
    if not isinstance(op_info, OpInfo):
        raise TypeError(f"op_info_register expects the result of get_op_info(), but got {type(op_info).__name__}.")
    key = (op_info.op_name, op_info.backend)
    if key in _infos and _infos[key] != op_info:
        raise ValueError(f"op info for '{op_info.op_name}' on {op_info.backend} is registered twice, differently.")
    if key not in _infos:
        for check in _checks:
            check(op_info)
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
