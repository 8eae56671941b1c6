"""CUDA kernels: how a registered GPU kernel finds its compiled function and is launched.

A ``CudaKernel`` names a source file of ``csrc/kernels/cuda/`` and a template instantiation in it
(``opforge::cuda::UnaryKernel<float, opforge::EluOp>``), plus its *loop*: the launch glue that
allocates the outputs, packs the arguments and picks the grid (``opforge/kernels/gpu/loops.py``).
Each source is compiled once per process and runtime with every instantiation registered for it
(NVRTC through ``cupy.RawModule`` and its ``name_expressions``; CuPy caches the binary on disk).
The code handed to the compiler starts with a digest of opforge's headers, so a changed header
compiles again instead of reusing a stale binary.
"""

from __future__ import annotations

import hashlib
import pathlib
import threading
from dataclasses import dataclass
from typing import Callable

import numpy as np

from opforge import dtype as mstype
from opforge import sysconfig
from opforge.kernels import registry
from opforge.kernels.kernel_attr import KernelAttr
from opforge.kernels.launch import LaunchSpec, register_launcher

__all__ = [
    "CudaKernel",
    "register_cuda_kernels",
    "register_device_kernel",
    "device_kernel_names",
    "ctype",
    "functor_arg",
    "function_for",
    "COMPILE_OPTIONS",
]

# C++ names of the dtypes, for template arguments.
_CTYPES = {
    "Bool": "uint8_t",  # bools are bytes: a byte other than 0/1 in a C++ bool is UB
    "Int8": "int8_t",
    "Int16": "int16_t",
    "Int32": "int32_t",
    "Int64": "int64_t",
    "UInt8": "uint8_t",
    "UInt16": "uint16_t",
    "UInt32": "uint32_t",
    "UInt64": "uint64_t",
    "Float16": "opforge::float16",
    "BFloat16": "opforge::bfloat16",
    "Float32": "float",
    "Float64": "double",
    "Complex64": "opforge::complex64",
    "Complex128": "opforge::complex128",
}

COMPILE_OPTIONS = ("--std=c++17",)


def ctype(dtype: mstype.Type) -> str:
    """The C++ type a CUDA kernel stores ``dtype`` as."""
    return _CTYPES[str(dtype)]


@dataclass(frozen=True)
class CudaKernel:
    """One CUDA kernel: ``name`` (a template instantiation) in ``source``, run by ``loop``.

    ``loop(spec, function, kernel)`` returns ``run(arrays)`` for one LaunchSpec; ``functor``
    lists the functor's fields as (attr name, NumPy dtype, default), passed as the functor's bytes;
    ``helpers`` names further instantiations the loop launches (``function_for(runtime, kernel,
    name)``), compiled with the rest of the source. An empty ``name``: the loop calls a library
    routine of the runtime (``source`` names it) and gets no function. ``functor_type`` and ``arity``
    name the per-element functor of a plain elementwise kernel (``out[i] = op(x[i])`` or
    ``op(a[i], b[i])``) for the trace compiler's fusion (``opforge/dispatch/fusion.py``); "" and 0
    for any other kernel.
    """

    source: str
    name: str
    loop: Callable
    functor: tuple = ()
    helpers: tuple = ()
    functor_type: str = ""
    arity: int = 0


def functor_arg(kernel: CudaKernel, attrs: dict):
    """The functor parameter of a launch: its fields from the primitive's attrs, as a structured
    NumPy scalar (a one-byte zero for a functor without fields: C++'s empty struct)."""
    if not kernel.functor:
        return np.uint8(0)
    dtype = np.dtype([(name, np.dtype(t)) for name, t, _ in kernel.functor], align=True)
    value = np.zeros((), dtype)
    for name, _, default in kernel.functor:
        value[name] = attrs.get(name, default)
    return value[()]


def register_cuda_kernels(op_name: str, kernels: dict) -> None:
    """Register ``{KernelAttr: CudaKernel}`` as GPU kernels of ``op_name``."""
    entries = []
    for attr, kernel in kernels.items():
        if not isinstance(attr, KernelAttr) or not isinstance(kernel, CudaKernel):
            raise TypeError(f"For '{op_name}', GPU kernels are registered as {{KernelAttr: CudaKernel}}.")
        entries.append(registry.KernelEntry(op_name, "GPU", attr, "cuda", kernel, f"cuda:{kernel.source}"))
    registry.register_entries(entries)


