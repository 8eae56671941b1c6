"""AllReduce against raw mpi4py, per call, on the same buffers: run under ``mpiexec -n 2 python -m
opforge.tools.bench_comm``. Rank 0 prints one row per size: mpi4py's ``Allreduce`` (blocking, into a
preallocated output), opforge's ``ops.AllReduce`` with and without the header check
(``OPFORGE_COMM_CHECK``), and the difference in microseconds."""

from __future__ import annotations

import sys
import time

import numpy as np


def _time(fns, comm, repeat: int, rounds: int = 9) -> list:
    """For each function, the best over ``rounds`` of the mean time per call. The functions take turns
    within each round (their rounds start together on every rank), so a busy spell of the machine
    hits all of them alike; the best round is the one the other processes disturbed least."""
    for fn in fns:
        fn()
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            comm.Barrier()
            start = time.perf_counter()
            for _ in range(repeat):
                fn()
            best[i] = min(best[i], (time.perf_counter() - start) / repeat)
    return best


def _set_check(world, on: bool) -> None:
    from opforge.communication import management, mpi

    world.check = on
    if management._state.get("native"):
        mpi.native_set_group("world", management.GlobalComm.WORLD_COMM_GROUP, world)


def _row(nbytes: int, comm, world, ops, Tensor) -> tuple:  # noqa: N803
    x = np.random.default_rng(comm.Get_rank()).standard_normal(nbytes // 4).astype(np.float32)
    out = np.empty_like(x)
    repeat = max(3, min(2000, (4 << 20) // max(nbytes, 1)))
    xt, allreduce = Tensor(x), ops.AllReduce()
    t_mpi, t_mpi_alloc, t_ops = _time(
        [lambda: comm.Allreduce(x, out), lambda: comm.Allreduce(x, np.empty_like(x)), lambda: allreduce(xt)],
        comm,
        repeat,
    )
    _set_check(world, False)
    (t_nocheck,) = _time([lambda: allreduce(xt)], comm, repeat)
    _set_check(world, True)
    return nbytes, t_mpi, t_mpi_alloc, t_ops, t_nocheck


def main(sizes=(4 << 10, 1 << 20, 64 << 20)) -> int:
    from mpi4py import MPI

    from opforge import Tensor, communication, ops

    communication.init()
    comm = MPI.COMM_WORLD
    world = communication.management._state["device"].communicator("world")
    rows = [_row(nbytes, comm, world, ops, Tensor) for nbytes in sizes]
    if comm.Get_rank() == 0:
        print(f"AllReduce float32 on {comm.Get_size()} ranks (us per call; best of 9 interleaved rounds)")
        head = ("bytes", "mpi4py", "mpi4py+alloc", "opforge", "no check", "diff", "ratio")
        print("{:>10} {:>10} {:>13} {:>10} {:>10} {:>8} {:>6}".format(*head))
        for nbytes, a, b, c, d in rows:
            print(
                f"{nbytes:>10} {a * 1e6:>10.2f} {b * 1e6:>13.2f} {c * 1e6:>10.2f} {d * 1e6:>10.2f} "
                f"{(c - a) * 1e6:>8.2f} {c / a:>6.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
