"""The kernel registry: C++ kernels from every loaded library and kernels written in Python,
in one table keyed by (operator, backend).

Many authors add kernels to it, so the rules are explicit:

- one kernel per (operator, backend, KernelAttr): a later registration replaces the earlier one in
  its place (selection order does not move) and warns with ``KernelOverrideWarning``;
- a library file is loaded once: loading it again (by any path to the same file) changes nothing;
- a kernel can be disabled and enabled again; selection skips disabled kernels;
- a kernel must be declared by its operator's op info, when there is one (``OpInfoMismatchError``);
- ``version()`` grows with every change, and ``on_change`` listeners run after each.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import threading
import warnings
from dataclasses import dataclass
from typing import Callable, NamedTuple

from opforge import _C
from opforge import dtype as mstype
from opforge.device import BACKENDS
from opforge.kernels.kernel_attr import KernelAttr
from opforge.op_info import registry as op_info_registry
from opforge.op_info.registry import OpInfoMismatchError

__all__ = [
    "KernelEntry",
    "KernelOverrideWarning",
    "OpInfoMismatchError",
    "register_kernel",
    "load_library",
    "kernels_for",
    "all_kernels",
    "disable",
    "enable",
    "disabled",
    "is_disabled",
    "version",
    "invalidate",
    "on_change",
    "BACKENDS",
]


class KernelOverrideWarning(UserWarning):
    """A registration replaced the kernel registered earlier for the same (operator, backend, KernelAttr)."""


class UnknownOperatorWarning(UserWarning):
    """``register_kernel`` named no operator but one close to it (``"twice"`` for ``Twice``): calls find
    kernels by the primitive's name, so the kernel would stay unused."""


# Where the operator names come from: the primitives layer (above this one) sets it when it loads.
_operator_names: list = []


def set_operator_names(source: Callable) -> None:
    """``source()`` gives the names of the operators defined so far (the Primitive classes)."""
    _operator_names[:] = [source]


def closest_names(name: str, names) -> list:
    """The names equal to ``name`` ignoring case, else the close spellings (at most 3)."""
    names = list(names)
    same = [n for n in names if n.lower() == name.lower() and n != name]
    return same or difflib.get_close_matches(name, names, n=3, cutoff=0.6)


def _check_operator_name(op_name: str, stacklevel: int) -> None:
    """Warn when ``op_name`` is no operator's name but close to one: a name far from every operator's may
    be one whose Primitive is defined later, and passes silently."""
    if not _operator_names:
        return
    names = set(_operator_names[0]())
    if op_name in names:
        return
    close = closest_names(op_name, names)
    if close:
        warnings.warn(
            f"register_kernel: no operator is named '{op_name}'; did you mean {' or '.join(repr(n) for n in close)}? "
            "Kernels are found by the Primitive's class name, so a call will not find this kernel.",
            UnknownOperatorWarning,
            stacklevel=stacklevel + 1,
        )


@dataclass(frozen=True)
class KernelEntry:
    """One registered kernel. ``impl`` is a C++ factory index or a Python callable. ``source`` is
    "builtin", a library's path, or "python:module.qualname"."""

    op_name: str
    backend: str
    attr: KernelAttr
    kind: str  # "cpp", "python" or "cuda": the launcher that runs it
    impl: object
    source: str

    @property
    def key(self) -> tuple:
        """What identifies the kernel in the registry: (operator, backend, KernelAttr)."""
        return (self.op_name, self.backend, self.attr)


class Snapshot(NamedTuple):
    table: dict
    disabled: frozenset
    libraries: dict


_table: dict = {}  # (op, backend) -> [KernelEntry], in selection order
_disabled: set = set()  # keys of the kernels selection skips
_libraries: dict = {}  # (st_dev, st_ino) of a loaded library -> the entries it registered
_opened: dict = {}  # (st_dev, st_ino) -> its C++ definitions: dlopened once per process, whatever restore does
_listeners: list = []  # caches to drop after every change
_version = 0
_lock = threading.RLock()


# ---------------------------------------------------------------------------------------------
# Changes


