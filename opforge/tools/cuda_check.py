"""Compile every CUDA kernel of opforge without a GPU, as CuPy will on one: NVRTC (the
``nvidia-cuda-nvrtc`` wheel, or the CUDA toolkit's), each source with the template instantiations
registered for it (NVRTC name expressions), for each target architecture (default sm_80 and sm_90).

Used by the tests and by ``opforge doctor --cuda``; a syntax or type error in a kernel fails them,
with the compiler's log.
"""

from __future__ import annotations

import ctypes
import glob
import os
from dataclasses import dataclass

from opforge.kernels import registry
from opforge.kernels.gpu.cuda import COMPILE_OPTIONS, device_kernel_names, include_dirs, source_path

__all__ = ["ARCHITECTURES", "CompileResult", "find_nvrtc", "kernel_names_by_source", "compile_all"]

ARCHITECTURES = ("sm_80", "sm_90")


@dataclass
class CompileResult:
    source: str
    arch: str
    names: tuple
    ok: bool
    log: str
    cubin_bytes: int = 0


def find_nvrtc() -> str | None:
    """The path of libnvrtc: the nvidia-cuda-nvrtc wheel's, else the CUDA toolkit's."""
    try:
        import nvidia

        roots = list(nvidia.__path__)
    except ImportError:
        roots = []
    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    patterns = [os.path.join(r, "*", "lib", "libnvrtc.so*") for r in roots]
    patterns += [os.path.join(r, "cuda_nvrtc", "lib", "libnvrtc.so*") for r in roots]
    patterns += [
        os.path.join(cuda_home, "lib64", "libnvrtc.so*"),
        os.path.join(cuda_home, "targets", "*", "lib", "libnvrtc.so*"),
    ]
    for pattern in patterns:
        found = sorted(p for p in glob.glob(pattern) if "builtins" not in p)
        if found:
            return found[0]
    return None


def kernel_names_by_source() -> dict:
    """{source file: sorted instantiation names}: every registered CUDA kernel and the device's own."""
    names: dict = {}
    for entry in registry.all_kernels(include_disabled=True):
        if entry.kind == "cuda" and entry.impl.name:  # no name: a library routine (cuBLAS), nothing to compile
            names.setdefault(entry.impl.source, set()).add(entry.impl.name)
            for helper in entry.impl.helpers:
                names[entry.impl.source].add(helper)
    for source, name in device_kernel_names():
        names.setdefault(source, set()).add(name)
    return {source: tuple(sorted(n)) for source, n in sorted(names.items())}


class _Nvrtc:
    def __init__(self, path: str):
        # NVRTC opens its builtins library by name at compile time; loaded first from the same
        # folder, it is found whatever the library search path (a venv, LD_PRELOADed sanitizers).
        for builtins in sorted(glob.glob(os.path.join(os.path.dirname(path), "libnvrtc-builtins.so*"))):
            ctypes.CDLL(builtins, mode=ctypes.RTLD_GLOBAL)
        self.lib = ctypes.CDLL(path)
        self.lib.nvrtcGetErrorString.restype = ctypes.c_char_p

    def check(self, status: int, what: str) -> None:
        if status != 0:
            raise RuntimeError(f"{what}: {self.lib.nvrtcGetErrorString(status).decode()}")

    def compile(self, name: str, code: str, options: list, names: tuple) -> tuple:
        prog = ctypes.c_void_p()
        self.check(
            self.lib.nvrtcCreateProgram(ctypes.byref(prog), code.encode(), name.encode(), 0, None, None),
            "nvrtcCreateProgram",
        )
        try:
            for n in names:
                self.check(self.lib.nvrtcAddNameExpression(prog, n.encode()), f"nvrtcAddNameExpression({n})")
            opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
            status = self.lib.nvrtcCompileProgram(prog, len(options), opts)
            size = ctypes.c_size_t()
            self.lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
            log = ctypes.create_string_buffer(size.value)
            self.lib.nvrtcGetProgramLog(prog, log)
            cubin = 0
            if status == 0:
                csize = ctypes.c_size_t()
                self.check(self.lib.nvrtcGetCUBINSize(prog, ctypes.byref(csize)), "nvrtcGetCUBINSize")
                cubin = csize.value
            return status == 0, log.value.decode(errors="replace"), cubin
        finally:
            self.lib.nvrtcDestroyProgram(ctypes.byref(prog))


def compile_all(architectures=ARCHITECTURES, nvrtc_path: str | None = None, progress=None, sources=None) -> list:
    """Compile every source (or those named in ``sources``) for every architecture; returns a
    CompileResult per (source, arch)."""
    path = nvrtc_path or find_nvrtc()
    if path is None:
        raise RuntimeError('NVRTC was not found: pip install nvidia-cuda-nvrtc (in opforge\'s "test" extra)')
    nvrtc = _Nvrtc(path)
    results = []
    for source, names in kernel_names_by_source().items():
        if sources is not None and source not in sources:
            continue
        code = source_path(source).read_text()
        include = [f"-I{d}" for d in include_dirs(source)]
        for arch in architectures:
            if progress is not None:
                progress(f"compiling {source} for {arch} ({len(names)} kernels)")
            options = [*COMPILE_OPTIONS, f"--gpu-architecture={arch}", *include]
            ok, log, size = nvrtc.compile(source, code, options, names)
            results.append(CompileResult(source, arch, names, ok, log, size))
    return results
