"""The GPU device: a GPU Tensor holds an array of the GPU *runtime*.

The runtime is the one small seam between opforge and the GPU library: allocation, copies between
host and device, module loading and kernel launch (``GpuRuntime``). On a machine with a GPU it is
CuPy (``opforge/device/cupy_runtime.py``: CuPy arrays, CuPy's memory pool, the current stream);
the tests plug in a host emulation that runs the same CUDA sources (``tests/emulation/``). Every
other part of the GPU backend (the device below, the launch glue, the kernels' registrations) is
the same for both.

Casts run opforge's own CUDA Cast kernels (``csrc/kernels/cuda/cast.cu``), so the GPU casts
exactly as the CPU does, bfloat16 included.
"""

from __future__ import annotations

import numpy as np

from opforge.device.base import Device, register_device, register_device_factory

__all__ = ["GpuDevice", "GpuRuntime", "GraphCaptureError", "use_runtime"]


_MAX_SCALARS = 4096  # weak scalars kept on the device (a few bytes each)


class GraphCaptureError(RuntimeError):
    """Work that a device graph cannot hold was asked for while one was being captured (a copy to or
    from the host, a synchronisation): the capture is abandoned and the work runs as before."""


class GpuRuntime:
    """What the GPU backend needs from a GPU library. ``array_type`` arrays have ``shape``,
    ``dtype``, ``size``, ``nbytes`` and ``ndim`` like NumPy's."""

    array_type: type = object
    name: str = ""  # shown in errors and by `opforge doctor`
    supports_graphs: bool = False  # graph_stream() and capture() work
    multiprocessor_count: int = 1

    def empty(self, shape: tuple, np_dtype):
        raise NotImplementedError

    def from_host(self, host: np.ndarray):
        """A device copy of a C-contiguous host array."""
        raise NotImplementedError

    def to_host(self, array) -> np.ndarray:
        raise NotImplementedError

    def from_foreign(self, obj):
        """An array sharing the memory of another library's GPU data (DLPack or
        ``__cuda_array_interface__``)."""
        raise NotImplementedError

    def copy(self, dst, src) -> None:
        """Device-to-device copy of same-dtype, same-size, C-contiguous arrays."""
        raise NotImplementedError

    def contiguous(self, array):
        """``array`` itself when C-contiguous, else a C-contiguous copy on the device."""
        raise NotImplementedError

    def is_contiguous(self, array) -> bool:
        raise NotImplementedError

    def pointer(self, array) -> int:
        raise NotImplementedError

    def reshape(self, array, shape: tuple):
        """A view of a C-contiguous array with another shape."""
        raise NotImplementedError

    def view(self, array, offset: int, shape: tuple):
        """A view of ``shape`` over the elements of the 1-D C-contiguous ``array`` from ``offset`` on."""
        raise NotImplementedError

    def load_module(self, name: str, code: str, options: tuple, name_expressions: tuple):
        """Compile (or find in the cache) ``code``; returns ``function(name_expression)``."""
        raise NotImplementedError

    def launch(self, function, grid: tuple, block: tuple, args: tuple, shared_mem: int = 0) -> None:
        """Run a kernel on the current stream; ``args`` are arrays and NumPy scalars (structured
        ones for struct parameters); ``shared_mem`` bytes of dynamic shared memory per block (the
        kernel's ``extern __shared__`` array)."""
        raise NotImplementedError

    # -- launches from C (``_C.DeviceLaunch``, built by ``opforge/kernels/gpu/support.py``) --------------
    native_launches: bool = False  # whether kernels launch through the three below, with no Python frame
    native_pointer: tuple = ()  # attribute names from an array to its address (an int, or a NumPy array)
    native_stream = None  # () -> the current stream's handle (an int), or None: the launches take none

    def native_function(self, function) -> tuple:
        """``(kind, entry, handle, error)``, the C entry point that launches ``function``: kind ``"driver"``,
        ``entry`` the address of ``cuLaunchKernel``, ``handle`` the ``CUfunction`` and ``error`` the address
        of ``cuGetErrorString``; or kind ``"host"``, ``entry`` a ``int(const unsigned* grid, const unsigned*
        block, void** params, size_t shared_mem)`` and ``error`` a ``const char*()`` giving its last error.
        Either takes kernel parameters as ``cuLaunchKernel`` does."""
        raise NotImplementedError

    def native_gemm(self) -> tuple:
        """``(kind, gemm, strided_gemm, handle, set_stream)``, the C entry points of a GEMM step (a MatMul
        launched from C, ``opforge/device/cublas.py``'s ``GemmPlan``): ``gemm`` and ``strided_gemm`` with the
        signatures of ``cublasGemmEx`` and ``cublasGemmStridedBatchedEx``; kind ``"cublas"``, ``handle`` a
        callable giving the calling thread's cuBLAS handle and ``set_stream`` ``cublasSetStream_v2``'s address;
        or kind ``"host"``, ``handle`` None and ``set_stream`` 0."""
        raise NotImplementedError

    def native_read(self) -> tuple:
        """``(kind, copy, sync)``, the C entry points of a check step (indices checked on the device, their
        verdict read back): kind ``"driver"``, ``copy`` and ``sync`` the addresses of ``cuMemcpyDtoHAsync_v2``
        and ``cuStreamSynchronize``; or kind ``"host"`` (arrays in host memory, launches finished on return)
        and both 0."""
        raise NotImplementedError

    def matmul(self, a, b, out, transpose_a: bool = False, transpose_b: bool = False) -> None:
        """``out = op(a) @ op(b)`` for C-contiguous arrays of at least 2 dims, ``op`` transposing the last
        two dims where asked (cuBLAS through CuPy); leading dims are batch dims that broadcast as
        ``np.matmul``'s (BatchMatMul); integers wrap. ``out`` is C-contiguous of the result's shape."""
        raise NotImplementedError

    def sort(self, keys) -> None:
        """Sort a 1-d array of unsigned integers in place, ascending (CUB's radix sort through CuPy). Sort and
        TopK pack what they sort into such keys (``opforge/kernels/gpu/sort.py``)."""
        raise NotImplementedError

    def argsort(self, keys):
        """The positions (a new int64 array) that sort a 1-d array of unsigned integers ascending, stably: equal
        keys keep their order (CUB's radix sort of key-position pairs through CuPy)."""
        raise NotImplementedError

    def memory_bytes(self) -> int:
        raise NotImplementedError

    def synchronize(self) -> None:
        raise NotImplementedError

    # -- device graphs: a replay captured once and launched whole (``opforge/dispatch/device_graph.py``)
    def graph_stream(self):
        """A context in which queued work goes to the stream graphs are captured on, ordered after the
        work already queued on the current stream and before the work queued on it later."""
        raise NotImplementedError

    def capture(self, record):
        """``(record(), graph)``: the device work ``record()`` queues, recorded into a graph and not run
        (a CUDA graph through stream capture); ``graph.launch()`` runs it on the current stream. Memory
        allocated while recording stays allocated while the graph lives (its kernels keep the addresses).
        Raises ``GraphCaptureError`` where ``record`` copies to or from the host or synchronises. Called
        inside ``graph_stream()``, after a run of the same work there (so its allocations are settled)."""
        raise NotImplementedError

    def capturing(self) -> bool:
        """Whether this thread is recording a graph now (so host copies are refused)."""
        return False

    def after_launch(self, check) -> None:
        """While recording: ``check()`` runs on the host after every launch of the graph (it may copy to
        the host and raise), for what a kernel's launch glue checks on the host outside graphs."""
        raise NotImplementedError


