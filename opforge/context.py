"""Global execution context: the default device, the CPU fallback and the kernel thread count."""

from __future__ import annotations

import os

from opforge import _C
from opforge import log as _log
from opforge.device import BACKENDS, available_devices, get_device
from opforge.parallel_context import (
    ParallelMode,
    get_auto_parallel_context,
    reset_auto_parallel_context,
    set_auto_parallel_context,
)
from opforge.ps_context import get_ps_context, reset_ps_context, set_ps_context

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
    "set_ps_context",
    "get_ps_context",
    "reset_ps_context",
]

# MindSpore's execution modes: PYNATIVE_MODE runs each call eagerly; GRAPH_MODE traces a Cell's
# construct once per input signature and replays it (opforge.jit).
GRAPH_MODE = 0
PYNATIVE_MODE = 1

# The thread count lives in the C core (one for the process).
# enable_ge: whether MindSpore runs graphs on Ascend's Graph Engine (read by model-zoo callbacks); never here.
_state = {"device_target": "CPU", "cpu_fallback": False, "mode": PYNATIVE_MODE, "enable_ge": False}


def _set_device_target(target) -> None:
    if not isinstance(target, str) or target.upper() not in BACKENDS:
        raise ValueError(f"For 'set_context', the 'device_target' must be one of {BACKENDS}, but got {target!r}.")
    target = target.upper()
    try:
        get_device(target)  # made on first use (the GPU: CuPy); the error says why it is not there
    except RuntimeError as e:
        raise RuntimeError(f"For 'set_context', the device_target '{target}' is not available: {e}") from None
    if target != _state["device_target"]:
        _state["device_target"] = target
        for listener in _device_target_listeners:
            listener()


# Called when the context's device_target changes: a call with no Tensor input runs there, so plans
# cached for such calls (primitives/primitive.py) must be rebuilt.
_device_target_listeners: list = []


def on_device_target_change(listener) -> None:
    _device_target_listeners.append(listener)


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


def _recorded(key: str, check, what: str):
    """A setter for an option MindSpore scripts pass that has no effect here (graph dumps, graph-kernel fusion,
    memory pool sizes, ...): checked as MindSpore types it, recorded and read back by ``get_context``."""

    def setter(value) -> None:
        if not check(value):
            raise TypeError(f"For 'set_context', the '{key}' must be {what}, but got {value!r}.")
        _state[key] = value

    return setter


def _ascend_only(key: str, check, what: str):
    """A setter for an option MindSpore applies on Ascend only (``ascend_config``, ``auto_tune_mode``): checked as
    MindSpore types it, then ignored with MindSpore's warning, as MindSpore does when the device is the CPU or the
    GPU, the only targets opforge has. ``get_context`` reads the option's default back."""

    def setter(value) -> None:
        if not check(value):
            raise TypeError(f"For 'set_context', the '{key}' must be {what}, but got {value!r}.")
        _log.warning(
            f"For 'context.set_context', when set the argument '{key}', the argument 'device_target' only supports "
            f"devices in '['Ascend']', but got '{_state['device_target']}', ignore it."
        )

    return setter


def _is_int(low: int):
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= low


def _is_bool(v) -> bool:
    return isinstance(v, bool)


def _is_str(v) -> bool:
    return isinstance(v, str)


def _is_one_of(*values):
    return lambda v: isinstance(v, str) and v in values


_SETTERS = {
    "device_target": _set_device_target,
    "num_threads": _set_num_threads,
    "runtime_num_threads": _set_num_threads,  # MindSpore's name of the runtime's thread count
    "cpu_fallback": _set_cpu_fallback,
    "mode": _set_mode,
    # Accepted and recorded, without effect (model-zoo scripts set them on every run):
    "device_id": _recorded("device_id", _is_int(0), "an int >= 0"),
    "save_graphs": _recorded("save_graphs", lambda v: _is_bool(v) or _is_int(0)(v), "a bool or an int >= 0"),
    "save_graphs_path": _recorded("save_graphs_path", _is_str, "a str"),
    "enable_graph_kernel": _recorded("enable_graph_kernel", _is_bool, "a bool"),
    "graph_kernel_flags": _recorded("graph_kernel_flags", _is_str, "a str"),
    "enable_auto_mixed_precision": _recorded("enable_auto_mixed_precision", _is_bool, "a bool"),
    "enable_reduce_precision": _recorded("enable_reduce_precision", _is_bool, "a bool"),
    "reserve_class_name_in_scope": _recorded("reserve_class_name_in_scope", _is_bool, "a bool"),
    "max_call_depth": _recorded("max_call_depth", _is_int(1), "an int >= 1"),
    "op_timeout": _recorded("op_timeout", _is_int(0), "an int >= 0"),
    "variable_memory_max_size": _recorded("variable_memory_max_size", _is_str, "a str such as '30GB'"),
    "max_device_memory": _recorded("max_device_memory", _is_str, "a str such as '30GB'"),
    "mempool_block_size": _recorded("mempool_block_size", _is_str, "a str such as '1GB'"),
    "enable_ge": _recorded("enable_ge", _is_bool, "a bool"),
    "memory_offload": _recorded("memory_offload", _is_one_of("ON", "OFF"), "'ON' or 'OFF'"),
    "memory_optimize_level": _recorded("memory_optimize_level", _is_one_of("O0", "O1"), "'O0' or 'O1'"),
    "deterministic": _recorded("deterministic", _is_one_of("ON", "OFF"), "'ON' or 'OFF'"),
    "pynative_synchronize": _recorded("pynative_synchronize", _is_bool, "a bool"),
    "enable_compile_cache": _recorded("enable_compile_cache", _is_bool, "a bool"),
    "compile_cache_path": _recorded("compile_cache_path", _is_str, "a str"),
    "print_file_path": _recorded("print_file_path", _is_str, "a str"),
    "inter_op_parallel_num": _recorded("inter_op_parallel_num", _is_int(0), "an int >= 0"),
    # Ascend's options, ignored off Ascend with a warning (MindSpore's behaviour on the CPU and the GPU):
    "ascend_config": _ascend_only("ascend_config", lambda v: isinstance(v, dict), "a dict"),
    "auto_tune_mode": _ascend_only("auto_tune_mode", _is_str, "a str"),
}


