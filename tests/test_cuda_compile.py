"""Every CUDA kernel compiles for sm_80 and sm_90, without a GPU: NVRTC, as CuPy runs it on a GPU,
with every template instantiation registered for each source (tools/cuda_check.py)."""

from __future__ import annotations

import pytest

from opforge import sysconfig
from opforge.kernels.gpu.cuda import source_path
from opforge.tools import cuda_check

SOURCES = {s: n for s, n in cuda_check.kernel_names_by_source().items() if not s.startswith("/")}


def test_every_registered_cuda_kernel_has_a_source():
    for source in SOURCES:
        assert source_path(source).is_file(), source


@pytest.mark.parametrize("arch", cuda_check.ARCHITECTURES)
def test_cuda_sources_compile(arch):
    assert cuda_check.find_nvrtc() is not None, "NVRTC is missing: the test extra installs nvidia-cuda-nvrtc"
    results = cuda_check.compile_all(architectures=(arch,), sources=set(SOURCES))  # opforge's own
    assert {r.source for r in results} == set(SOURCES)
    failed = [f"{r.source} ({r.arch}):\n{r.log}" for r in results if not r.ok]
    assert not failed, "\n\n".join(failed)
    assert all(r.cubin_bytes > 0 for r in results)
    # no kernel spills registers to local memory (ptxas -v): the launch bounds and row shapes must fit
    spilled = [
        f"{r.source} ({r.arch}): {kernel} stores {st} B, loads {ld} B" for r in results for kernel, st, ld in r.spills
    ]
    assert not spilled, "\n".join(spilled)


def test_spills_are_read_from_the_ptxas_report():
    log = (
        "ptxas info    : Function properties for _Z1fPf\n"
        "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Function properties for _Z1gPf\n"
        "ptxas         .     24 bytes stack frame, 18 bytes spill stores, 20 bytes spill loads\n"
    )
    assert cuda_check.spills_in(log) == (("_Z1gPf", 18, 20),)


def test_compile_errors_reach_the_user(tmp_path):
    """A kernel that does not compile gives NVRTC's log, naming the file and line."""
    bad = tmp_path / "broken.cu"
    bad.write_text('#include "opforge/cuda.h"\n__global__ void Broken(float* x) { x[0] = undeclared_name; }\n')
    nvrtc = cuda_check._Nvrtc(cuda_check.find_nvrtc())
    ok, log, _ = nvrtc.compile(
        "broken.cu",
        bad.read_text(),
        ["--gpu-architecture=sm_80", f"-I{sysconfig.get_include()}"],
        ("Broken",),
    )
    assert not ok and "undeclared_name" in log and "broken.cu" in log


def test_a_compile_is_cached_by_the_content_it_depends_on(tmp_path, monkeypatch):
    """A source compiled once is not compiled again while its code, headers, options and NVRTC are
    the same; a change to the code compiles it again."""
    monkeypatch.setenv("OPFORGE_NVRTC_CACHE_DIR", str(tmp_path))
    source = min(SOURCES, key=lambda s: source_path(s).stat().st_size)
    first = cuda_check.compile_all(architectures=("sm_80",), sources={source})
    again = cuda_check.compile_all(architectures=("sm_80",), sources={source})
    assert [r.cached for r in first] == [False] and [r.cached for r in again] == [True]
    assert again[0].ok and again[0].cubin_bytes == first[0].cubin_bytes and again[0].names == first[0].names
    assert len(list(tmp_path.glob("*.json"))) == 1
    fresh = cuda_check.compile_all(architectures=("sm_80",), sources={source}, cache=False)
    assert [r.cached for r in fresh] == [False]
    code, names, dirs = source_path(source).read_text(), SOURCES[source], cuda_check.include_dirs(source)
    key = cuda_check._cache_key("13.0", source, code, ["-a"], names, dirs)
    assert key != cuda_check._cache_key("13.0", source, code + " ", ["-a"], names, dirs)
    assert key != cuda_check._cache_key("13.1", source, code, ["-a"], names, dirs)
    assert key != cuda_check._cache_key("13.0", source, code, ["-b"], names, dirs)