def version() -> int:
    """A number that grows with every change of the registry (and never returns to an earlier value, even
    through ``restore``): a cache built at one version is valid while ``version()`` still returns it."""
    return _version


def on_change(clear: Callable[[], None]) -> None:
    """Call ``clear`` after every change: a kernel registered, replaced, disabled or enabled, a ``restore``."""
    _listeners.append(clear)


def invalidate() -> None:
    """Drop every cache built on the registry (plans, launchers), as a change would: for a change the registry
    cannot see, such as a GPU runtime's ``native_launches`` switched."""
    with _lock:
        _changed()


def _changed() -> None:
    global _version
    _version += 1
    for clear in _listeners:
        clear()


def _find(key: tuple):
    """(position, entry) of the kernel registered under ``key``, or (None, None)."""
    op_name, backend, attr = key
    for i, entry in enumerate(_table.get((op_name, backend), ())):
        if entry.attr == attr:
            return i, entry
    return None, None


def _register(entries: list, stacklevel: int) -> None:
    """Add each entry, or replace the one under its key. All or none: the op info check and the warnings
    (an error under ``-W error::opforge.kernels.KernelOverrideWarning``) come before any change."""
    with _lock:
        for entry in entries:
            _check_declared(entry, op_info_registry.get_op_info(entry.op_name, entry.backend))
        changes = _plan(entries)
        for entry, _, old in changes:
            if old is not None:
                _warn_replaced(old, entry, stacklevel + 1)
        for entry, position, _ in changes:
            kernels = _table.setdefault((entry.op_name, entry.backend), [])
            if position == len(kernels):
                kernels.append(entry)
            else:
                kernels[position] = entry
            _disabled.discard(entry.key)  # a newly registered kernel is enabled, even in a disabled one's place
        if changes:
            _changed()


def _plan(entries: list) -> list:
    """(entry, position, replaced entry or None) for each entry that changes the table."""
    places: dict = {}  # (op, backend) -> {KernelAttr: (position, entry)}: one pass over each list
    sizes: dict = {}  # (op, backend) -> the list's length once the planned appends are made
    changes = []
    for entry in entries:
        group = (entry.op_name, entry.backend)
        if group not in places:
            kernels = _table.get(group, ())
            places[group] = {e.attr: (i, e) for i, e in enumerate(kernels)}
            sizes[group] = len(kernels)
        position, old = places[group].get(entry.attr, (sizes[group], None))
        if old == entry:
            continue
        if old is None:
            sizes[group] += 1
        places[group][entry.attr] = (position, entry)
        changes.append((entry, position, old))
    return changes


def _warn_replaced(old: KernelEntry, new: KernelEntry, stacklevel: int) -> None:
    note = " (it was disabled; the new kernel is enabled)" if old.key in _disabled else ""
    warnings.warn(
        f"For '{new.op_name}', the {new.backend} kernel {new.attr.short()} from {new.source} replaces "
        f"the one from {old.source}{note}.",
        KernelOverrideWarning,
        stacklevel=stacklevel + 1,
    )


# ---------------------------------------------------------------------------------------------
# Op info agreement


def _check_declared(entry: KernelEntry, info) -> None:
    if info is not None and not info.covers(entry.attr):
        raise OpInfoMismatchError(
            f"For '{entry.op_name}' on {entry.backend}, the kernel {entry.attr} from {entry.source} is not declared "
            f"by the op info: its dtype_format rows are {info.rows_text()}."
        )


def _check_op_info(info) -> None:
    """Refuse an op info that leaves a registered kernel (enabled or not) undeclared."""
    for entry in _table.get((info.op_name, info.backend), ()):
        _check_declared(entry, info)


op_info_registry.on_register(_check_op_info)


# ---------------------------------------------------------------------------------------------
# Registration


def _cpp_entries(defs) -> list:
    entries = []
    for index, op, backend, ins, outs, all_same, source in defs:
        attr = KernelAttr(
            [mstype.type_id_to_dtype(t) for t in ins],
            [mstype.type_id_to_dtype(t) for t in outs],
            all_same,
        )
        entries.append(KernelEntry(op, backend, attr, "cpp", index, source))
    return entries


