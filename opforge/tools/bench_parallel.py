"""``opforge bench --suite comm``: collectives and data-parallel training against raw MPI and PyTorch DDP
(``opforge/tools/bench_comm.py``, run under mpiexec by hand, details AllReduce alone).

The command starts its own ``mpiexec -n 2`` jobs (one thread per rank) and prints one table:

- ``AllReduce`` (the primitive, sum, float32) against mpi4py's ``Allreduce`` on the same buffers at
  4 KB, 1 MB and 64 MB: the time difference per call at 4 KB, the ratio at the others.
- A data-parallel training step of an MLP (784 -> 256 -> ReLU -> 10, sparse softmax cross entropy
  (mean), SGD lr 0.01, global batch 128: 64 per rank) with ``TrainOneStepCell`` in DATA_PARALLEL mode,
  against the *floor* this machine allows without overlap: the two half-batch steps running side by
  side with no reduction, plus mpi4py's all-reduce of the same gradients (one fused buffer). All three
  times are printed, with the one-process step on the whole batch for reference, and the half-batch
  steps in lockstep (a barrier after each step, no reduction): the data-parallel step waits for the
  slower rank at every step, which the floor does not, and on a busy machine that wait dominates.
- The same step traced (``jit``, as GRAPH_MODE traces it: an AllReduce operator per gradient, the whole step
  replayed from C++), against its floor: the traced half-batch steps side by side plus the all-reduce.
- The same step tensor-parallel (SEMI_AUTO_PARALLEL, Megatron's split: fc1 column-, fc2 row-parallel; every rank
  on the whole batch, half of each weight), eagerly, against the one-process step on the whole batch.
- The same step in PyTorch DDP (gloo, 2 ranks x 1 thread, same network, weights and batches).
- The number of collectives per step (against the number of parameters).

    opforge bench --suite comm [--quick] [--no-torch] [--markdown FILE]
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid

__all__ = ["run", "render", "main"]

SIZES = (("4 KB", 1024), ("1 MB", 256 * 1024), ("64 MB", 16 * 1024 * 1024))
BATCH, IN, HIDDEN, OUT, LR = 128, 784, 256, 10, 0.01
_MARK = "BENCH-COMM-JSON "


def _timed_together(comm, fns: dict, number: int, repeats: int) -> dict:
    """Seconds per call of each of ``fns`` ({name: callable}): ``repeats`` rounds, each timing a batch of
    ``number`` calls of every function in turn (all ranks in step: a barrier before and after each
    batch), so that a busy machine slows them alike; the best round of each, the slowest rank's."""
    from mpi4py import MPI

    for fn in fns.values():
        fn()
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeats):
        for name, fn in fns.items():
            comm.Barrier()
            start = time.perf_counter()
            for _ in range(number):
                fn()
            comm.Barrier()
            best[name] = min(best[name], (time.perf_counter() - start) / number)
    return {name: comm.allreduce(t, op=MPI.MAX) for name, t in best.items()}


def _calibrate(comm, fn, min_time: float) -> int:
    """Calls per batch so a batch lasts about ``min_time`` (agreed by every rank)."""
    from mpi4py import MPI

    fn()
    start = time.perf_counter()
    fn()
    one = max(time.perf_counter() - start, 1e-7)
    return comm.allreduce(max(1, int(min_time / one)), op=MPI.MIN)


def _data(np):
    rng = np.random.default_rng(0)
    w1 = (rng.standard_normal((HIDDEN, IN)) * 0.05).astype(np.float32)
    b1 = np.zeros(HIDDEN, np.float32)
    w2 = (rng.standard_normal((OUT, HIDDEN)) * 0.05).astype(np.float32)
    b2 = np.zeros(OUT, np.float32)
    x = rng.standard_normal((BATCH, IN)).astype(np.float32)
    y = rng.integers(0, OUT, BATCH).astype(np.int32)
    return (w1, b1, w2, b2), x, y


