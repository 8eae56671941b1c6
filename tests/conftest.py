"""Shared fixtures: a NumPy generator seeded by the test's id, so every case is reproducible."""

from __future__ import annotations

import zlib

import numpy as np
import pytest


@pytest.fixture
def rng(request) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
