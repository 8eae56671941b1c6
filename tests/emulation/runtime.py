"""A GPU runtime that runs opforge's CUDA sources on the host, for the tests (the threads of a block as
concurrent fibers with real barriers, warp intrinsics and shared memory: cuda_host.h).

Each ``.cu`` file is compiled by g++ as host C++ with ``cuda_host.h`` forced in front, plus one
``extern "C"`` entry per requested template instantiation (the names CuPy would pass to NVRTC as
``name_expressions``); a launch calls the kernel for every block and thread of the real grid. The
source is preprocessed first (its headers included) so that each ``extern __shared__ T buf[];`` can be
rewritten into a pointer to the launch's dynamic shared memory, which C++ has no declaration for.
"Device" arrays are ``EmulatedArray``s: host memory that, like CuPy's arrays, refuses implicit
conversion to NumPy, so code that would read GPU memory from the host fails here too.

Library calls stand in for the GPU libraries: MatMul (cuBLAS through CuPy) runs NumPy's matmul, the sort of
unsigned keys (CUB through CuPy) NumPy's stable sort.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import math
import os
import pathlib
import re
import subprocess
import tempfile
import threading

import numpy as np

from opforge import _C, sysconfig
from opforge.device import cublas
from opforge.device.gpu import GpuRuntime, GraphCaptureError

__all__ = ["EmulatedArray", "EmulatedKernelError", "EmulatedRuntime"]

HERE = pathlib.Path(__file__).resolve().parent


class EmulatedKernelError(RuntimeError):
    """A kernel broke the rules of a block's synchronisation on the emulated GPU (a thread left a barrier
    the others wait at, lanes of a warp at different intrinsics, a deadlock)."""


class EmulatedArray:
    """Device memory of the emulated GPU: a C-contiguous host buffer behind a CuPy-like face."""

    __slots__ = ("_host",)

    def __init__(self, host: np.ndarray):
        self._host = host

    shape = property(lambda self: self._host.shape)
    dtype = property(lambda self: self._host.dtype)
    size = property(lambda self: self._host.size)
    nbytes = property(lambda self: self._host.nbytes)
    ndim = property(lambda self: self._host.ndim)

    def reshape(self, shape):
        return EmulatedArray(self._host.reshape(shape))

    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion of a GPU array to a NumPy array is not allowed (as in CuPy).")

    def __repr__(self) -> str:
        return f"EmulatedArray(shape={self.shape}, dtype={self.dtype})"


class _Function:
    __slots__ = ("fn", "name", "library")

    def __init__(self, fn, name, library):
        self.fn, self.name, self.library = fn, name, library


_compile_lock = threading.Lock()
# Part of the cache key: a change to how sources are rewritten compiles them again.
_REWRITER_VERSION = "shared-memory rewrite 2"
# More g++ flags for every module (scripts/tsan.sh builds them with ThreadSanitizer); part of the cache key.
_EXTRA_FLAGS = tuple(os.environ.get("OPF_EMU_CXXFLAGS", "").split())


def _cache_dir() -> pathlib.Path:
    path = pathlib.Path(tempfile.gettempdir()) / f"opforge-emulated-gpu-{os.getuid()}"
    path.mkdir(exist_ok=True)
    return path


# cuda_host.h's `__shared__` once preprocessed: a marker that fails to compile unless rewritten here.
_SHARED = "__opf_emu_shared__"
_EXTERN_SHARED = re.compile(r"\bextern\s+" + _SHARED + r"\s+(?P<type>[^;{}]*?)\b(?P<name>\w+)\s*\[\s*\]\s*;")
_STATIC_SHARED = re.compile(r"\b" + _SHARED + r"\s+(?P<decl>[^;{}]*);")
_NAME = re.compile(r"(\w+)\s*$")
_BRACKETS = re.compile(r"\[[^\[\]]*\]")


def _static_shared(match: re.Match) -> str:
    """``__shared__ T name[N];`` as a reference to a slot of the block's shared memory (cuda_host.h's
    SharedStatic): the lambda's static, never used, names the declaration in each template instance."""
    decl = match["decl"].strip()
    outside = _BRACKETS.sub("[]", decl)  # the extents' expressions may hold `==` or `,`
    name = _NAME.search(outside.split("[", 1)[0])
    if name is None or "," in outside or "=" in outside:
        raise RuntimeError(
            f"the emulated GPU cannot read the __shared__ declaration `{decl};` (one variable per "
            "declaration, without an initialiser)"
        )
    name = name[1]
    return f"auto& {name} = opf_emu::SharedStatic([]() -> auto& {{ static {decl}; return {name}; }}());"


