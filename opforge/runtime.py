"""MindSpore's ``mindspore.runtime``: the runtime's memory and execution settings.

The memory functions read opforge's pooled allocator of host memory (``opforge.memory``,
opforge/device/memory.py; arrays under its ``min_pooled_bytes``, 64 KiB by default, are not pooled and not
counted; GPU memory is CuPy's pool's, which these do not read): what MindSpore calls allocated memory is the
pool's bytes held by live arrays, reserved memory the bytes it holds from the OS (in use and cached), idle
memory the cached part; ``device_target`` is accepted and ignored. ``set_memory`` checks and records MindSpore's
memory-pool sizes (the pool grows on demand here, with no preset size or ceiling), once per process as in
MindSpore. ``synchronize`` waits for the current device's queued work; ``launch_blocking``,
``dispatch_threads_num`` and ``set_cpu_affinity`` are checked and recorded (opforge launches CPU kernels
synchronously and binds no thread), their values in ``settings()``.
"""

from __future__ import annotations

import re

from opforge import context
from opforge.device import get_device, memory

__all__ = [
    "set_memory",
    "memory_stats",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "empty_cache",
    "reset_peak_memory_stats",
    "reset_max_memory_allocated",
    "memory_summary",
    "synchronize",
    "launch_blocking",
    "dispatch_threads_num",
    "set_cpu_affinity",
    "settings",
]

_SIZE = re.compile(r"^\d+(\.\d+)?GB$")
_settings: dict = {}


def _check_size(arg: str, value, zero_allowed: bool = False) -> float:
    if not isinstance(value, str) or not _SIZE.match(value) or (not zero_allowed and float(value[:-2]) == 0):
        raise ValueError(
            f"For 'set_memory', the '{arg}' must be a size such as '2GB' (a number of GB"
            f"{'' if zero_allowed else ' above 0'}), but got {value!r}."
        )
    return float(value[:-2])


def set_memory(init_size="2GB", increase_size="2GB", max_size="1024GB", optimize_level="O0",
               huge_page_reserve_size="0GB") -> None:  # fmt: skip
    """MindSpore's memory-pool sizes (``"xxGB"``) and optimize level ("O0" or "O1"): checked and recorded,
    once per process (a second call raises, as MindSpore's)."""
    if "memory" in _settings:
        raise RuntimeError("The 'set_memory' can not be set repeatedly.")
    sizes = {arg: _check_size(arg, v) for arg, v in (("init_size", init_size), ("increase_size", increase_size),
                                                      ("max_size", max_size))}  # fmt: skip
    sizes["huge_page_reserve_size"] = _check_size("huge_page_reserve_size", huge_page_reserve_size, True)
    if optimize_level not in ("O0", "O1"):
        raise ValueError(f"The optimize_level must be one of ['O0', 'O1'], but got {optimize_level}.")
    _settings["memory"] = {**sizes, "optimize_level": optimize_level}


def memory_stats(device_target=None) -> dict:
    """MindSpore's counters, in bytes: ``total_reserved_memory``, ``total_allocated_memory``,
    ``total_idle_memory``, ``max_allocated_memory``, and the pool's own counters (``opforge.memory.stats()``)
    under ``pool``."""
    stats = memory.stats()
    return {
        "total_reserved_memory": stats["bytes_reserved"],
        "total_allocated_memory": stats["bytes_in_use"],
        "total_idle_memory": stats["bytes_cached"],
        "max_allocated_memory": stats["peak_bytes_in_use"],
        "pool": stats,
    }


def memory_allocated(device_target=None) -> int:
    """The bytes held by live arrays (the pool's blocks)."""
    return memory.stats()["bytes_in_use"]


def max_memory_allocated(device_target=None) -> int:
    """The peak of ``memory_allocated`` since the start or the last reset."""
    return memory.stats()["peak_bytes_in_use"]


def memory_reserved(device_target=None) -> int:
    """The bytes the pool holds from the OS (in use and cached)."""
    return memory.stats()["bytes_reserved"]


def empty_cache() -> None:
    """Return the cached blocks to the OS (arrays in use stay valid)."""
    memory.empty_cache()


def reset_peak_memory_stats(device_target=None) -> None:
    """The peak set to the bytes in use now (and the pool's hit and miss counters zeroed)."""
    memory.reset_stats()


reset_max_memory_allocated = reset_peak_memory_stats


def memory_summary(device_target=None) -> str:
    """The memory counters as a table."""
    stats = memory_stats(device_target)
    rows = [(k, v) for k, v in stats.items() if k != "pool"]
    width = max(len(k) for k, _ in rows)
    lines = ["|" + "=" * (width + 20) + "|", f"| {'opforge memory (bytes)':<{width + 18}} |"]
    lines += [f"| {k:<{width}} {v:>17,} |" for k, v in rows]
    return "\n".join(lines + ["|" + "=" * (width + 20) + "|"])


def synchronize() -> None:
    """Wait until the current device (``set_context(device_target=...)``) has run everything queued on it."""
    get_device(context.get_context("device_target")).synchronize()


def launch_blocking() -> None:
    """MindSpore's synchronous launches (for debugging): recorded; opforge's CPU kernels run synchronously."""
    _settings["launch_blocking"] = True


def dispatch_threads_num(threads_num) -> None:
    """MindSpore's operator-dispatch threads: an int in [1, 128], checked and recorded."""
    if isinstance(threads_num, bool) or not isinstance(threads_num, int) or not 1 <= threads_num <= 128:
        raise ValueError(
            f"For 'dispatch_threads_num', the 'threads_num' must be an int in [1, 128], got {threads_num!r}."
        )
    _settings["dispatch_threads_num"] = threads_num


def set_cpu_affinity(enable_affinity, affinity_cpu_list=None, module_to_cpu_dict=None) -> None:
    """MindSpore's binding of its threads to cores: checked and recorded (opforge binds no thread)."""
    if not isinstance(enable_affinity, bool):
        raise TypeError(f"For 'set_cpu_affinity', the 'enable_affinity' must be bool, but got {enable_affinity!r}.")
    for arg, value, kinds in (("affinity_cpu_list", affinity_cpu_list, (list, dict)),
                              ("module_to_cpu_dict", module_to_cpu_dict, (dict,))):  # fmt: skip
        if value is not None and not isinstance(value, kinds):
            names = " or ".join(k.__name__ for k in kinds)
            raise TypeError(f"For 'set_cpu_affinity', the '{arg}' must be {names}, but got {type(value).__name__}.")
    _settings["cpu_affinity"] = (enable_affinity, affinity_cpu_list, module_to_cpu_dict)


def settings() -> dict:
    """What ``set_memory``, ``launch_blocking``, ``dispatch_threads_num`` and ``set_cpu_affinity`` recorded."""
    return dict(_settings)
