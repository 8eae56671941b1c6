"""OpenMP threads on a shared machine: opforge's workers spin briefly (GOMP_SPINCOUNT=1000), then sleep,
so a 2-thread call with another process on one of 2 cores costs about its 1-thread time instead of
20-200x (measured by ``opforge bench --suite load``). The tests check the configuration libgomp
reports, not times."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SCRIPT = (
    "import opforge; from opforge import ops; opforge.set_context(num_threads=2); ops.Add()(opforge.Tensor([1.0]), 1.0)"
)


def _libgomp_settings(**env_overrides) -> str:
    """What libgomp prints of its settings (OMP_DISPLAY_ENV) in a fresh process importing opforge."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env.update(OMP_DISPLAY_ENV="VERBOSE", **env_overrides)
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stderr + done.stdout


def test_workers_spin_briefly_then_sleep_by_default():
    settings = _libgomp_settings()
    assert "GOMP_SPINCOUNT = '1000'" in settings
    assert "OMP_WAIT_POLICY = 'PASSIVE'" in settings


@pytest.mark.parametrize(
    ("var", "value", "expected"),
    [
        ("OMP_WAIT_POLICY", "ACTIVE", "OMP_WAIT_POLICY = 'ACTIVE'"),
        ("GOMP_SPINCOUNT", "5000", "GOMP_SPINCOUNT = '5000'"),
    ],
)
def test_the_users_setting_wins(var, value, expected):
    assert expected in _libgomp_settings(**{var: value})


def test_load_bench_reports_both_thread_counts():
    from opforge.tools import bench, bench_load

    rows = bench_load.run(bench.measure, bench.threads_limited, use_torch=False, quick=True, log=lambda *_: None)
    assert {(name, lib) for name, lib, _, _ in rows} == {
        ("Add", "opforge"),
        ("Add", "numpy"),
        ("Exp", "opforge"),
        ("Exp", "numpy"),
    }
    assert all(t1 > 0 and t2 > 0 for _, _, t1, t2 in rows)
    assert "2 threads / 1 thread" in bench_load.render(rows)


@pytest.fixture
def two_threads():
    import opforge

    before = opforge.get_context("num_threads")
    opforge.set_context(num_threads=2)
    yield
    opforge.set_context(num_threads=before)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    ("transpose_a", "transpose_b", "m", "k", "n"),
    [
        (False, False, 300, 200, 100),  # taller than wide: the threads split C's rows
        (True, False, 40, 300, 500),  # wider: its columns
        (False, True, 257, 129, 65),  # blocks that do not divide the rows
        (True, True, 33, 150, 600),
        (False, True, 64, 784, 256),  # few rows, many columns: computed as C^T, then transposed
        (False, True, 7, 33, 1000),
    ],
)
@pytest.mark.parametrize("threads", [1, 2])
def test_matmul_on_one_and_two_threads(threads, dtype, transpose_a, transpose_b, m, k, n):
    import numpy as np

    import opforge
    from opforge import ops

    before = opforge.get_context("num_threads")
    opforge.set_context(num_threads=threads)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((k, m) if transpose_a else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if transpose_b else (k, n)).astype(dtype)
    try:
        got = ops.MatMul(transpose_a, transpose_b)(opforge.Tensor(a), opforge.Tensor(b)).asnumpy()
    finally:
        opforge.set_context(num_threads=before)
    want = (a.T if transpose_a else a).astype(np.float64) @ (b.T if transpose_b else b).astype(np.float64)
    tol = 1e-4 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


_CHUNKS_PROBE = r"""
#include "opforge/kernel.h"
#include "opforge/parallel.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

// Every element of [0, n) visited once, whatever chunks the threads claimed.
EXPORT void visit_each(int64_t n, int32_t* hits) {
  opforge::ParallelForChunks(n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) __atomic_add_fetch(&hits[i], 1, __ATOMIC_RELAXED);
  });
}

// How many regions run serially after `late` late regions (an on-time one first: the count starts again;
// and no back-off left by the regions of other tests).
EXPORT int serial_regions_after(int late) {
  opforge::detail::contention().serial.store(0);
  opforge::detail::RecordRegion(2, 1);
  for (int i = 0; i < late; ++i) opforge::detail::RecordRegion(1, 2);
  int serial = 0;
  while (opforge::detail::BackOff()) ++serial;
  return serial;
}

// After a back-off, each late try backs off twice as long.
EXPORT int serial_regions_after_late_tries(int tries) {
  int serial = 0;
  for (int i = 0; i < tries; ++i) {
    opforge::detail::RecordRegion(1, 2);
    serial = 0;
    while (opforge::detail::BackOff()) ++serial;
  }
  return serial;
}
"""


@pytest.fixture(scope="module")
def chunks_probe(tmp_path_factory):
    import ctypes

    from opforge.kernels import registry
    from opforge.utils import cpp_extension

    root = tmp_path_factory.mktemp("chunks")
    (source,) = cpp_extension.write_sources("chunks_probe", [_CHUNKS_PROBE], root)
    library = cpp_extension.build_library("chunks_probe", [source], build_directory=root)
    registry.load_library(library.path)  # binds its ParallelForChunks to set_context(num_threads=...)
    return ctypes.CDLL(str(library.path))


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 1000, 32769])
def test_chunked_regions_visit_each_element_once(two_threads, chunks_probe, n):
    import ctypes

    import numpy as np

    hits = np.zeros(n, np.int32)
    chunks_probe.visit_each(ctypes.c_int64(n), hits.ctypes.data_as(ctypes.c_void_p))
    assert (hits == 1).all()


def test_regions_back_off_to_one_thread_after_two_late_ones_in_a_row(chunks_probe):
    assert chunks_probe.serial_regions_after(1) == 0  # one late region: no back-off
    assert chunks_probe.serial_regions_after(2) == 64  # kSerialRegions, then the threads again
    assert chunks_probe.serial_regions_after_late_tries(1) == 128  # the try was late: twice as long
    assert chunks_probe.serial_regions_after_late_tries(7) == 8192  # up to kMaxSerialRegions
    assert chunks_probe.serial_regions_after(2) == 64  # a region on time started the count again
    assert chunks_probe.serial_regions_after(0) == 0