def load_library(path) -> list:
    """Load a compiled kernel library (.so) and register every kernel it defines; return their entries.

    A file already loaded (by this path or any other: a symlink, a hard link) is not loaded again: the
    entries it registered then are returned and nothing changes. Kernels it defines for a (operator,
    backend, KernelAttr) already registered replace those, with a ``KernelOverrideWarning``.
    """
    real = os.path.realpath(os.fspath(path))
    try:
        stat = os.stat(real)
    except OSError as e:
        raise RuntimeError(f"cannot load kernel library '{path}': {e.strerror}") from e
    file_id = (stat.st_dev, stat.st_ino)
    with _lock:
        if file_id in _libraries:
            return list(_libraries[file_id])
        if file_id not in _opened:
            _, _opened[file_id] = _C.load_library(real)  # an absolute path: dlopen must not search elsewhere
        entries = _cpp_entries(_opened[file_id])
        _register(entries, stacklevel=2)
        _libraries[file_id] = tuple(entries)
    return entries


def register_entries(entries: list) -> None:
    """Register kernels of any kind (a backend's own: CUDA kernels, run by its launcher) as
    ``KernelEntry`` objects; each replaces the kernel under its key, as ``register_kernel`` does."""
    for entry in entries:
        if entry.backend not in BACKENDS:
            raise ValueError(
                f"For '{entry.op_name}', the backend must be one of {BACKENDS}, but got {entry.backend!r}."
            )
    _register(list(entries), stacklevel=3)


def register_kernel(op_name: str, backend: str, kernel_attrs) -> Callable:
    """Decorator registering a Python function as a kernel of ``op_name`` on ``backend``.

    The function receives the call's arguments (tensors as arrays of the KernelAttr's input
    dtypes, constants as values) and the primitive's attrs as keywords, and returns one array or a
    tuple of arrays of the KernelAttr's output dtypes::

        @register_kernel("Elu", "CPU", [KernelAttr().add_input_attr(float32).add_output_attr(float32)])
        def elu(x, alpha=1.0):
            return np.where(x > 0, x, alpha * np.expm1(x))

    A kernel already registered for the same (operator, backend, KernelAttr) is replaced, with a
    ``KernelOverrideWarning``.
    """
    if backend not in BACKENDS:
        raise ValueError(f"For 'register_kernel', the 'backend' must be one of {BACKENDS}, but got {backend!r}.")
    attrs = [kernel_attrs] if isinstance(kernel_attrs, KernelAttr) else list(kernel_attrs)
    if not attrs or not all(isinstance(a, KernelAttr) for a in attrs):
        raise TypeError("For 'register_kernel', the 'kernel_attrs' must be a KernelAttr or a list of them.")

    def decorator(fn: Callable) -> Callable:
        source = f"python:{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', fn)}"
        _check_operator_name(op_name, stacklevel=2)
        _register([KernelEntry(op_name, backend, attr, "python", fn, source) for attr in attrs], stacklevel=2)
        return fn

    return decorator


# ---------------------------------------------------------------------------------------------
# Disabling


def _resolve(caller: str, kernel, backend, kernel_attr) -> KernelEntry:
    """The registered entry named by a KernelEntry or by (operator, backend, KernelAttr)."""
    if isinstance(kernel, KernelEntry):
        if backend is not None or kernel_attr is not None:
            raise TypeError(f"For '{caller}', give a KernelEntry alone, or an operator, a backend and a KernelAttr.")
        _, current = _find(kernel.key)
        if current is None:
            raise ValueError(
                f"For '{caller}', the {kernel.backend} kernel {kernel.attr} of '{kernel.op_name}' is not registered."
            )
        if current != kernel:
            raise ValueError(
                f"For '{caller}', the {kernel.backend} kernel {kernel.attr} of '{kernel.op_name}' from "
                f"{kernel.source} was replaced by the one from {current.source}."
            )
        return current
    if not isinstance(kernel, str):
        raise TypeError(f"For '{caller}', the 'kernel' must be an operator name or a KernelEntry, but got {kernel!r}.")
    if backend not in BACKENDS:
        raise ValueError(f"For '{caller}', the 'backend' must be one of {BACKENDS}, but got {backend!r}.")
    if not isinstance(kernel_attr, KernelAttr):
        raise TypeError(f"For '{caller}', the 'kernel_attr' must be a KernelAttr, but got {kernel_attr!r}.")
    _, entry = _find((kernel, backend, kernel_attr))
    if entry is None:
        registered = [e.attr.short() for e in _table.get((kernel, backend), ())]
        listed = "; registered: " + ", ".join(registered) if registered else ""
        raise ValueError(f"For '{caller}', no {backend} kernel of '{kernel}' is registered for {kernel_attr}{listed}.")
    return entry