_device_kernels: set = set()  # (source, name) of kernels the device runs itself (Fill, Cast)


def register_device_kernel(kernel: CudaKernel) -> CudaKernel:
    """Note a kernel the GPU device launches itself (not an operator's), so it is compiled with its
    source and checked like the registered ones."""
    _device_kernels.add((kernel.source, kernel.name))
    return kernel


def device_kernel_names() -> list:
    return sorted(_device_kernels)


# ---------------------------------------------------------------------------------------------
# Compiled modules


def source_path(source: str) -> pathlib.Path:
    """The file of a kernel's source: opforge's own by name (``csrc/kernels/cuda/``), a user's by
    absolute path."""
    path = pathlib.Path(source)
    return path if path.is_absolute() else sysconfig.get_cuda_sources() / source


def include_dirs(source: str) -> tuple:
    """The compiler's ``-I`` folders for a source: opforge's headers and CUDA sources, and a user
    source's own folder."""
    dirs = [sysconfig.get_include(), sysconfig.get_cuda_sources()]
    folder = source_path(source).parent
    if folder not in dirs:
        dirs.append(folder)
    return tuple(dirs)


def _headers_digest(dirs: tuple) -> str:
    """A digest of every header the source may include: CuPy's cache keys on the code and options
    only, so the code carries it and a changed header compiles again."""
    h = hashlib.sha256()
    for root in dirs:
        for path in sorted(root.rglob("*")):
            if path.suffix in (".h", ".cuh", ".hpp"):
                h.update(path.name.encode())
                h.update(path.read_bytes())
    return h.hexdigest()[:16]


_lock = threading.Lock()
_modules: dict = {}  # (id(runtime), source) -> (frozenset of names, get_function)


def _names_for(source: str) -> set:
    names = {name for s, name in _device_kernels if s == source}
    for e in registry.all_kernels():
        if e.kind == "cuda" and e.impl.source == source:
            names.update((e.impl.name, *e.impl.helpers))
    return names


def function_for(runtime, kernel: CudaKernel, name: str | None = None):
    """The compiled function ``name`` (default: the kernel's own) of ``kernel``'s source on ``runtime``;
    the first use of a source compiles it with every instantiation registered for it (a later
    registration recompiles it once, keeping those compiled before)."""
    name = kernel.name if name is None else name
    key = (id(runtime), kernel.source)
    with _lock:
        known = _modules.get(key)
        if known is None or name not in known[0]:
            wanted = _names_for(kernel.source) | {kernel.name, *kernel.helpers, name}
            names = tuple(sorted(wanted | (known[0] if known else set())))
            dirs = include_dirs(kernel.source)
            code = f"// opforge headers {_headers_digest(dirs)}\n" + source_path(kernel.source).read_text()
            options = COMPILE_OPTIONS + tuple(f"-I{d}" for d in dirs)
            known = (frozenset(names), runtime.load_module(kernel.source, code, options, names))
            _modules[key] = known
        return known[1](name)


# ---------------------------------------------------------------------------------------------
# Launch


BLOCK = 256  # threads per block of the grid-stride kernels
BLOCKS_PER_MULTIPROCESSOR = 16  # enough resident blocks to hide memory latency; the loop covers the rest


def grid_for(runtime, n: int) -> tuple:
    """The grid of a grid-stride loop over ``n`` elements (n > 0). (A thread per element instead moved
    0.52 of a device copy's bytes per second for ReLU on an H200, against 0.72 with this cap.)"""
    blocks = min(-(-n // BLOCK), runtime.multiprocessor_count * BLOCKS_PER_MULTIPROCESSOR)
    return (blocks, 1, 1)


def _cuda_launcher(spec: LaunchSpec) -> Callable:
    kernel = spec.entry.impl
    device = spec.device
    function = function_for(device.runtime, kernel) if kernel.name else None  # none: a library routine
    return kernel.loop(spec, function, kernel)


register_launcher("cuda", _cuda_launcher)
