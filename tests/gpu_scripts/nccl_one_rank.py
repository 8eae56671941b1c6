"""NCCL on a 1-rank communicator, on a real GPU: every collective primitive through CuPy's NCCL for each
dtype NCCL carries (and the ones opforge widens or splits for it), then the data-parallel
TrainOneStepCell on the GPU, which must equal the stand-alone one. Prints NCCL-OK at the end.

Run in a process of its own (tests/test_gpu_nccl.py): ``init`` is global state.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

import opforge
from opforge import Tensor, communication, nn, ops
from opforge.context import ParallelMode

opforge.set_context(device_target="GPU")
communication.init()  # the GPU's default: NCCL, bootstrapped over a 1-rank MPI world
assert communication.GlobalComm.BACKEND == "nccl", communication.GlobalComm.BACKEND
assert communication.get_rank() == 0 and communication.get_group_size() == 1

rng = np.random.default_rng(0)
DTYPES = [np.float32, np.float16, np.float64, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.int64,
          ml_dtypes.bfloat16, np.complex64]  # fmt: skip


def check(name, got: Tensor, want: np.ndarray) -> None:
    assert got.device == "GPU", f"{name}: the result is on {got.device}"
    got = got.asnumpy()
    assert got.dtype == want.dtype and got.shape == want.shape, (name, got.dtype, got.shape, want.shape)
    np.testing.assert_array_equal(got, want, err_msg=name)


for dtype in DTYPES:
    host = (rng.normal(size=(4, 6)) * 10).astype(dtype)
    x = Tensor(host, device="GPU")
    reducers = ["sum"] if np.dtype(dtype).kind == "c" else ["sum", "max", "min", "prod"]
    for op in reducers:
        check(f"AllReduce {op} {np.dtype(dtype)}", ops.AllReduce(op)(x), host)
        check(f"ReduceScatter {op} {np.dtype(dtype)}", ops.ReduceScatter(op)(x), host)
    check(f"AllGather {np.dtype(dtype)}", ops.AllGather()(x), host)
    check(f"Broadcast {np.dtype(dtype)}", ops.Broadcast(0)((x,))[0], host)
    check(f"AlltoAll {np.dtype(dtype)}", ops.AlltoAll(1, 0, 0)(x), host)
print("collectives: every dtype, every reducer")


def train(mode) -> list:
    opforge.set_auto_parallel_context(parallel_mode=mode, gradients_mean=True)
    opforge.set_seed(1)
    net = nn.SequentialCell(nn.Dense(8, 16), nn.ReLU(), nn.Dense(16, 3))
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.Momentum(net.trainable_params(), 0.1, 0.9))
    assert (step.grad_reducer is not None) == (mode == ParallelMode.DATA_PARALLEL)
    x = Tensor(np.random.default_rng(2).normal(size=(6, 8)).astype(np.float32), device="GPU")
    y = Tensor(np.array([0, 1, 2, 0, 1, 2], np.int32), device="GPU")
    for _ in range(3):
        step(x, y)
    params = net.trainable_params()
    assert all(p.device == "GPU" for p in params), [p.device for p in params]
    return [p.asnumpy() for p in params]


stand_alone = train(ParallelMode.STAND_ALONE)
data_parallel = train(ParallelMode.DATA_PARALLEL)
for a, b in zip(stand_alone, data_parallel):
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
opforge.reset_auto_parallel_context()
print("data-parallel TrainOneStepCell on the GPU equals stand-alone")
communication.release()
print("NCCL-OK")
