"""Run under ``mpiexec -n N``: a loss-scaled training step (``Model(..., loss_scale_manager=
DynamicLossScaleManager(...))``, Pangu-alpha's setup) on a tensor-parallel network in GRAPH_MODE and
SEMI_AUTO_PARALLEL mode, its whole sharded step traced from the second call.

A Megatron-style MLP (column- then row-parallel Dense: the gradients of the split weights are split too, so the
overflow check reads every rank's block). One step's gradients overflow: every rank skips its update and halves
the scale. Checked against one process (stand-alone, PYNATIVE_MODE) step by step: the overflow flags, the scales
and the whole parameters (max relative difference 1e-5). With ``--parallel-optimizer`` the optimizer's states and
updates are split over the ranks too (``enable_parallel_optimizer``). Prints "LOSS-SCALE-OK" or exits 1.

    mpiexec -n 2 python tests/mpi_scripts/loss_scale_graph.py [--parallel-optimizer]
"""

import sys

import numpy as np
from megatron import MLP, whole
from mpi4py import MPI

import opforge
from opforge import Tensor, nn
from opforge.communication import get_group_size, get_rank, init
from opforge.train import DynamicLossScaleManager, Model

init()
rank, size = get_rank(), get_group_size()
IN, HIDDEN, OUT, BATCH, STEPS, OVERFLOW_AT = 4, 4 * size, 3, 8, 6, 2
OPTIMIZER_PARALLEL = "--parallel-optimizer" in sys.argv[1:]


def fail(message: str):
    print(f"LOSS-SCALE-FAIL rank {rank}: {message}", flush=True)
    MPI.COMM_WORLD.Abort(1)


rng = np.random.default_rng(3)
batches = []
for i in range(STEPS):
    x = rng.standard_normal((BATCH, IN)).astype(np.float32)
    if i == OVERFLOW_AT:
        x[0] = 1e22  # the loss (about 1e36) is finite, its scaled gradients are not
    batches.append((x, rng.standard_normal((BATCH, OUT)).astype(np.float32)))


def train(parallel: bool) -> list:
    opforge.reset_auto_parallel_context()
    if parallel:
        opforge.set_context(mode=opforge.GRAPH_MODE)
        opforge.set_auto_parallel_context(
            parallel_mode="semi_auto_parallel",
            device_num=size,
            full_batch=True,
            enable_parallel_optimizer=OPTIMIZER_PARALLEL,
        )
    else:
        opforge.set_context(mode=opforge.PYNATIVE_MODE)
    nn.set_seed(0)
    net = MLP(IN, HIDDEN, OUT, size)
    manager = DynamicLossScaleManager(init_loss_scale=2.0**10, scale_factor=2, scale_window=2)
    step = Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.1, 0.9), loss_scale_manager=manager)
    step = step.train_network
    out = []
    for x, y in batches:
        _, overflow, scale = step(Tensor(x), Tensor(y))
        params = {p.name: whole(p) for p in step.get_parameters()}
        out.append((bool(overflow.asnumpy()), float(scale.asnumpy()), params))
    if parallel and step.__dict__["_jit_sharded"].traced != 1:
        fail(f"the step was traced {step.__dict__['_jit_sharded'].traced} times, expected once")
    opforge.reset_auto_parallel_context()
    opforge.set_context(mode=opforge.PYNATIVE_MODE)
    return out


sharded = train(True)
single = train(False)
if [o for o, _, _ in single] != [i == OVERFLOW_AT for i in range(STEPS)]:
    fail(f"the reference's overflows are {[o for o, _, _ in single]}")
for i, ((o, s, params), (ref_o, ref_s, ref)) in enumerate(zip(sharded, single)):
    if o != ref_o or s != ref_s:
        fail(f"step {i}: overflow {o}, scale {s}; one process: {ref_o}, {ref_s}")
    for name, value in ref.items():
        got = params[name]
        if got.shape != value.shape or np.max(np.abs(got - value)) > 1e-5 * max(float(np.max(np.abs(value))), 1.0):
            fail(f"step {i}: {name} differs from one process's")
if rank == 0:
    print("LOSS-SCALE-OK", flush=True)
