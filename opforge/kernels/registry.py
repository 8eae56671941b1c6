"""The kernel registry: C++ kernels from every loaded library and kernels written in Python,
in one table keyed by (operator, backend).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from opforge import _C
from opforge import dtype as mstype
from opforge.kernels.kernel_attr import KernelAttr

__all__ = [
    "KernelEntry",
    "register_kernel",
    "kernels_for",
    "all_kernels",
    "load_library",
    "BACKENDS",
]

BACKENDS = ("CPU", "GPU")


@dataclass(frozen=True)
class KernelEntry:
    """One registered kernel. ``impl`` is a C++ factory index or a Python callable."""

    op_name: str
    backend: str
    attr: KernelAttr
    kind: str  # "cpp" or "python"
    impl: object
    source: str


_table: dict = {}
_listeners: list = []  # caches that must be dropped when kernels are added


def _add(entry: KernelEntry) -> None:
    _table.setdefault((entry.op_name, entry.backend), []).append(entry)
    for clear in _listeners:
        clear()


def on_change(clear: Callable[[], None]) -> None:
    """Call ``clear`` whenever a kernel is registered (selection caches use this)."""
    _listeners.append(clear)


def _add_cpp(defs) -> list:
    entries = []
    for index, op, backend, ins, outs, all_same, source in defs:
        attr = KernelAttr(
            [mstype.type_id_to_dtype(t) for t in ins],
            [mstype.type_id_to_dtype(t) for t in outs],
            all_same,
        )
        entry = KernelEntry(op, backend, attr, "cpp", index, source)
        _add(entry)
        entries.append(entry)
    return entries


def load_library(path: str) -> list:
    """Load a compiled kernel library (.so) and register every kernel it defines."""
    _already_loaded, defs = _C.load_library(str(path))
    return _add_cpp(defs)


def register_kernel(op_name: str, backend: str, kernel_attrs) -> Callable:
    """Decorator registering a Python function as a kernel of ``op_name`` on ``backend``.

    The function receives the call's arguments (tensors as arrays of the KernelAttr's input
    dtypes, constants as values) and the primitive's attrs as keywords, and returns one array or a
    tuple of arrays of the KernelAttr's output dtypes::

        @register_kernel("Elu", "CPU", [KernelAttr().add_input_attr(float32).add_output_attr(float32)])
        def elu(x, alpha=1.0):
            return np.where(x > 0, x, alpha * np.expm1(x))
    """
    if backend not in BACKENDS:
        raise ValueError(f"For 'register_kernel', the 'backend' must be one of {BACKENDS}, but got {backend!r}.")
    attrs = [kernel_attrs] if isinstance(kernel_attrs, KernelAttr) else list(kernel_attrs)
    if not attrs or not all(isinstance(a, KernelAttr) for a in attrs):
        raise TypeError("For 'register_kernel', the 'kernel_attrs' must be a KernelAttr or a list of them.")

    def decorator(fn: Callable) -> Callable:
        source = f"python:{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', fn)}"
        for attr in attrs:
            _add(KernelEntry(op_name, backend, attr, "python", fn, source))
        return fn

    return decorator


def snapshot() -> dict:
    """The registry's contents, to ``restore`` later (tests that register throwaway kernels)."""
    return {key: list(entries) for key, entries in _table.items()}


def restore(saved: dict) -> None:
    """Put back a ``snapshot``; caches built on kernels registered since then are dropped."""
    if saved == _table:
        return
    _table.clear()
    _table.update({key: list(entries) for key, entries in saved.items()})
    for clear in _listeners:
        clear()


def kernels_for(op_name: str, backend: str) -> list:
    """Every kernel registered for (op, backend), in registration order."""
    return _table.get((op_name, backend), [])


def all_kernels() -> list:
    return [e for entries in _table.values() for e in entries]


_add_cpp(_C.kernel_defs())
