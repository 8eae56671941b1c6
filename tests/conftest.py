"""Shared fixtures: a NumPy generator seeded by the test's id; registries restored after a test.

The GPU: a real one when CuPy finds one, else the host emulation of opforge's CUDA sources
(tests/emulation/), registered as the GPU device for the whole run, so every GPU kernel runs.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from emulation.runtime import EmulatedRuntime

import opforge
from opforge import communication
from opforge.device import get_device, use_runtime
from opforge.kernels import registry as kernel_registry
from opforge.op_info import registry as op_info_registry


def _gpu_device():
    try:
        return get_device("GPU")  # CuPy and a GPU
    except RuntimeError:
        return use_runtime(EmulatedRuntime())


GPU = _gpu_device()
GPU_IS_EMULATED = isinstance(GPU.runtime, EmulatedRuntime)


def pytest_report_header(config):
    return f"GPU: {'host emulation of the CUDA sources' if GPU_IS_EMULATED else GPU.runtime.device_name}"


@pytest.fixture
def rng(request) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


@pytest.fixture
def isolated_registries():
    """Kernels and op infos a test registers are removed after it (and the caches built on them)."""
    kernels, infos = kernel_registry.snapshot(), op_info_registry.snapshot()
    yield
    kernel_registry.restore(kernels)
    op_info_registry.restore(infos)


@pytest.fixture
def one_rank_parallel():
    """A world of one rank in this process, the auto-parallel context reset before and after, and the
    execution mode back to PYNATIVE_MODE after: for tests that set parallel modes."""
    communication.init()
    opforge.reset_auto_parallel_context()
    yield
    opforge.reset_auto_parallel_context()
    opforge.set_context(mode=opforge.PYNATIVE_MODE)
