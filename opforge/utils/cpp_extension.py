"""Compile C++ kernel libraries on the fly and register their kernels (PyTorch's
``torch.utils.cpp_extension.load``, PaddlePaddle's ``load``).

A source that includes ``opforge/kernel.h`` and registers kernels with ``MS_REG_CPU_KERNEL`` is
compiled into a shared library and loaded with ``opforge.kernels.load_library``: its kernels are then
selected exactly like the built-in ones (a later registration for the same KernelAttr replaces an
earlier one, with a warning). ``build_library`` stops before the registration and returns the
library's path, through the same cache (``ops.Custom`` compiles aot sources with it).

The build cache cannot go stale or hang:

* An entry is found by a key over the sources' contents, the flags, the compiler (its path, size
  and modification time) and the kernel ABI version; its manifest records every header the
  compiler read (``-MMD``) with a digest, and a changed header rebuilds it.
* A build runs in a private folder and is published atomically (the library under a name of its
  own digest, then the manifest by ``os.replace``): no process ever loads a half-written library.
* Builds of one entry are serialised by an OS file lock (``fcntl.flock``), which the kernel releases
  when a process dies: a build killed midway never blocks a later one, and several processes loading
  one extension build it once.
* A failed build publishes nothing: fixing the source and loading again rebuilds. The exception
  (``opforge.errors.CompileError``) carries the command and the compiler's messages.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pathlib
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import NamedTuple

from setuptools import Extension as SetuptoolsExtension
from setuptools.command.build_ext import build_ext

from opforge import _C, sysconfig
from opforge.errors import CompileError
from opforge.kernels import registry

__all__ = [
    "Extension",
    "Library",
    "build_library",
    "load",
    "load_inline",
    "default_build_root",
    "compile_flags",
    "CppExtension",
    "BuildExtension",
    "load_extension_module",
]


@dataclass(frozen=True)
class Extension:
    """A loaded kernel library: its name, its file and the kernels it registered."""

    name: str
    path: pathlib.Path
    kernels: tuple
    built: bool  # False when the library came from the cache


def default_build_root() -> pathlib.Path:
    """``$OPFORGE_EXTENSIONS_DIR``, else ``$XDG_CACHE_HOME/opforge/extensions`` (``~/.cache/...``)."""
    env = os.environ.get("OPFORGE_EXTENSIONS_DIR")
    if env:
        return pathlib.Path(env)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(cache) / "opforge" / "extensions"


def compile_flags() -> list:
    """The flags opforge's own kernels are built with, for a user's library (``-I`` included)."""
    return ["-std=c++17", "-O3", "-fPIC", "-fvisibility=hidden", "-fopenmp", f"-I{sysconfig.get_include()}"]


def _compiler() -> str:
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        raise CompileError("No C++ compiler found: install g++ or set CXX.")
    return shutil.which(cxx) or cxx


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _check_name(name) -> None:
    if not isinstance(name, str) or not name or not all(c.isalnum() or c in "_-." for c in name):
        raise ValueError(
            f"For 'load', the 'name' must be a non-empty str of letters, digits, '_', '-', '.', but got {name!r}."
        )


def _entry_key(name: str, sources: list, cflags: list, ldflags: list, compiler: str) -> str:
    st = os.stat(compiler)
    h = hashlib.sha256()
    for part in (
        name,
        compiler,
        str(st.st_size),
        str(st.st_mtime_ns),
        str(_C.KERNEL_ABI_VERSION),
        *cflags,
        "|",
        *ldflags,
    ):
        h.update(part.encode() + b"\0")
    for src in sources:
        h.update(src.name.encode() + b"\0" + src.read_bytes() + b"\0")
    return h.hexdigest()[:20]


def _headers_current(manifest: dict) -> bool:
    for path, digest in manifest["headers"].items():
        try:
            if _sha256(pathlib.Path(path).read_bytes()) != digest:
                return False
        except OSError:
            return False
    return True


def _published(entry: pathlib.Path):
    """The library of a published, current entry, or None."""
    try:
        manifest = json.loads((entry / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    library = entry / manifest["library"]
    return library if library.exists() and _headers_current(manifest) else None


def _dependencies(build: pathlib.Path, sources: list) -> dict:
    """{header: digest} for every non-system header the compiler read (from its -MMD files)."""
    headers = set()
    for dep in build.glob("*.d"):
        text = dep.read_text().replace("\\\n", " ")
        for line in text.splitlines():
            _, _, deps = line.partition(":")
            headers.update(shlex.split(deps))
    sources_abs = {str(s) for s in sources}
    return {
        str(pathlib.Path(build, h).resolve()): _sha256(pathlib.Path(build, h).read_bytes())
        for h in sorted(headers)
        if str(pathlib.Path(build, h).resolve()) not in sources_abs
    }


def _build(name: str, entry: pathlib.Path, sources: list, cflags: list, ldflags: list, compiler: str, verbose: bool):
    entry.mkdir(parents=True, exist_ok=True)
    for stale in entry.glob("build-*"):  # left by a builder that died; we hold the lock, so none is live
        shutil.rmtree(stale, ignore_errors=True)
    build = pathlib.Path(tempfile.mkdtemp(prefix=f"build-{os.getpid()}-", dir=entry))
    try:
        objects = []
        for i, src in enumerate(sources):
            obj = build / f"{i}_{src.stem}.o"
            _run([compiler, *cflags, "-MMD", "-c", str(src), "-o", str(obj)], build, name, verbose)
            objects.append(str(obj))
        tmp_lib = build / f"lib{name}.so"
        _run([compiler, "-shared", "-fopenmp", *objects, *ldflags, "-o", str(tmp_lib)], build, name, verbose)
        headers = _dependencies(build, sources)
        digest = _sha256(tmp_lib.read_bytes())[:16]
        library = f"lib{name}-{digest}.so"  # a new name per content: dlopen never reuses an old handle
        os.replace(tmp_lib, entry / library)
        manifest = build / "manifest.json"
        manifest.write_text(json.dumps({"library": library, "headers": headers}, indent=1))
        os.replace(manifest, entry / "manifest.json")  # published: readers see all of it or nothing
        return entry / library
    finally:
        shutil.rmtree(build, ignore_errors=True)


def _run(cmd: list, cwd: pathlib.Path, name: str, verbose: bool) -> None:
    if verbose:
        print(" ".join(shlex.quote(c) for c in cmd), file=sys.stderr)
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if verbose and result.stderr:
        print(result.stderr, file=sys.stderr, end="")
    if result.returncode != 0:
        output = (result.stdout + result.stderr).strip()
        raise CompileError(
            f"Building extension '{name}' failed (exit status {result.returncode}).\n"
            f"command: {' '.join(shlex.quote(c) for c in cmd)}\n{output}",
            cmd,
            output,
        )


class _FileLock:
    """An exclusive OS lock on a file: released by the kernel if the holder dies."""

    def __init__(self, path: pathlib.Path):
        self.path = path

    def __enter__(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"opforge: waiting for another process building {self.path.stem} ...", file=sys.stderr)
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


class Library(NamedTuple):
    """A shared library built (or found in the cache) by ``build_library``."""

    path: pathlib.Path
    built: bool  # False when it came from the cache


def build_library(
    name: str,
    sources,
    extra_cflags=None,
    extra_ldflags=None,
    extra_include_paths=None,
    build_directory=None,
    verbose: bool = False,
) -> Library:
    """Compile ``sources`` into a shared library, or find it in the cache, without loading it (``load``
    registers its kernels; ``ops.Custom`` calls a function of an aot library)."""
    _check_name(name)
    sources = [pathlib.Path(s).resolve() for s in ([sources] if isinstance(sources, (str, os.PathLike)) else sources)]
    if not sources:
        raise ValueError(f"For 'load', extension '{name}' needs at least one source file.")
    for s in sources:
        if not s.is_file():
            raise FileNotFoundError(f"For 'load', the source '{s}' of extension '{name}' does not exist.")
    includes = [f"-I{pathlib.Path(p).resolve()}" for p in (extra_include_paths or [])]
    cflags = compile_flags() + includes + list(extra_cflags or [])
    ldflags = list(extra_ldflags or [])
    compiler = _compiler()
    root = pathlib.Path(build_directory) if build_directory is not None else default_build_root()
    entry = root / f"{name}-{_entry_key(name, sources, cflags, ldflags, compiler)}"
    library = _published(entry)
    if library is not None:
        return Library(library, False)
    with _FileLock(entry.with_suffix(".lock")):
        library = _published(entry)  # another process may have built it while we waited
        if library is not None:
            return Library(library, False)
        start = time.perf_counter()
        print(f"opforge: compiling extension '{name}' ({len(sources)} sources) ...", file=sys.stderr)
        library = _build(name, entry, sources, cflags, ldflags, compiler, verbose)
        print(f"opforge: built '{name}' in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return Library(library, True)


def load(
    name: str,
    sources,
    extra_cflags=None,
    extra_ldflags=None,
    extra_include_paths=None,
    build_directory=None,
    verbose: bool = False,
) -> Extension:
    """Compile ``sources`` (C++ files using ``opforge/kernel.h``) into a kernel library, or find it
    in the cache, and register its kernels. Returns the ``Extension``."""
    library = build_library(name, sources, extra_cflags, extra_ldflags, extra_include_paths, build_directory, verbose)
    return Extension(name, library.path, tuple(registry.load_library(library.path)), library.built)


def load_inline(
    name: str,
    cpp_sources,
    extra_cflags=None,
    extra_ldflags=None,
    extra_include_paths=None,
    build_directory=None,
    verbose: bool = False,
) -> Extension:
    """``load`` for sources given as strings (one or a list), written into the build folder."""
    _check_name(name)
    texts = [cpp_sources] if isinstance(cpp_sources, str) else list(cpp_sources)
    root = pathlib.Path(build_directory) if build_directory is not None else default_build_root()
    paths = write_sources(name, texts, root)
    return load(name, paths, extra_cflags, extra_ldflags, extra_include_paths, build_directory, verbose)


def write_sources(name: str, texts: list, root) -> list:
    """``texts`` as files ``<root>/inline/<name>-<digest>/<name>_<i>.cc`` (a file is rewritten only when
    its text changed, atomically: a concurrent build sees the old file or the whole new one)."""
    folder = pathlib.Path(root) / "inline" / f"{name}-{_sha256(chr(0).join(texts).encode())[:16]}"
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, text in enumerate(texts):
        path = folder / f"{name}_{i}.cc"
        if not path.exists() or path.read_text() != text:
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(text)
            os.replace(tmp, path)
        paths.append(path)
    return paths


# ---------------------------------------------------------------------------------------------
# Ahead of time, with setuptools


def CppExtension(name: str, sources, *args, **kwargs):  # noqa: N802 - the name users know from PyTorch
    """A ``setuptools.Extension`` for a kernel library: opforge's headers on the include path and its
    flags. Build it with ``cmdclass={"build_ext": BuildExtension}``; load it at run time with
    ``load_extension_module(name)``."""
    include_dirs = [str(sysconfig.get_include()), *kwargs.pop("include_dirs", [])]
    extra_compile_args = [f for f in compile_flags() if not f.startswith("-I")] + kwargs.pop("extra_compile_args", [])
    extra_link_args = ["-fopenmp", *kwargs.pop("extra_link_args", [])]
    return SetuptoolsExtension(
        name,
        list(sources),
        *args,
        include_dirs=include_dirs,
        extra_compile_args=extra_compile_args,
        extra_link_args=extra_link_args,
        language="c++",
        **kwargs,
    )


class BuildExtension(build_ext):
    """setuptools' ``build_ext`` for ``CppExtension``s: a kernel library exports the kernel ABI's
    ``opforge_kernel_defs``, not a Python module init function, so none is required."""

    def get_export_symbols(self, ext):
        return []


def load_extension_module(module_name: str) -> Extension:
    """Register the kernels of a library built ahead of time (``CppExtension``) and installed as
    ``module_name`` (found like a module, not imported)."""
    import importlib.util

    spec = importlib.util.find_spec(module_name)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(f"For 'load_extension_module', no built extension named '{module_name}' was found.")
    path = pathlib.Path(spec.origin)
    return Extension(module_name, path, tuple(registry.load_library(path)), False)
