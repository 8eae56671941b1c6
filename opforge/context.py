"""Global execution context: the default device, the CPU fallback and the kernel thread count."""

from __future__ import annotations

import os

from opforge import _C
from opforge.device import BACKENDS, available_devices, get_device
from opforge.parallel_context import (
    ParallelMode,
    get_auto_parallel_context,
    reset_auto_parallel_context,
    set_auto_parallel_context,
)

__all__ = [
    "set_context",
    "get_context",
    "available_devices",
    "GRAPH_MODE",
    "PYNATIVE_MODE",
    "graph_mode",
    "ParallelMode",
    "set_auto_parallel_context",
    "get_auto_parallel_context",
    "reset_auto_parallel_context",
]

# MindSpore's execution modes: PYNATIVE_MODE runs each call eagerly; GRAPH_MODE traces a Cell's
# construct once per input signature and replays it (opforge.jit).
GRAPH_MODE = 0
PYNATIVE_MODE = 1

# The thread count lives in the C core (one for the process).
_state = {"device_target": "CPU", "cpu_fallback": False, "mode": PYNATIVE_MODE}


def _set_device_target(target) -> None:
    if not isinstance(target, str) or target.upper() not in BACKENDS:
        raise ValueError(f"For 'set_context', the 'device_target' must be one of {BACKENDS}, but got {target!r}.")
    target = target.upper()
    try:
        get_device(target)  # made on first use (the GPU: CuPy); the error says why it is not there
    except RuntimeError as e:
        raise RuntimeError(f"For 'set_context', the device_target '{target}' is not available: {e}") from None
    _state["device_target"] = target


def _set_cpu_fallback(value) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"For 'set_context', the 'cpu_fallback' must be bool, but got {type(value).__name__}.")
    _state["cpu_fallback"] = value


def _set_num_threads(n) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"For 'set_context', the 'num_threads' must be an int >= 1, but got {n!r}.")
    _C.set_num_threads(n)


def _set_mode(mode) -> None:
    if mode not in (GRAPH_MODE, PYNATIVE_MODE) or isinstance(mode, bool):
        raise ValueError(
            f"For 'set_context', the 'mode' must be GRAPH_MODE ({GRAPH_MODE}) or PYNATIVE_MODE ({PYNATIVE_MODE}), "
            f"but got {mode!r}."
        )
    _state["mode"] = mode


def graph_mode() -> bool:
    """Whether Cells run traced (``set_context(mode=GRAPH_MODE)``)."""
    return _state["mode"] == GRAPH_MODE


_SETTERS = {
    "device_target": _set_device_target,
    "num_threads": _set_num_threads,
    "cpu_fallback": _set_cpu_fallback,
    "mode": _set_mode,
}


def set_context(**kwargs) -> None:
    """Set context options: ``mode`` (``PYNATIVE_MODE``, the default: every call runs eagerly;
    ``GRAPH_MODE``: a Cell's ``construct`` is traced once per input signature and replayed, see
    ``opforge.jit``), ``device_target`` ("CPU" or "GPU": where new Tensors are made and calls
    without Tensor inputs run), ``num_threads`` (CPU kernel threads; defaults to ``OMP_NUM_THREADS``
    when set, else every core) and ``cpu_fallback`` (False: an operator with no kernel on the inputs'
    device raises; True: it runs on the CPU through copies, with a ``CpuFallbackWarning`` once per
    operator).
    """
    for key, value in kwargs.items():
        setter = _SETTERS.get(key)
        if setter is None:
            raise ValueError(f"For 'set_context', unknown option '{key}'; options: {sorted(_SETTERS)}.")
        setter(value)


def get_context(key: str):
    """Read one context option."""
    if key == "num_threads":
        return _C.get_num_threads()  # 1 in a forked child: kernels there run on one thread
    if key not in _state:
        raise ValueError(f"For 'get_context', unknown option '{key}'; options: {sorted(_SETTERS)}.")
    return _state[key]


def _init_threads() -> None:
    env = os.environ.get("OMP_NUM_THREADS", "")
    if env.isdigit() and int(env) >= 1:
        _set_num_threads(int(env))


_init_threads()
