"""NCCL through CuPy on a real GPU (a 1-rank communicator): collectives and the data-parallel
TrainOneStepCell, in a process of their own (``init`` is global). The host emulation has no NCCL, so
without a GPU this is skipped; ``scripts/gpu_check.sh`` runs it on a lent one."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

from conftest import GPU_IS_EMULATED

SCRIPT = pathlib.Path(__file__).parent / "gpu_scripts" / "nccl_one_rank.py"


@pytest.mark.skipif(GPU_IS_EMULATED, reason="NCCL needs a real GPU (the host emulation has none)")
def test_nccl_collectives_and_data_parallel_on_one_gpu():
    result = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "NCCL-OK" in result.stdout, result.stdout + result.stderr