class GpuDevice(Device):
    """Arrays of a ``GpuRuntime``; kernel-ready means C-contiguous (allocations are aligned)."""

    name = "GPU"

    # How arrays change dtype and are filled: opforge's Cast and Fill CUDA kernels, which the GPU
    # kernels package provides (``provide_kernels``) when it is imported.
    _cast_kernel = None  # (device, array, np_dtype) -> new array
    _fill_kernel = None  # (device, array, value) -> None

    def __init__(self, runtime: GpuRuntime):
        self.runtime = runtime
        self.array_type = runtime.array_type
        self._scalars: dict = {}  # (dtype, bytes) -> 0-d device array (``scalar``)

    @classmethod
    def provide_kernels(cls, *, cast=None, fill=None) -> None:
        if cast is not None:
            cls._cast_kernel = staticmethod(cast)
        if fill is not None:
            cls._fill_kernel = staticmethod(fill)

    # -- creation and copies --------------------------------------------------------------------
    def asarray(self, data, np_dtype):
        if isinstance(data, self.array_type):
            if np_dtype is not None and data.dtype != np_dtype:
                return self.cast(self.share(data), np_dtype)
            out = self.runtime.empty(data.shape, data.dtype)
            self.runtime.copy(out, self.runtime.contiguous(data))
            return out
        host = _host_array(data)
        if np_dtype is not None and host.dtype != np_dtype:
            host = host.astype(np_dtype)  # on the host: the data is there already
        # Not np.ascontiguousarray: it turns a 0-d array into a 1-d one.
        return self.runtime.from_host(host if host.flags.c_contiguous else host.copy(order="C"))

    def share(self, array):
        if isinstance(array, self.array_type):
            return self.runtime.contiguous(array)
        return self.asarray(array, None)

    def to_host(self, array, copy: bool = True) -> np.ndarray:
        host = self.runtime.to_host(array)  # always a new host array
        if not copy:
            host.flags.writeable = False
        return host

    def empty(self, shape: tuple, np_dtype):
        return self.runtime.empty(tuple(shape), np.dtype(np_dtype))

    def full(self, shape: tuple, value, np_dtype):
        out = self.runtime.empty(tuple(shape), np.dtype(np_dtype))
        self._kernel(self._fill_kernel, "Fill")(self, out, value)
        return out

    def scalar(self, value, np_dtype):
        # One device copy per value, kept: a weak scalar is only ever read, and a call (or a captured
        # graph, which cannot copy from the host) then finds it on the device.
        host = np.asarray(value, dtype=np_dtype)
        key = (host.dtype, host.tobytes())
        array = self._scalars.get(key)
        if array is None:
            if len(self._scalars) >= _MAX_SCALARS:
                self._scalars.clear()
            array = self._scalars[key] = self.runtime.from_host(host)
        return array

    def cast(self, array, np_dtype):
        return self._kernel(self._cast_kernel, "Cast")(self, array, np.dtype(np_dtype))

    @staticmethod
    def _kernel(fn, what: str):
        if fn is None:
            raise RuntimeError(f"The GPU device has no {what} kernels: opforge.kernels.gpu provides them.")
        return fn

    def write(self, dst, src) -> None:
        if not isinstance(src, self.array_type):
            src = self.asarray(src, dst.dtype)
        elif src.dtype != dst.dtype:
            src = self.cast(self.share(src), dst.dtype)
        if src.shape != dst.shape:
            raise ValueError(f"Cannot write a {src.shape} array into a {dst.shape} one.")
        self.runtime.copy(dst, self.runtime.contiguous(src))

    def view(self, array, offset: int, shape: tuple):
        return self.runtime.view(array, offset, tuple(shape))

    def is_writable(self, array) -> bool:
        return True  # device memory has no read-only flag; Parameters are checked by the dispatcher

    def is_kernel_ready(self, array) -> bool:
        return isinstance(array, self.array_type) and self.runtime.is_contiguous(array)

    def shares_memory(self, a, b) -> bool:
        pa, pb = self.runtime.pointer(a), self.runtime.pointer(b)
        return pa < pb + b.nbytes and pb < pa + a.nbytes and a.nbytes > 0 and b.nbytes > 0

    def memory_bytes(self) -> int:
        return self.runtime.memory_bytes()

    def synchronize(self) -> None:
        self.runtime.synchronize()


def _host_array(data) -> np.ndarray:
    if isinstance(data, np.ndarray):
        return data
    get = getattr(data, "get", None)  # another GPU library's array (CuPy): its own copy to the host
    if get is not None and hasattr(data, "__cuda_array_interface__"):
        return get()
    return np.asarray(data)


def use_runtime(runtime: GpuRuntime) -> GpuDevice:
    """Make ``runtime`` the GPU: registers a new GPU device on it and returns the device."""
    return register_device(GpuDevice(runtime))


def _cupy_device() -> GpuDevice:
    from opforge.device import cupy_runtime  # CuPy is optional: imported only when the GPU is asked for

    return GpuDevice(cupy_runtime.CupyRuntime())


register_device_factory("GPU", _cupy_device)