def _opforge_step(opforge, weights, data_parallel: bool):
    from opforge import nn
    from opforge.context import ParallelMode

    opforge.reset_auto_parallel_context()
    if data_parallel:
        opforge.set_auto_parallel_context(parallel_mode=ParallelMode.DATA_PARALLEL, gradients_mean=True)
    net = nn.SequentialCell(nn.Dense(IN, HIDDEN), nn.ReLU(), nn.Dense(HIDDEN, OUT))
    for p, w in zip(net.trainable_params(), weights):
        p.set_data(opforge.Tensor(w))
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.SGD(net.trainable_params(), learning_rate=LR))
    opforge.reset_auto_parallel_context()
    return net, step


def _tensor_parallel_step(opforge, weights, size: int):
    """The same MLP and step, Megatron's tensor parallelism over the ``size`` ranks (fc1 column-parallel, fc2
    row-parallel), every rank on the whole batch: ``(net, call)``, ``call(x, y)`` one step with the parallel
    context set around it (the other steps of the job run without)."""
    from opforge.context import ParallelMode
    from opforge.tools.demo import shard_dense_pair

    net, step = _opforge_step(opforge, weights, data_parallel=False)
    shard_dense_pair(net[0], net[2], size)

    def call(x, y):
        opforge.set_auto_parallel_context(
            parallel_mode=ParallelMode.SEMI_AUTO_PARALLEL, device_num=size, full_batch=True
        )
        try:
            return step(x, y)
        finally:
            opforge.reset_auto_parallel_context()

    return net, call


def worker(quick: bool, with_torch: bool) -> dict:
    """One rank of the job: every measurement (PyTorch DDP's too, in the same processes, its rounds
    interleaved with opforge's). Returns the results (the same on every rank)."""
    import numpy as np
    from mpi4py import MPI

    import opforge
    from opforge.communication import init

    opforge.set_context(num_threads=1)
    init()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    min_time, repeats = (0.02, 3) if quick else (0.2, 9)
    results: dict = {"ranks": size, "allreduce": [], "quick": quick}

    all_reduce = getattr(opforge.ops, "AllReduce", None)
    for label, n in SIZES[:2] if quick else SIZES:
        x = np.full(n, rank + 1, np.float32)
        recv = np.empty_like(x)
        t = opforge.Tensor(x)

        def raw(x=x, recv=recv):
            comm.Allreduce(x, recv, op=MPI.SUM)

        row = {"size": label, "bytes": x.nbytes}
        number = _calibrate(comm, raw, min_time)
        fns = {"mpi4py": raw}
        if all_reduce is not None:
            prim = all_reduce()
            out = prim(t)
            assert np.all(out.asnumpy() == size * (size + 1) / 2), "AllReduce gave a wrong sum"
            fns["opforge"] = lambda prim=prim, t=t: prim(t)
        row.update(_timed_together(comm, fns, number, repeats))
        results["allreduce"].append(row)

    weights, xs, ys = _data(np)
    per = BATCH // size
    x_local = opforge.Tensor(xs[rank * per : (rank + 1) * per])
    y_local = opforge.Tensor(ys[rank * per : (rank + 1) * per])
    x_all, y_all = opforge.Tensor(xs), opforge.Tensor(ys)

    # The data-parallel step; the check that it trains like one process on the whole batch.
    net, dp_step = _opforge_step(opforge, weights, data_parallel=True)
    reducer = dp_step.grad_reducer
    results["params"] = len(net.trainable_params())
    results["collectives_per_step"] = reducer.collectives_per_step
    results["bucket_bytes"] = reducer.bucket_sizes
    dp_step(x_local, y_local)
    one_net, one_step = _opforge_step(opforge, weights, data_parallel=False)
    one_step(x_all, y_all)
    diff = max(
        float(np.abs(a.asnumpy() - b.asnumpy()).max())
        for a, b in zip(net.trainable_params(), one_net.trainable_params())
    )
    results["dp_vs_one_process_max_diff"] = comm.allreduce(diff, op=MPI.MAX)
    # Tensor parallel: one step, then its whole parameters against one process's after its one step.
    from opforge.dispatch.sharding import gather_whole

    tp_net, tp_step = _tensor_parallel_step(opforge, weights, size)
    tp_step(x_all, y_all)
    diff = max(
        float(np.abs(gather_whole(a).asnumpy() - b.asnumpy()).max())
        for a, b in zip(tp_net.trainable_params(), one_net.trainable_params())
    )
    results["tp_vs_one_process_max_diff"] = comm.allreduce(diff, op=MPI.MAX)
    # The floor: half-batch steps side by side, no reduction; plus the all-reduce of the gradients.
    _, half_step = _opforge_step(opforge, weights, data_parallel=False)
    flat = np.zeros(sum(w.size for w in weights), np.float32)
    _, jit_dp_step = _opforge_step(opforge, weights, data_parallel=True)
    jit_dp_step = opforge.jit(jit_dp_step)
    jit_half_step = opforge.jit(_opforge_step(opforge, weights, data_parallel=False)[1])
    number = _calibrate(comm, lambda: dp_step(x_local, y_local), min_time)
    fns = {
        "dp_step": lambda: dp_step(x_local, y_local),
        "half_steps": lambda: half_step(x_local, y_local),
        "jit_dp_step": lambda: jit_dp_step(x_local, y_local),
        "jit_half_steps": lambda: jit_half_step(x_local, y_local),
        "grad_allreduce": lambda: comm.Allreduce(MPI.IN_PLACE, flat, op=MPI.SUM),
        "tp_step": lambda: tp_step(x_all, y_all),
        # The floor's steps in lockstep (a barrier after each): what waiting for the slower rank costs.
        "half_steps_lockstep": lambda: (half_step(x_local, y_local), comm.Barrier()),
        # One process on the whole batch: rank 0 alone, the others wait at the barrier.
        "one_process_step": lambda: one_step(x_all, y_all) if rank == 0 else None,
    }
    if with_torch:
        fns["ddp_step"], results["torch"] = _torch_ddp_step(rank, size)
    results.update(_timed_together(comm, fns, number, repeats))
    results["floor"] = results["half_steps"] + results["grad_allreduce"]
    results["jit_floor"] = results["jit_half_steps"] + results["grad_allreduce"]
    return results


