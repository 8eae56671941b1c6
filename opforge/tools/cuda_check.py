"""Compile every CUDA kernel of opforge without a GPU, as CuPy will on one: NVRTC (the
``nvidia-cuda-nvrtc`` wheel, or the CUDA toolkit's), each source with the template instantiations
registered for it (NVRTC name expressions), for each target architecture (default sm_80 and sm_90).

Used by the tests and by ``opforge doctor --cuda``; a syntax or type error in a kernel fails them,
with the compiler's log. A successful compile is remembered in a cache keyed by everything that decides
its result (the source, every header it may include, the instantiations, the options and NVRTC's
version), so a source that did not change is not compiled again: ``$OPFORGE_NVRTC_CACHE_DIR``, else
``$XDG_CACHE_HOME/opforge/nvrtc`` (``~/.cache/...``); ``cache=False`` compiles everything.

ptxas reports each kernel's registers and any spills to local memory (``-v``): without a GPU to time them,
a kernel that spills is the clearest sign of one that will run slower than it should, so the results keep
the spills (``CompileResult.spills``) and the tests require none.
"""

from __future__ import annotations

import ctypes
import glob
import hashlib
import json
import os
import pathlib
import re
import tempfile
from dataclasses import asdict, dataclass

from opforge.kernels import registry
from opforge.kernels.gpu.cuda import COMPILE_OPTIONS, _headers_digest, device_kernel_names, include_dirs, source_path

__all__ = [
    "ARCHITECTURES",
    "CompileResult",
    "find_nvrtc",
    "kernel_names_by_source",
    "compile_all",
    "cache_dir",
    "spills_in",
]

ARCHITECTURES = ("sm_80", "sm_90")
NVRTC_MISSING = 'NVRTC was not found: pip install nvidia-cuda-nvrtc (in opforge\'s "test" extra)'


@dataclass
class CompileResult:
    source: str
    arch: str
    names: tuple
    ok: bool
    log: str
    cubin_bytes: int = 0
    cached: bool = False  # True when the result came from the cache, not from NVRTC
    spills: tuple = ()  # (mangled kernel name, bytes stored, bytes loaded) of each kernel that spills


_PTXAS_OPTIONS = "--ptxas-options=-v"  # the register and spill report, in the program log
_KERNEL = re.compile(r"Function properties for (\S+)")
_SPILLS = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")


def spills_in(log: str) -> tuple:
    """(kernel, bytes stored, bytes loaded) for each kernel of a ptxas ``-v`` report that spills."""
    found, kernel = [], None
    for line in log.splitlines():
        if m := _KERNEL.search(line):
            kernel = m.group(1)
        elif (m := _SPILLS.search(line)) and kernel and (int(m.group(1)) or int(m.group(2))):
            found.append((kernel, int(m.group(1)), int(m.group(2))))
    return tuple(found)


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

    def version(self) -> str:
        major, minor = ctypes.c_int(), ctypes.c_int()
        self.check(self.lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
        return f"{major.value}.{minor.value}"

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


def cache_dir() -> pathlib.Path:
    """``$OPFORGE_NVRTC_CACHE_DIR``, else ``$XDG_CACHE_HOME/opforge/nvrtc`` (``~/.cache/opforge/nvrtc``)."""
    env = os.environ.get("OPFORGE_NVRTC_CACHE_DIR")
    if env:
        return pathlib.Path(env)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(cache) / "opforge" / "nvrtc"


def _cache_key(nvrtc_version: str, source: str, code: str, options: list, names: tuple, dirs: tuple) -> str:
    h = hashlib.sha256()
    for part in (nvrtc_version, source, code, "\0".join(options), "\0".join(names), _headers_digest(dirs)):
        h.update(part.encode())
        h.update(b"\1")
    return h.hexdigest()


def _cached(key: str):
    try:
        return json.loads((cache_dir() / f"{key}.json").read_text())
    except (OSError, ValueError):  # absent, or torn by a crash: compile again
        return None


def _remember(key: str, result: CompileResult) -> None:
    """Write the record atomically (a rename), so parallel test workers never read half of one."""
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(asdict(result), f)
        os.replace(tmp, folder / f"{key}.json")
    except OSError:  # a read-only home: the check still ran, it is only not remembered
        pass


def compile_all(
    architectures=ARCHITECTURES, nvrtc_path: str | None = None, progress=None, sources=None, cache: bool = True
) -> list:
    """Compile every source (or those named in ``sources``) for every architecture; returns a
    CompileResult per (source, arch). With ``cache``, a compile that succeeded before with the same
    inputs is not repeated (its result has ``cached=True``); failures are always compiled again."""
    path = nvrtc_path or find_nvrtc()
    if path is None:
        raise RuntimeError(NVRTC_MISSING)
    nvrtc = _Nvrtc(path)
    version = nvrtc.version()
    results = []
    for source, names in kernel_names_by_source().items():
        if sources is not None and source not in sources:
            continue
        code = source_path(source).read_text()
        dirs = include_dirs(source)
        include = [f"-I{d}" for d in dirs]
        for arch in architectures:
            options = [*COMPILE_OPTIONS, f"--gpu-architecture={arch}", _PTXAS_OPTIONS, *include]
            key = _cache_key(version, source, code, options, names, dirs)
            record = _cached(key) if cache else None
            if record is not None and record.get("ok"):
                spills = tuple(tuple(s) for s in record.get("spills", ()))
                results.append(CompileResult(**dict(record, names=tuple(record["names"]), spills=spills, cached=True)))
                continue
            if progress is not None:
                progress(f"compiling {source} for {arch} ({len(names)} kernels)")
            ok, log, size = nvrtc.compile(source, code, options, names)
            results.append(CompileResult(source, arch, names, ok, log, size, spills=spills_in(log)))
            if ok and cache:
                _remember(key, results[-1])
    return results
