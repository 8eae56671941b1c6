"""Step times of optimizer parallel, a pipeline and searched layouts, PYNATIVE_MODE against GRAPH_MODE, on 2 MPI ranks.

    mpiexec -n 2 python benchmarks/bench_graph_parallel.py [--rounds 9] [--steps 20]
    opforge run -n 2 benchmarks/bench_graph_parallel.py

Cases (docs/parallel.md):

- ``zero-mlp``: DATA_PARALLEL with ``enable_parallel_optimizer`` (ZeRO stage 1), Adam, an MLP
  784 -> 256 -> ReLU -> 10 on 64 rows per rank;
- ``zero-small``: the same on the docs' MLP 16 -> 32 -> ReLU -> 8, 16 rows per rank (the step's Python
  dominates);
- ``pipeline``: a 2-stage pipeline (SEMI_AUTO_PARALLEL, ``pipeline_stages=2``), 10 -> 16 -> 16 -> 4 on 16
  rows in 4 micro-batches, Momentum;
- ``search-wide`` / ``dp-wide``: an MLP 256 -> 4096 -> ReLU -> 16 on 16 rows, Momentum, laid out by
  AUTO_PARALLEL's strategy search (it splits the weights: column- then row-parallel) or data parallel;
- ``search-tall`` / ``dp-tall``: an MLP 64 -> 64 -> ReLU -> 16 on 4096 rows (the search splits the batch).

Eagerly every step runs the Python of the network, the tape, the sharding interpreter and the schedule;
in GRAPH_MODE the first step runs eagerly, the second is traced, and the later ones replay the trace. The
two modes are timed interleaved (each round times ``--steps`` steps of each, every rank in step: a barrier
before and after), so a busy machine slows both alike; the table gives the median over the rounds of the
slower rank's time per step, and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from mpi4py import MPI  # noqa: E402

import opforge  # noqa: E402
from opforge import nn  # noqa: E402
from opforge.communication import get_group_size, get_rank, init  # noqa: E402


def _zero_step(sizes, rows: int, rank: int):
    opforge.set_auto_parallel_context(
        parallel_mode="data_parallel", gradients_mean=True, enable_parallel_optimizer=True
    )
    nn.set_seed(0)
    layers = [nn.Dense(a, b, activation="relu" if i < len(sizes) - 2 else None) for i, (a, b) in
              enumerate(zip(sizes, sizes[1:]))]  # fmt: skip
    net = nn.SequentialCell(layers)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.Adam(net.trainable_params(), 0.001))
    rng = np.random.default_rng(rank)
    x = opforge.Tensor(rng.standard_normal((rows, sizes[0])).astype(np.float32))
    y = opforge.Tensor(rng.integers(0, sizes[-1], rows).astype(np.int32))
    return lambda: step(x, y)


def _pipeline_step(rank: int):
    opforge.set_auto_parallel_context(parallel_mode="semi_auto_parallel", pipeline_stages=2, full_batch=True)
    nn.set_seed(0)
    fc1, fc2, fc3 = nn.Dense(10, 16, activation="tanh"), nn.Dense(16, 16, activation="relu"), nn.Dense(16, 4)
    fc1.pipeline_stage, fc2.pipeline_stage, fc3.pipeline_stage = 0, 1, 1
    net = nn.SequentialCell(fc1, fc2, fc3)
    loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    step = nn.TrainOneStepCell(nn.PipelineCell(loss, 4), nn.Momentum(net.trainable_params(), 0.01, 0.9))
    rng = np.random.default_rng(0)
    x = opforge.Tensor(rng.standard_normal((16, 10)).astype(np.float32))
    y = opforge.Tensor(rng.integers(0, 4, 16).astype(np.int32))
    return lambda: step(x, y)


def _mlp_step(sizes, batch: int, mode: str, rank: int):
    """An MLP (sizes[0] -> sizes[1] -> ReLU -> sizes[2]) on a global batch: AUTO_PARALLEL's strategy search
    (``search``; every rank given the whole batch, ``full_batch``) or DATA_PARALLEL (``dp``; half each)."""
    if mode == "search":
        opforge.set_auto_parallel_context(parallel_mode="auto_parallel", search_mode="dynamic_programming",
                                          full_batch=True)  # fmt: skip
    else:
        opforge.set_auto_parallel_context(parallel_mode="data_parallel", gradients_mean=True)
    nn.set_seed(0)
    net = nn.SequentialCell(nn.Dense(sizes[0], sizes[1], activation="relu"), nn.Dense(sizes[1], sizes[2]))
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.Momentum(net.trainable_params(), 0.01, 0.9))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = rng.integers(0, sizes[-1], batch).astype(np.int32)
    if mode == "dp":
        x, y = x[rank * batch // 2 : (rank + 1) * batch // 2], y[rank * batch // 2 : (rank + 1) * batch // 2]
    x, y = opforge.Tensor(x), opforge.Tensor(y)
    return lambda: step(x, y)


WIDE, TALL = ((256, 4096, 16), 16), ((64, 64, 16), 4096)
CASES = {
    "zero-mlp": lambda rank: _zero_step((784, 256, 10), 64, rank),
    "zero-small": lambda rank: _zero_step((16, 32, 8), 16, rank),
    "pipeline": _pipeline_step,
    "search-wide": lambda rank: _mlp_step(*WIDE, "search", rank),
    "dp-wide": lambda rank: _mlp_step(*WIDE, "dp", rank),
    "search-tall": lambda rank: _mlp_step(*TALL, "search", rank),
    "dp-tall": lambda rank: _mlp_step(*TALL, "dp", rank),
}
MODES = (("eager", opforge.PYNATIVE_MODE), ("graph", opforge.GRAPH_MODE))


def _time(comm, step, steps: int) -> float:
    comm.Barrier()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    comm.Barrier()
    return comm.allreduce((time.perf_counter() - start) / steps, op=MPI.MAX)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--case", action="append", choices=list(CASES))
    args = parser.parse_args()
    init()
    comm, rank = MPI.COMM_WORLD, get_rank()
    if get_group_size() != 2:
        print("run it on 2 ranks: mpiexec -n 2 python benchmarks/bench_graph_parallel.py", file=sys.stderr)
        return 2
    rows = []
    for name in args.case or CASES:
        steps = {}
        for label, mode in MODES:
            opforge.set_context(mode=mode)
            steps[label] = CASES[name](rank)
            for _ in range(3):  # eager: warm; graph: the eager first step, the trace, a replay
                steps[label]()
        times = {label: [] for label, _ in MODES}
        for _ in range(args.rounds):
            for label, mode in MODES:
                opforge.set_context(mode=mode)
                times[label].append(_time(comm, steps[label], args.steps))
        opforge.reset_auto_parallel_context()
        opforge.set_context(mode=opforge.PYNATIVE_MODE)
        med = {label: statistics.median(t) for label, t in times.items()}
        rows.append((name, med["eager"], med["graph"], min(times["eager"]), min(times["graph"])))
    if rank == 0:
        print(f"{'case':<12} {'eager ms':>9} {'graph ms':>9} {'eager/graph':>12}   (best: eager, graph ms)")
        for name, eager, graph, best_e, best_g in rows:
            print(f"{name:<12} {eager * 1e3:9.3f} {graph * 1e3:9.3f} {eager / graph:11.2f}x   "
                  f"({best_e * 1e3:.3f}, {best_g * 1e3:.3f})")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
