"""Run under ``mpiexec -n N`` (N >= 2): ``opforge.mint.distributed`` (MindSpore's torch.distributed-style API):
each collective writes its result into the given tensors, as in PyTorch, checked against NumPy on every rank.
Prints "MINT-DIST-OK" on rank 0 or exits 1."""

import sys

import numpy as np

import opforge
from opforge.mint import distributed as dist

dist.init_process_group()  # MindSpore's default backend name ("hccl"): MPI here
rank, size = dist.get_rank(), dist.get_world_size()
assert dist.is_initialized() and dist.get_backend() == "mpi"


def value(r):
    return np.arange(4, dtype=np.float32) + 10 * r


def check(name, got, want):
    if not np.allclose(np.asarray(got), want):
        sys.exit(f"rank {rank}: {name} gave {got}, want {want}")


t = opforge.Tensor(value(rank))
alias = t
assert dist.all_reduce(t) is None and dist.all_reduce(opforge.Tensor(value(rank)), async_op=True).wait()
check("all_reduce (in place: the alias sees it)", alias.asnumpy(), sum(value(r) for r in range(size)))
t = opforge.Tensor(value(rank))
dist.all_reduce(t, op="max")
check("all_reduce max", t.asnumpy(), value(size - 1))
outs = [opforge.Tensor(np.zeros(4, np.float32)) for _ in range(size)]
dist.all_gather(outs, opforge.Tensor(value(rank)))
for r, out in enumerate(outs):
    check(f"all_gather[{r}]", out.asnumpy(), value(r))
whole = opforge.Tensor(np.zeros((size, 4), np.float32))
dist.all_gather_into_tensor(whole, opforge.Tensor(value(rank)[None]))
check("all_gather_into_tensor", whole.asnumpy(), np.stack([value(r) for r in range(size)]))
block = opforge.Tensor(np.zeros((1, 4), np.float32))
dist.reduce_scatter_tensor(block, opforge.Tensor(np.stack([value(r) for r in range(size)]) * (rank + 1)))
check("reduce_scatter_tensor", block.asnumpy(), value(rank)[None] * sum(r + 1 for r in range(size)))
t = opforge.Tensor(value(rank))
dist.broadcast(t, src=size - 1)
check("broadcast", t.asnumpy(), value(size - 1))
t = opforge.Tensor(value(rank))
dist.reduce(t, dst=0)
check("reduce", t.asnumpy(), sum(value(r) for r in range(size)) if rank == 0 else value(rank))
if rank == 0:
    dist.send(opforge.Tensor(value(7)), dst=1, tag=3)
elif rank == 1:
    got = opforge.Tensor(np.zeros(4, np.float32))
    assert dist.recv(got, src=0, tag=3) == 0
    check("recv", got.asnumpy(), value(7))
dist.barrier()
objects = []
dist.all_gather_object(objects, {"rank": rank})
assert objects == [{"rank": r} for r in range(size)], objects
items = [rank, "x"] if rank == 1 else [None, None]
dist.broadcast_object_list(items, src=1)
assert items == [1, "x"], items
pair = dist.new_group([0, 1])
if rank in (0, 1):
    assert dist.get_process_group_ranks(pair) == [0, 1] and dist.get_world_size(pair) == 2
    t = opforge.Tensor(value(rank))
    dist.all_reduce(t, group=pair)
    check("all_reduce over a new group", t.asnumpy(), value(0) + value(1))
    assert dist.get_global_rank(pair, 1) == 1 and dist.get_group_rank(pair, 0) == 0
# all_to_all: rank i sends rank j a Tensor of j + 1 rows (every rank receives rows of its own count)
sent = [opforge.Tensor(np.full((j + 1, 2), 100 * rank + j, np.float32)) for j in range(size)]
outs = [opforge.Tensor(np.zeros((rank + 1, 2), np.float32)) for _ in range(size)]
assert dist.all_to_all(outs, sent, async_op=True).wait()
for j, out in enumerate(outs):
    check(f"all_to_all[{j}]", out.asnumpy(), np.full((rank + 1, 2), 100 * j + rank))
whole = opforge.Tensor(np.stack([value(rank) + j for j in range(size)]))  # row j to rank j
got = opforge.Tensor(np.zeros((size, 4), np.float32))
dist.all_to_all_single(got, whole)
check("all_to_all_single", got.asnumpy(), np.stack([value(j) + rank for j in range(size)]))
ins = [j + 1 for j in range(size)]  # rank i sends j + 1 rows to rank j; receives rank + 1 rows from each
rows = np.concatenate([np.full((k, 3), 10 * rank + j, np.int64) for j, k in enumerate(ins)])
got = opforge.Tensor(np.zeros(((rank + 1) * size, 3), np.int64))
dist.all_to_all_single(got, opforge.Tensor(rows), [rank + 1] * size, ins)
want = np.concatenate([np.full((rank + 1, 3), 10 * j + rank, np.int64) for j in range(size)])
check("all_to_all_single with split sizes", got.asnumpy(), want)
parts = [opforge.Tensor(np.zeros(4, np.float32)) for _ in range(size)] if rank == size - 1 else None
dist.gather(opforge.Tensor(value(rank)), parts, dst=size - 1)
if rank == size - 1:
    for r, part in enumerate(parts):
        check(f"gather[{r}]", part.asnumpy(), value(r))
t = opforge.Tensor(np.zeros(4, np.float32))
dist.scatter(t, [opforge.Tensor(value(r) * 2) for r in range(size)] if rank == 1 else None, src=1)
check("scatter", t.asnumpy(), value(rank) * 2)
t = opforge.Tensor(np.zeros(4, np.float32))
dist.reduce_scatter(t, [opforge.Tensor(value(j) * (rank + 1)) for j in range(size)])
check("reduce_scatter", t.asnumpy(), value(rank) * sum(r + 1 for r in range(size)))
if rank == 0:
    work = dist.isend(opforge.Tensor(value(5)), dst=1, tag=4)
    assert work.wait() and work.is_completed()
elif rank == 1:
    got = opforge.Tensor(np.zeros(4, np.float32))
    work = dist.irecv(got, src=0, tag=4)
    work.wait()
    check("irecv", got.asnumpy(), value(5))
objects = [None] * size if rank == 0 else None
dist.gather_object(("r", rank), objects, dst=0)
if rank == 0:
    assert objects == [("r", r) for r in range(size)], objects
mine = [None]
dist.scatter_object_list(mine, [{"to": r} for r in range(size)] if rank == 0 else None, src=0)
assert mine == [{"to": rank}], mine
dist.barrier()
if rank == 0:
    print("MINT-DIST-OK", flush=True)