def _torch_ddp_step(rank: int, size: int):
    """PyTorch DDP (gloo, 1 thread) on this rank: ``(step, version)``, the same network, weights, loss,
    optimizer and batch share as the opforge step. MASTER_ADDR / MASTER_PORT come from the environment."""
    import numpy as np
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=size)
    weights, xs, ys = _data(np)
    net = torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, OUT))
    with torch.no_grad():
        for p, w in zip(net.parameters(), weights):
            p.copy_(torch.from_numpy(w))
    ddp = torch.nn.parallel.DistributedDataParallel(net)
    opt = torch.optim.SGD(ddp.parameters(), lr=LR)
    loss_fn = torch.nn.CrossEntropyLoss()
    per = BATCH // size
    x = torch.from_numpy(xs[rank * per : (rank + 1) * per])
    y = torch.from_numpy(ys[rank * per : (rank + 1) * per].astype(np.int64))

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(ddp(x), y)
        loss.backward()
        opt.step()

    return step, torch.__version__


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _job(mode: str, quick: bool, timeout: float) -> dict:
    from opforge.tools.launch import JOB_VARIABLE, find_mpiexec, kill_job

    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()))
    cmd = [find_mpiexec(), "-n", "2", sys.executable, "-m", "opforge.tools.bench_parallel", f"--{mode}"]
    cmd += ["--quick"] if quick else []
    job = env[JOB_VARIABLE] = uuid.uuid4().hex
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    finally:
        kill_job(job)  # ranks left by a timeout (Hydra starts them in sessions of their own)
    for line in proc.stdout.splitlines():
        if line.startswith(_MARK):
            return json.loads(line[len(_MARK) :])
    raise RuntimeError(f"the {mode} job failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")


def run(quick: bool = False, use_torch: bool = True, timeout: float = 600.0) -> dict:
    """Run the job; returns the measurements (seconds)."""
    if use_torch:
        try:
            import torch  # noqa: F401
        except ImportError:
            use_torch = False
    return _job("worker-torch" if use_torch else "worker", quick, timeout)


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f}"


