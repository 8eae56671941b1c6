"""Shared fixtures: a NumPy generator seeded by the test's id; registries restored after a test."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from opforge.kernels import registry as kernel_registry
from opforge.op_info import registry as op_info_registry


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