def _rewrite_shared(preprocessed: str) -> str:
    """Each ``extern __shared__ T buf[];`` as ``T* const buf = opf_emu::DynamicShared();`` (the launch's
    dynamic shared memory, which a pointer reads and writes as the unsized array would), then each other
    ``__shared__`` declaration as a slot of the block's static shared memory."""
    code = _EXTERN_SHARED.sub(
        lambda m: f"{m['type'].strip()}* const {m['name']} = opf_emu::DynamicShared();", preprocessed
    )
    return _STATIC_SHARED.sub(_static_shared, code)


def _run(cmd: list) -> None:
    # The compiler runs without the sanitizer runtime a test run may preload (scripts/tsan.sh).
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    result = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise RuntimeError(f"the emulated GPU could not compile its kernels:\n{result.stderr[-6000:]}")


def _compile(code: str, options: tuple, names: tuple) -> ctypes.CDLL:
    launchers = "".join(
        f'extern "C" int opf_emu_launch_{i}(const unsigned* g, const unsigned* b, void** a, size_t s) '
        f"{{ return opf_emu::Launch(&{name}, g, b, a, s); }}\n"
        for i, name in enumerate(names)
    )
    source = code + "\n// the emulation's entry points\n" + launchers
    includes = [o for o in options if o.startswith("-I")]
    parts = [source, *includes, *_EXTRA_FLAGS, (HERE / "cuda_host.h").read_text(), _REWRITER_VERSION]
    key = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]
    lib = _cache_dir() / f"{key}.so"
    with _compile_lock:
        if not lib.exists():
            # Each process compiles its own copy of the source: another process (a test worker) compiling
            # the same key must never rewrite the file this compiler is reading (a source cut short once
            # built a library without some entry points, which a worker then kept loaded).
            src = lib.with_suffix(f".{os.getpid()}.cc")
            src.write_text(source)
            flags = ["-std=c++17", *_EXTRA_FLAGS]
            tmp = lib.with_suffix(f".{os.getpid()}.tmp")
            unit = lib.with_suffix(f".{os.getpid()}.ii")
            try:
                _run(["g++", *flags, "-E", "-include", str(HERE / "cuda_host.h"), *includes, str(src), "-o", str(unit)])
                unit.write_text(_rewrite_shared(unit.read_text()))
                _run(["g++", *flags, "-O2", "-shared", "-fPIC", "-w", str(unit), "-o", str(tmp)])
            finally:
                src.unlink(missing_ok=True)
                unit.unlink(missing_ok=True)
            os.replace(tmp, lib)  # atomic: a concurrent reader sees the old file or the whole new one
    return ctypes.CDLL(str(lib))


_cublas = None


def _cublas_library() -> ctypes.CDLL:
    """The emulation's cuBLAS GEMMs (cublas_host.cc), compiled once; the code carries the digest of the
    half-precision header it includes, so a changed header compiles it again."""
    global _cublas
    if _cublas is None:
        include = pathlib.Path(sysconfig.get_include())
        half = hashlib.sha256((include / "opforge" / "half.h").read_bytes()).hexdigest()[:16]
        code = (HERE / "cublas_host.cc").read_text() + f"\n// opforge/half.h {half}\n"
        _cublas = _compile(code, (f"-I{include}",), ())
    return _cublas