def render(results: dict) -> str:
    """The Markdown table."""
    import platform

    lines = [
        f"Machine: {platform.machine()}, {os.cpu_count()} cores; {results['ranks']} MPI ranks x 1 thread"
        + (f"; torch {results['torch']}" if "torch" in results else ""),
        "",
        "| case | opforge (us) | reference | reference (us) | result |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in results["allreduce"]:
        ref = row["mpi4py"]
        if "opforge" in row:
            mine = row["opforge"]
            result = f"{(mine - ref) * 1e6:+.1f} us/call" if row["bytes"] <= 4096 else f"{mine / ref:.2f}x"
            lines.append(
                f"| AllReduce float32 {row['size']} | {_us(mine)} | mpi4py Allreduce | {_us(ref)} | {result} |"
            )
        else:
            lines.append(
                f"| AllReduce float32 {row['size']} | (no AllReduce primitive) | mpi4py Allreduce | {_us(ref)} | |"
            )
    dp = results["dp_step"]
    name = "MLP step 784-256-10, batch 128, data parallel"
    lines.append(
        f"| {name} | {_us(dp)} | floor: half-batch steps + all-reduce | {_us(results['floor'])} "
        f"| {dp / results['floor']:.2f}x |"
    )
    lines.append(f"| (floor part) half-batch steps side by side, no reduction | | | {_us(results['half_steps'])} | |")
    lines.append(f"| (floor part) mpi4py all-reduce of the gradients | | | {_us(results['grad_allreduce'])} | |")
    lines.append(
        f"| (diagnostic) half-batch steps in lockstep, a barrier per step | | | "
        f"{_us(results['half_steps_lockstep'])} | |"
    )
    if "jit_dp_step" in results:
        jit_dp, jit_floor = results["jit_dp_step"], results["jit_floor"]
        lines.append(
            f"| {name}, traced (jit, GRAPH_MODE) | {_us(jit_dp)} | floor: traced half-batch steps + all-reduce "
            f"| {_us(jit_floor)} | {jit_dp / jit_floor:.2f}x |"
        )
        lines.append(f"| (floor part) traced half-batch steps side by side | | | {_us(results['jit_half_steps'])} | |")
    if "one_process_step" in results:
        one = results["one_process_step"]
        lines.append(f"| {name} | {_us(dp)} | one process, whole batch | {_us(one)} | {dp / one:.2f}x |")
    if "tp_step" in results and "one_process_step" in results:
        tp, one = results["tp_step"], results["one_process_step"]
        lines.append(
            f"| MLP step 784-256-10, batch 128, tensor parallel (fc1 column-, fc2 row-parallel), eager | {_us(tp)} "
            f"| one process, whole batch | {_us(one)} | {tp / one:.2f}x |"
        )
    if "ddp_step" in results:
        ddp = results["ddp_step"]
        lines.append(f"| {name} | {_us(dp)} | PyTorch DDP (gloo) | {_us(ddp)} | {dp / ddp:.2f}x |")
    lines.append(
        f"| collectives per step | {results['collectives_per_step']} | parameters | {results['params']} | "
        f"buckets of {', '.join(f'{b / 1e6:.2f} MB' for b in results['bucket_bytes'])} |"
    )
    lines.append("")
    lines.append(
        f"The data-parallel step's parameters after one step differ from one process's on the whole batch by "
        f"at most {results['dp_vs_one_process_max_diff']:.2g}"
        + (
            f"; the tensor-parallel step's by at most {results['tp_vs_one_process_max_diff']:.2g}."
            if "tp_vs_one_process_max_diff" in results
            else "."
        )
    )
    return "\n".join(lines) + "\n"


def run_from_args(args) -> int:
    from opforge.tools.launch import MpiNotFoundError

    try:
        results = run(quick=args.quick, use_torch=not args.no_torch)
    except (MpiNotFoundError, RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"opforge bench --suite comm: {e}", file=sys.stderr)
        return 1
    table = render(results)
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table)
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    if "--worker" in argv or "--worker-torch" in argv:
        results = worker(quick, "--worker-torch" in argv)
        rank = int(os.environ.get("PMI_RANK", "0"))
        if rank == 0:
            print(_MARK + json.dumps(results), flush=True)
        return 0
    import argparse

    from opforge.tools.bench import add_arguments

    parser = argparse.ArgumentParser(prog="opforge bench --suite comm")
    add_arguments(parser)
    return run_from_args(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
