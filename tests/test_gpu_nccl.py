"""Data parallelism on the GPU. NCCL through CuPy on a real GPU (a 1-rank communicator): collectives and
the data-parallel TrainOneStepCell, in a process of their own (``init`` is global); the host emulation
has no NCCL, so without a GPU that test is skipped (``scripts/gpu_check.sh`` runs it on a lent one).
The gradient reducer's device buckets run everywhere."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import numpy as np
import pytest
from conftest import GPU_IS_EMULATED

import opforge
from opforge import Tensor, communication, nn

SCRIPT = pathlib.Path(__file__).parent / "gpu_scripts" / "nccl_one_rank.py"
TENSOR_PARALLEL = pathlib.Path(__file__).parent / "mpi_scripts" / "tensor_parallel.py"


@pytest.mark.skipif(GPU_IS_EMULATED, reason="NCCL needs a real GPU (the host emulation has none)")
def test_nccl_collectives_and_data_parallel_on_one_gpu():
    result = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "NCCL-OK" in result.stdout, result.stdout + result.stderr


@pytest.mark.skipif(GPU_IS_EMULATED, reason="NCCL needs a real GPU (the host emulation has none)")
@pytest.mark.parametrize(
    "args",
    [
        ["--model", "mlp"],
        ["--model", "mlp", "--graph"],
        ["--model", "encoder", "--optimizer", "adam"],
        ["--model", "embedding"],
        ["--model", "seqpar"],
        ["--model", "batch", "--graph"],
    ],
    ids=" ".join,
)
def test_sharding_rules_on_nccl_with_one_rank(args):
    """The sharding rules (Primitive.shard) on the GPU, their collectives on a 1-rank NCCL communicator:
    the tensor-parallel script of the MPI tests, equal to one process."""
    command = [sys.executable, str(TENSOR_PARALLEL), "--device", "GPU", *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "TP-OK" in result.stdout, result.stdout + result.stderr


def test_data_parallel_reducer_buckets_live_on_the_gpu():
    """The reducer's GPU path (device buckets, the mean after the reduction), without NCCL: a world of
    one rank sends nothing, and degree 2 makes the mean halve every gradient."""
    communication.init()
    params = [opforge.Parameter(Tensor(np.ones(s, t), device="GPU"), name=f"p{i}")
              for i, (s, t) in enumerate([((3, 4), np.float32), ((5,), np.float16), ((2, 2), np.float32)])]  # fmt: skip
    reducer = nn.DistributedGradReducer(params, mean=True, degree=2, bucket_cap_mb=1e-5)  # a bucket per few
    assert reducer.group_size == 1 and reducer.collectives_per_step == 0
    grads = [Tensor(np.arange(np.prod(p.shape), dtype=p.dtype.np_dtype).reshape(p.shape), device="GPU")
             for p in params]  # fmt: skip
    for _ in range(2):  # the buckets are reused
        out = reducer(grads)
        for g, o, p in zip(grads, out, params):
            assert o.device == "GPU" and o.dtype == p.dtype and o.shape == p.shape
            np.testing.assert_array_equal(o.asnumpy(), g.asnumpy() / 2)