def _set_disabled(key: tuple, off: bool) -> None:
    if (key in _disabled) == off:
        return
    if off:
        _disabled.add(key)
    else:
        _disabled.discard(key)
    _changed()


def disable(kernel, backend: str | None = None, kernel_attr: KernelAttr | None = None) -> KernelEntry:
    """Make selection skip a kernel, named by its KernelEntry or by (operator, backend, KernelAttr); return
    its entry. It stays registered (``kernels_for(..., include_disabled=True)`` lists it); ``enable`` undoes
    this, and a kernel registered in its place later is enabled."""
    with _lock:
        entry = _resolve("disable", kernel, backend, kernel_attr)
        _set_disabled(entry.key, True)
    return entry


def enable(kernel, backend: str | None = None, kernel_attr: KernelAttr | None = None) -> KernelEntry:
    """Undo ``disable`` (enabling an enabled kernel changes nothing); return the kernel's entry."""
    with _lock:
        entry = _resolve("enable", kernel, backend, kernel_attr)
        _set_disabled(entry.key, False)
    return entry


def is_disabled(kernel, backend: str | None = None, kernel_attr: KernelAttr | None = None) -> bool:
    with _lock:
        return _resolve("is_disabled", kernel, backend, kernel_attr).key in _disabled


@contextlib.contextmanager
def disabled(kernel, backend: str | None = None, kernel_attr: KernelAttr | None = None):
    """``with disabled("ReLU", "CPU", attr) as entry:`` the kernel is skipped inside the block only
    (one disabled before the block stays disabled after it)."""
    with _lock:
        entry = _resolve("disabled", kernel, backend, kernel_attr)
        was_disabled = entry.key in _disabled
        _set_disabled(entry.key, True)
    try:
        yield entry
    finally:
        if not was_disabled:
            with _lock:
                _set_disabled(entry.key, False)  # by key: still right if the kernel was replaced in the block


# ---------------------------------------------------------------------------------------------
# Queries


def kernels_for(op_name: str, backend: str, *, include_disabled: bool = False) -> list:
    """The kernels registered for (op, backend), in selection (registration) order; disabled ones only
    when ``include_disabled``."""
    entries = _table.get((op_name, backend), ())
    if include_disabled or not _disabled:
        return list(entries)
    return [e for e in entries if e.key not in _disabled]


def all_kernels(*, include_disabled: bool = False) -> list:
    return [e for key in list(_table) for e in kernels_for(*key, include_disabled=include_disabled)]


# ---------------------------------------------------------------------------------------------
# Snapshots (tests that register throwaway kernels)


def snapshot() -> Snapshot:
    """The registry's state (kernels, disabled kernels, loaded libraries), to ``restore`` later."""
    with _lock:
        return Snapshot({key: list(entries) for key, entries in _table.items()}, frozenset(_disabled), dict(_libraries))


def restore(saved: Snapshot) -> None:
    """Put back a ``snapshot``. A library loaded since is forgotten (loading it again registers its kernels
    again, without a second dlopen). The version moves on, it does not go back: caches built since are stale."""
    with _lock:
        if saved.table == _table and saved.disabled == _disabled and saved.libraries == _libraries:
            return
        _table.clear()
        _table.update({key: list(entries) for key, entries in saved.table.items()})
        _disabled.clear()
        _disabled.update(saved.disabled)
        _libraries.clear()
        _libraries.update(saved.libraries)
        _changed()


_register(_cpp_entries(_C.kernel_defs()), stacklevel=1)