def _gemm(plan, a, b, out) -> None:
    """The emulated cuBLAS GEMM (cublas_host.cc) of ``plan`` on these arrays, as _C.DeviceLaunch calls it."""
    library = _cublas_library()
    ptr = lambda x: x._host.ctypes.data  # noqa: E731
    status = cublas.call_gemm(
        library.opf_emu_gemm_ex, library.opf_emu_gemm_strided_batched_ex, 0, plan, ptr(a), ptr(b), ptr(out)
    )
    if status != 0:
        raise RuntimeError(f"the emulated cuBLAS GEMM returned status {status}")


class EmulatedRuntime(GpuRuntime):
    array_type = EmulatedArray
    name = "emulated GPU (host)"
    supports_graphs = True
    multiprocessor_count = 4  # a small grid: the grid-stride loops still take several turns on big inputs

    # Launches from C (_C.DeviceLaunch) through each function's opf_emu_launch_N; OPF_EMU_NATIVE=0 turns
    # them off (every launch then goes through launch() below).
    native_launches = os.environ.get("OPF_EMU_NATIVE", "1") == "1"
    native_pointer = ("_host",)  # the host buffer: its data is the "device" address

    def native_function(self, function) -> tuple:
        error = ctypes.cast(function.library.opf_emu_error, ctypes.c_void_p).value
        return ("host", ctypes.cast(function.fn, ctypes.c_void_p).value, 0, error)

    def native_gemm(self) -> tuple:
        library = _cublas_library()
        address = lambda fn: ctypes.cast(fn, ctypes.c_void_p).value  # noqa: E731
        return ("host", address(library.opf_emu_gemm_ex), address(library.opf_emu_gemm_strided_batched_ex), None, 0)

    def native_read(self) -> tuple:
        return ("host", 0, 0)

    @property
    def launches(self) -> int:
        """Kernels launched here, through launch() and from C: tests see kernels really ran."""
        return self._launches + _C.device_launch_count()

    def __init__(self):
        self._launches = 0
        self.graphs_launched = 0
        self._recording = threading.local()  # .ops: the work of the graph this thread captures

    def empty(self, shape, np_dtype):
        # Filled with 0xFF bytes (NaN, -1), as a GPU's fresh memory holds whatever was there: an output a
        # kernel leaves unwritten shows, where NumPy's fresh pages would read as zeros and pass.
        host = np.empty(shape, np_dtype)
        host.reshape(-1).view(np.uint8).fill(0xFF)
        return EmulatedArray(host)

    def from_host(self, host):
        self._refuse_in_capture("a copy from the host")
        return EmulatedArray(np.array(host, order="C", copy=True))

    def to_host(self, array) -> np.ndarray:
        self._refuse_in_capture("a copy to the host")
        return array._host.copy()

    def copy(self, dst, src) -> None:
        if not self._recorded(self.copy, dst, src):
            np.copyto(dst._host, src._host)

    def contiguous(self, array):
        return array  # EmulatedArrays are always C-contiguous

    def is_contiguous(self, array) -> bool:
        return True

    def pointer(self, array) -> int:
        return array._host.ctypes.data

    def reshape(self, array, shape):
        return array.reshape(shape)

    def view(self, array, offset, shape):
        return EmulatedArray(array._host[offset : offset + math.prod(shape)].reshape(shape))

    def load_module(self, name, code, options, name_expressions):
        library = _compile(code, options, tuple(name_expressions))
        index = {n: i for i, n in enumerate(name_expressions)}

        def get_function(expr):
            fn = getattr(library, f"opf_emu_launch_{index[expr]}")
            fn.restype = ctypes.c_int
            return _Function(fn, expr, library)

        return get_function

    def launch(self, function, grid, block, args, shared_mem=0) -> None:
        if self._recorded(self.launch, function, grid, block, args, shared_mem):
            return
        holders, pointers = [], []
        for a in args:
            if isinstance(a, EmulatedArray):
                holder = ctypes.c_void_p(a._host.ctypes.data)
            elif isinstance(a, np.generic):
                holder = ctypes.create_string_buffer(a.tobytes(), max(a.nbytes, 1))
            else:
                raise TypeError(f"a kernel argument must be a GPU array or a NumPy scalar, not {type(a).__name__}")
            holders.append(holder)
            pointers.append(ctypes.cast(ctypes.pointer(holder), ctypes.c_void_p))
        argv = (ctypes.c_void_p * max(len(pointers), 1))(*pointers)
        g = (ctypes.c_uint * 3)(*grid)
        b = (ctypes.c_uint * 3)(*block)
        if function.fn(g, b, argv, ctypes.c_size_t(shared_mem)) != 0:
            error = function.library.opf_emu_error
            error.restype = ctypes.c_char_p
            raise EmulatedKernelError(f"For the kernel {function.name}, {error().decode()}.")
        self._launches += 1

    def matmul(self, a, b, out, transpose_a=False, transpose_b=False) -> None:
        if self._recorded(self.matmul, a, b, out, transpose_a, transpose_b):
            return
        plan = cublas.plan_gemm(out.dtype, a.shape, b.shape, out.shape, transpose_a, transpose_b)
        if plan is not None and a.dtype == b.dtype == out.dtype and out.size:
            _gemm(plan, a, b, out)  # the GEMM a call launched from C makes, so both give the same bits
            return
        a = a._host.swapaxes(-1, -2) if transpose_a else a._host
        b = b._host.swapaxes(-1, -2) if transpose_b else b._host
        if out._host.dtype == np.float16:  # cuBLAS's half GEMM: sums in float32, rounds once
            out._host[...] = np.matmul(a.astype(np.float32), b.astype(np.float32))
            return
        np.matmul(a, b, out=out._host)

    def sort(self, keys) -> None:
        if not self._recorded(self.sort, keys):
            keys._host.sort(kind="stable")

    def argsort(self, keys):
        out = EmulatedArray(np.empty(keys.shape, np.int64))
        if not self._recorded(self._argsort_into, keys, out):
            self._argsort_into(keys, out)
        return out

    @staticmethod
    def _argsort_into(keys, out) -> None:
        out._host[...] = np.argsort(keys._host, kind="stable")

    def memory_bytes(self) -> int:
        return 16 << 30

    def synchronize(self) -> None:
        self._refuse_in_capture("a synchronisation")

    # -- device graphs: the work recorded as calls, replayed in order (as a CUDA graph's nodes) -----
    def _refuse_in_capture(self, what: str) -> None:
        if self.capturing():
            raise GraphCaptureError(f"{what} while a graph was being captured")

    def capturing(self) -> bool:
        return getattr(self._recording, "ops", None) is not None

    def after_launch(self, check) -> None:
        self._recording.checks.append(check)

    def _recorded(self, method, *args) -> bool:
        """While capturing: record the call for the graph (not run now, as CUDA's capture) and say so."""
        ops = getattr(self._recording, "ops", None)
        if ops is None:
            return False
        ops.append((method, args))
        return True

    @contextlib.contextmanager
    def graph_stream(self):
        yield  # one stream: the work is in order already

    def capture(self, record):
        self._recording.ops, self._recording.checks = ops, checks = [], []
        try:
            result = record()
        finally:
            self._recording.ops = None
        return result, _EmulatedGraph(self, ops, checks)


class _EmulatedGraph:
    """The recorded calls of a capture; ``launch()`` runs them again, on the same arrays."""

    def __init__(self, runtime, ops, checks):
        self.runtime, self.ops, self.checks = runtime, ops, checks

    def launch(self) -> None:
        for method, args in self.ops:
            method(*args)
        self.runtime.graphs_launched += 1
        for check in self.checks:
            check()