# MindSpore's documented defaults of the recorded options, which ``get_context`` gives before they are set
# (a script may read one to restore it: ``set_context(enable_graph_kernel=get_context("enable_graph_kernel"))``).
_RECORDED_DEFAULTS = {
    "device_id": 0,
    "save_graphs_path": ".",
    "enable_graph_kernel": False,
    "enable_reduce_precision": True,
    "reserve_class_name_in_scope": True,
    "max_call_depth": 1000,
    "max_device_memory": "1024GB",
    "mempool_block_size": "1GB",
    "memory_offload": "OFF",
    "memory_optimize_level": "O0",
    "deterministic": "OFF",
    "pynative_synchronize": False,
    "enable_compile_cache": False,
    "inter_op_parallel_num": 0,
}


def set_context(**kwargs) -> None:
    """Set context options: ``mode`` (``PYNATIVE_MODE``, the default: every call runs eagerly;
    ``GRAPH_MODE``: a Cell's ``construct`` is traced once per input signature and replayed, see
    ``opforge.jit``), ``device_target`` ("CPU" or "GPU": where new Tensors are made and calls
    without Tensor inputs run), ``num_threads`` (CPU kernel threads; defaults to ``OMP_NUM_THREADS``
    when set, else every core) and ``cpu_fallback`` (False: an operator with no kernel on the inputs'
    device raises; True: it runs on the CPU through copies, with a ``CpuFallbackWarning`` once per
    operator). MindSpore's ``device_id``, ``save_graphs``, ``save_graphs_path``, ``enable_graph_kernel``,
    ``graph_kernel_flags``, ``max_call_depth``, ``op_timeout``, memory sizes and the like are checked, recorded
    (``get_context`` reads them back) and have no effect; ``runtime_num_threads`` is ``num_threads``. Ascend's
    ``ascend_config`` and ``auto_tune_mode`` are type-checked and ignored with a warning, as MindSpore does on the
    CPU and the GPU.
    """
    for key, value in kwargs.items():
        setter = _SETTERS.get(key)
        if setter is None:
            raise ValueError(f"For 'set_context', unknown option '{key}'; options: {sorted(_SETTERS)}.")
        setter(value)


def set_device(device_target: str, device_id=None) -> None:
    """MindSpore 2.5's ``set_device(device_target, device_id=None)``: ``set_context(device_target=...)`` and, when
    given, ``device_id`` (recorded)."""
    set_context(device_target=device_target)
    if device_id is not None:
        set_context(device_id=device_id)


# MindSpore's set_offload_context keys (offloading parameters and activations to host memory or disk on Ascend and
# the GPU) with the types it checks; opforge records them: its CPU tensors live in host memory already
_OFFLOAD_KEYS = {
    "offload_path": str, "offload_cpu_size": str, "offload_disk_size": str, "offload_param": str,
    "auto_offload": bool, "host_mem_block_size": str, "enable_aio": bool, "aio_block_size": str,
    "aio_queue_depth": int, "enable_pinned_mem": bool, "offload_checkpoint": str, "host_mem_ratio": float,
}  # fmt: skip
_offload: dict = {}


def set_offload_context(offload_config: dict) -> None:
    """MindSpore's ``set_offload_context(offload_config)``: each key checked (its name and type) and recorded;
    ``get_offload_context`` reads them back. Without effect here, as memory_offload is."""
    if not isinstance(offload_config, dict):
        raise TypeError(
            f"For 'set_offload_context', the 'offload_config' must be a dict, but got {type(offload_config).__name__}."
        )
    for key, value in offload_config.items():
        kind = _OFFLOAD_KEYS.get(key)
        if kind is None:
            raise ValueError(f"For 'set_offload_context', unknown key '{key}'; keys: {sorted(_OFFLOAD_KEYS)}.")
        if isinstance(value, bool) != (kind is bool) or not isinstance(value, (int, float) if kind is float else kind):
            raise TypeError(f"For 'set_offload_context', the '{key}' must be a {kind.__name__}, but got {value!r}.")
    _offload.update(offload_config)


def get_offload_context() -> dict:
    """The options ``set_offload_context`` recorded."""
    return dict(_offload)


def get_context(key: str):
    """Read one context option."""
    if key in ("num_threads", "runtime_num_threads"):
        return _C.get_num_threads()  # 1 in a forked child: kernels there run on one thread
    if key not in _state:
        if key in _SETTERS:
            return _RECORDED_DEFAULTS.get(key)  # a recorded option never set: MindSpore's default, else None
        raise ValueError(f"For 'get_context', unknown option '{key}'; options: {sorted(_SETTERS)}.")
    return _state[key]


def _init_threads() -> None:
    env = os.environ.get("OMP_NUM_THREADS", "")
    if env.isdigit() and int(env) >= 1:
        _set_num_threads(int(env))


_init_threads()
