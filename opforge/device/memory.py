"""The caching allocator of kernel outputs: statistics, emptying the cache, limits.

Every array a C++ kernel returns is allocated by opforge's core. Arrays of at least
``get_min_pooled_bytes()`` (64 KiB by default) take a block from a caching pool instead of
NumPy's allocator: when the last array or view of a block dies, the block goes back to the pool
and the next output of the same size bucket reuses it, already mapped and faulted in. A fresh
64 MB output costs thousands of page faults; a pooled one none, which makes a 16M-element ReLU
about twice as fast as with a fresh output. Smaller arrays keep NumPy's allocation, which is
faster for them. Parameters keep their values in memory from the same allocator (``Parameter``
copies its initial value into it), so the statistics count weights and optimizer states too.

* Buckets: a request is rounded up to a multiple of 4 KiB up to 16 KiB, then to one of four
  steps per power of two (at most 25% larger). Blocks are page aligned (so 64-byte aligned).
* The cache is capped: a released block that would take ``bytes_cached`` over
  ``get_max_cached_bytes()`` (default 1 GiB, or a quarter of the RAM when that is smaller) goes
  back to the OS at once. ``empty_cache()`` returns every cached block; blocks in use are untouched
  and return to the pool when their arrays die.
* A pooled array owns its block through its ``base`` (a ``PooledBlock``), so views, arrays kept
  by the user and arrays outliving ``empty_cache()`` stay valid. Reused memory is never visible:
  kernels write every element of their outputs.
* Thread-safe: the pool is guarded by a mutex; kernels may run in several Python threads.

Environment: ``OPFORGE_MAX_CACHED_BYTES`` (an int) sets the cap at import;
``OPFORGE_MEMORY_POOL=0`` disables pooling.
"""

from __future__ import annotations

import os

import numpy as np

from opforge import _C

__all__ = [
    "stats",
    "empty_cache",
    "reset_stats",
    "set_max_cached_bytes",
    "get_max_cached_bytes",
    "set_min_pooled_bytes",
    "get_min_pooled_bytes",
    "set_enabled",
    "is_enabled",
    "empty",
    "is_pooled",
    "bucket_size",
]

_mem = _C.memory
PooledBlock = _mem.PooledBlock


def stats() -> dict:
    """The pool's counters, a dict of ints (and ``enabled``, a bool).

    ``bytes_in_use``: bytes of the blocks held by live arrays (bucket sizes);
    ``requested_bytes_in_use``: the bytes those arrays asked for; ``bytes_cached``: free blocks kept
    for reuse; ``bytes_reserved``: the two together (memory the pool holds from the OS);
    ``peak_bytes_in_use``: the highest ``bytes_in_use`` since the last ``reset_stats()``;
    ``blocks_in_use``, ``blocks_cached``; ``allocations`` (``hits + misses``): pooled allocations;
    ``hits``: served from the cache; ``misses``: served with fresh memory from the OS; ``frees``:
    blocks handed back by dying arrays; ``releases``: blocks returned to the OS (over the cap, by
    ``empty_cache()`` or a lowered cap); ``max_cached_bytes``, ``min_pooled_bytes``, ``enabled``.
    """
    return _mem.stats()


def empty_cache() -> int:
    """Return every cached block to the OS; returns the bytes released. Arrays in use stay valid."""
    return _mem.empty_cache()


def reset_stats() -> None:
    """Zero ``hits``, ``misses``, ``frees`` and ``releases``; set the peak to the bytes in use now."""
    _mem.reset_stats()


def _check_nbytes(func: str, nbytes) -> int:
    if isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer)) or nbytes < 0:
        raise ValueError(f"For '{func}', the 'nbytes' must be an int >= 0, but got {nbytes!r}.")
    return int(nbytes)


def set_max_cached_bytes(nbytes: int) -> None:
    """Cap the bytes of cached (free) blocks; beyond it released blocks go back to the OS.

    Lowering the cap returns cached blocks (largest first) until the cache fits. ``0`` caches
    nothing: every output is then fresh memory, as without the pool.
    """
    _mem.set_max_cached_bytes(_check_nbytes("set_max_cached_bytes", nbytes))


def get_max_cached_bytes() -> int:
    """The cap on cached bytes."""
    return _mem.get_max_cached_bytes()


def set_min_pooled_bytes(nbytes: int) -> None:
    """Arrays smaller than this keep NumPy's allocator (default 65536)."""
    _mem.set_min_pooled_bytes(_check_nbytes("set_min_pooled_bytes", nbytes))


def get_min_pooled_bytes() -> int:
    """The size from which outputs are pooled."""
    return _mem.get_min_pooled_bytes()


def set_enabled(enabled: bool) -> None:
    """Turn pooling of new outputs on or off. Off also empties the cache; blocks still in use
    return to the cache when their arrays die (call ``empty_cache()`` again to release them)."""
    if not isinstance(enabled, bool):
        raise ValueError(f"For 'set_enabled', the 'enabled' must be a bool, but got {enabled!r}.")
    _mem.set_enabled(enabled)
    if not enabled:
        _mem.empty_cache()


def is_enabled() -> bool:
    """Whether new outputs are pooled."""
    return _mem.is_enabled()


def empty(shape, dtype=np.float32) -> np.ndarray:
    """An uninitialised C-contiguous array allocated the way kernel outputs are (pooled from
    ``get_min_pooled_bytes()`` on)."""
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    dtype = getattr(dtype, "np_dtype", dtype)
    return _mem.empty(list(shape), np.dtype(dtype))


def is_pooled(array) -> bool:
    """Whether ``array`` (or the array it views) lives in a pooled block."""
    if not isinstance(array, np.ndarray) and hasattr(array, "__array__"):
        array = np.asarray(array)  # an opforge Tensor: its own array, not a copy
    base = array
    while base is not None:
        if isinstance(base, PooledBlock):
            return True
        base = getattr(base, "base", None)
    return False


def bucket_size(nbytes: int) -> int:
    """The block size the pool serves a request of ``nbytes`` with."""
    return _mem.bucket_size(_check_nbytes("bucket_size", nbytes))


def _init_from_env() -> None:
    cap = os.environ.get("OPFORGE_MAX_CACHED_BYTES", "").strip()
    if cap:
        if not cap.isdigit():
            raise ValueError(f"OPFORGE_MAX_CACHED_BYTES must be a number of bytes, but got {cap!r}.")
        set_max_cached_bytes(int(cap))
    if os.environ.get("OPFORGE_MEMORY_POOL", "").strip() == "0":
        set_enabled(False)


_init_from_env()
