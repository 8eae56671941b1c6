"""The GPU runtime on a real GPU: CuPy. With nccl.py (the communicators), the only module of opforge that calls CuPy.

Arrays are CuPy arrays from CuPy's memory pool; kernels are compiled by NVRTC through
``cupy.RawModule`` (cached on disk by CuPy) and launched on CuPy's current stream; MatMul calls
cuBLAS through ``cupy.matmul``; Sort and TopK sort 1-d unsigned integers with CUB's radix sort (through
``ndarray.sort`` and ``cupy.argsort``). Device graphs are CUDA graphs captured on a stream of their
own (``cupy.cuda.Graph``). Install with ``pip install "opforge[gpu]"``.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import math
import os
import threading

import numpy as np

from opforge.device import cublas
from opforge.device.gpu import GpuRuntime, GraphCaptureError

try:
    import cupy
except ImportError as e:  # raised as the reason the GPU device is not available
    raise RuntimeError(f'CuPy is not installed ({e}); install it with pip install "opforge[gpu]"') from e

__all__ = ["CupyRuntime"]


class CupyRuntime(GpuRuntime):
    array_type = cupy.ndarray
    name = "CuPy"
    supports_graphs = True

    def __init__(self):
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except cupy.cuda.runtime.CUDARuntimeError as e:
            raise RuntimeError(f"CUDA found no GPU ({e})") from e
        if count == 0:
            raise RuntimeError("CUDA found no GPU")
        props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        self.multiprocessor_count = int(props["multiProcessorCount"])
        self.device_name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        self._graph_stream = None  # made on first use
        self._capturing = threading.local()  # .checks: the after_launch list of the graph being recorded

    def empty(self, shape, np_dtype):
        return cupy.empty(shape, np_dtype)

    def from_host(self, host):
        self._refuse_in_capture("a copy from the host")
        return cupy.asarray(host)

    def to_host(self, array) -> np.ndarray:
        self._refuse_in_capture("a copy to the host")
        return cupy.asnumpy(array)

    def from_foreign(self, obj):
        if hasattr(obj, "__dlpack__"):
            return cupy.from_dlpack(obj)
        return cupy.asarray(obj)  # __cuda_array_interface__: shares the memory

    def copy(self, dst, src) -> None:
        cupy.copyto(dst, src)

    def contiguous(self, array):
        return cupy.ascontiguousarray(array)

    def is_contiguous(self, array) -> bool:
        return array.flags.c_contiguous

    def pointer(self, array) -> int:
        return array.data.ptr

    def reshape(self, array, shape):
        return array.reshape(shape)

    def view(self, array, offset, shape):
        return array[offset : offset + math.prod(shape)].reshape(shape)

    def load_module(self, name, code, options, name_expressions):
        module = cupy.RawModule(code=code, options=options, name_expressions=name_expressions)
        return module.get_function

    def launch(self, function, grid, block, args, shared_mem=0) -> None:
        function(grid, block, args, shared_mem=shared_mem)

    # Launches from C: cuLaunchKernel on CuPy's compiled functions and current stream. Not yet run on a
    # GPU, so off unless asked for (scripts/gpu_check.sh asks, to check it).
    native_launches = os.environ.get("OPFORGE_GPU_NATIVE_LAUNCH", "0") == "1"
    native_pointer = ("data", "ptr")
    native_stream = staticmethod(cupy.cuda.stream.get_current_stream_ptr)

    def native_function(self, function) -> tuple:
        # a RawKernel's CUfunction on this device
        return ("driver", _driver("cuLaunchKernel"), int(function.kernel.ptr), _driver("cuGetErrorString"))

    def native_gemm(self) -> tuple:
        return cublas.native_entries(cupy.cuda.device.get_cublas_handle)

    def native_read(self) -> tuple:
        return ("driver", _driver("cuMemcpyDtoHAsync_v2"), _driver("cuStreamSynchronize"))

    def matmul(self, a, b, out, transpose_a=False, transpose_b=False) -> None:
        if self.capturing():  # CuPy refuses cuBLAS calls in a capture: cuBLAS itself, directly
            stream = cupy.cuda.get_current_stream().ptr
            cublas.gemm(cupy.cuda.device.get_cublas_handle(), stream, a, b, out, transpose_a, transpose_b)
            return
        # cuBLAS reads the views; leading dims are batch dims, broadcast (BatchMatMul)
        cupy.matmul(a.swapaxes(-1, -2) if transpose_a else a, b.swapaxes(-1, -2) if transpose_b else b, out=out)

    def sort(self, keys) -> None:
        keys.sort()  # 1-d unsigned integers: thrust's radix sort (CUB)

    def argsort(self, keys):
        return cupy.argsort(keys)  # 1-d: a stable radix sort of (key, position) pairs

    def memory_bytes(self) -> int:
        return int(cupy.cuda.runtime.memGetInfo()[1])

    def synchronize(self) -> None:
        self._refuse_in_capture("a synchronisation")
        cupy.cuda.get_current_stream().synchronize()

    # -- CUDA graphs --------------------------------------------------------------------------------
    def _refuse_in_capture(self, what: str) -> None:
        if self.capturing():
            raise GraphCaptureError(f"{what} while a graph was being captured")

    def capturing(self) -> bool:
        return getattr(self._capturing, "checks", None) is not None

    def after_launch(self, check) -> None:
        self._capturing.checks.append(check)

    @contextlib.contextmanager
    def graph_stream(self):
        if self._graph_stream is None:
            self._graph_stream = cupy.cuda.Stream(non_blocking=True)
        stream, current = self._graph_stream, cupy.cuda.get_current_stream()
        stream.wait_event(current.record())
        try:
            with stream:
                yield
        finally:
            current.wait_event(stream.record())

    def capture(self, record):
        stream = cupy.cuda.get_current_stream()
        kept = []  # every block allocated while recording: the graph's kernels keep their addresses
        pool = cupy.get_default_memory_pool()

        def allocate(size):
            memory = pool.malloc(size)
            kept.append(memory)
            return memory

        self._capturing.checks = checks = []
        try:
            with cupy.cuda.using_allocator(allocate):
                # relaxed: the pool may still call cudaMalloc; copies and synchronisations are refused above
                stream.begin_capture(cupy.cuda.runtime.streamCaptureModeRelaxed)
                try:
                    result = record()
                except BaseException:
                    with contextlib.suppress(Exception):
                        stream.end_capture()
                    raise
                graph = stream.end_capture()
        except cupy.cuda.runtime.CUDARuntimeError as e:  # work CUDA itself refused to capture
            raise GraphCaptureError(f"CUDA refused the capture ({e})") from e
        finally:
            self._capturing.checks = None
        return result, _CupyGraph(graph, kept, checks)


@functools.cache
def _driver(name: str) -> int:
    """The address of the function ``name`` in the CUDA driver CuPy uses."""
    return ctypes.cast(getattr(ctypes.CDLL("libcuda.so.1"), name), ctypes.c_void_p).value


class _CupyGraph:
    """A captured CUDA graph, the memory its kernels use, and the host checks after each launch."""

    __slots__ = ("graph", "kept", "checks")

    def __init__(self, graph, kept, checks):
        self.graph, self.kept, self.checks = graph, kept, checks

    def launch(self) -> None:
        self.graph.launch(cupy.cuda.get_current_stream())
        for check in self.checks:
            check()
